//! Client of the Windows Host Compute Network service (HNS) through its v2 API,
//! `computenetwork.dll`.
//!
//! - [`schema`]: the JSON documents (networks, endpoints, namespaces, queries, error records).
//! - [`HcnApi`]: the operations, blocking like the DLL; errors are [`HcnError`] with the
//!   [`Hresult`] HNS returned and its error record.
//! - `HcnClient` (Windows only): the real implementation, loading `computenetwork.dll` at run time
//!   so hosts without HCN (old Windows, Wine) get [`HcnError::Unavailable`] instead of a loader
//!   failure.
//! - [`fake::FakeHcn`] (every platform): a stateful stand-in that behaves like HNS where the agent
//!   depends on it, including what a Transparent network does to the host's adapters.
//!
//! See docs/hcn.md.

mod api;
mod error;
pub mod fake;
mod guid;
mod hresult;
mod mac;
pub mod schema;

#[cfg(windows)]
mod ffi;

pub use api::HcnApi;
pub use error::{HcnError, Operation, Result};
#[cfg(windows)]
pub use ffi::HcnClient;
pub use guid::{Guid, GuidParseError};
pub use hresult::Hresult;
pub use mac::{MacAddress, MacParseError};
