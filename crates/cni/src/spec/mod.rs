//! The CNI specification's data: versions, network configuration, `CNI_ARGS`, results (with
//! conversion between spec versions) and error objects.

mod args;
pub mod cidr;
mod error;
mod netconf;
mod result;
mod version;

pub use args::{CniArgs, K8sArgs};
pub use cidr::{CidrParseError, parse_cidr};
pub use error::{CniError, code};
pub use netconf::{Attachment, Dns, NetConf, RuntimeConfig, RuntimeDns};
pub use result::{CniResult, Interface, IpConfig, Route};
pub use version::CniVersion;
