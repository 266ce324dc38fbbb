//! The CNI specification's data: versions, network configuration, `CNI_ARGS`, results (with
//! conversion between spec versions) and error objects.

mod args;
mod error;
mod netconf;
mod prefix;
mod result;
mod version;

pub use args::{CniArgs, K8sArgs};
pub use error::{CniError, code};
pub use netconf::{Attachment, Dns, NetConf, RuntimeConfig, RuntimeDns};
pub use prefix::{IpPrefix, IpPrefixParseError, ip_from_bits, ip_to_bits};
pub use result::{CniResult, Interface, IpConfig, Route};
pub use version::CniVersion;
