//! Client of the Windows Host Compute Network service (HNS) through its v2 API,
//! `computenetwork.dll`.
//!
//! - [`schema`]: the JSON documents (networks, endpoints, namespaces, queries, error records).
//! - [`HcnApi`]: the operations, blocking like the DLL; errors are [`HcnError`] with the
//!   [`Hresult`] HNS returned and its error record.
//! - `HcnClient` (Windows only): the real implementation, loading `computenetwork.dll` at run time
//!   so hosts without HCN (old Windows, Wine) get [`HcnError::Unavailable`] instead of a loader
//!   failure.
//! - [`vnic_name`]: the name HNS gives the host virtual adapter of a network or endpoint.
//! - `fake::FakeHcn` (every platform, cargo feature `fake`, for tests): a stateful stand-in that
//!   behaves like HNS where the agent depends on it, including what a Transparent network does to
//!   the host's adapters. The shipped binaries are built without it.
//!
//! See docs/hcn.md.
//!
//! ```
//! use hcn::fake::{AdapterRoute, FakeHcn, HostAdapter, HostModel, vnic_name};
//! use hcn::schema::{HostComputeNetwork, NetworkPolicy, NetworkType};
//! use hcn::HcnApi;
//!
//! let nic = HostAdapter::physical(
//!     "Ethernet0",
//!     "00-15-5D-AA-BB-CC".parse()?,
//!     vec!["192.168.1.10/24".parse()?],
//!     vec![AdapterRoute { destination: "0.0.0.0/0".parse()?, next_hop: "192.168.1.1".parse()?, metric: 0 }],
//! );
//! let hns = FakeHcn::new(HostModel::with_nic(nic));
//! let network = hns.create_network(&HostComputeNetwork {
//!     name: "antrea-hnsnetwork".into(),
//!     kind: NetworkType::Transparent,
//!     policies: vec![NetworkPolicy::NetAdapterName { network_adapter_name: "Ethernet0".into() }],
//!     ..HostComputeNetwork::default()
//! })?;
//! hns.set_extension_enabled(network.id, hcn::schema::OVS_EXTENSION_ID, true)?;
//! // The NIC's address moved to the network's vNIC.
//! let host = hns.host();
//! assert_eq!(host.adapter(&vnic_name("antrea-hnsnetwork")).unwrap().ipv4[0].to_string(), "192.168.1.10/24");
//! assert!(host.adapter("Ethernet0").unwrap().ipv4.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod api;
mod error;
#[cfg(feature = "fake")]
pub mod fake;
mod guid;
mod hresult;
pub mod schema;
mod vnic;

#[cfg(windows)]
mod ffi;

pub use api::HcnApi;
pub use error::{HcnError, Operation, Result};
#[cfg(windows)]
pub use ffi::HcnClient;
pub use guid::{Guid, GuidParseError};
pub use hresult::Hresult;
pub use vnic::vnic_name;
