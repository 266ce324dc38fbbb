//! A Pod on this Node, attached to the bridge by its own port.

use std::fmt;
use std::net::Ipv4Addr;

use super::addr::MacAddr;

/// A Pod's identity: `namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodKey {
    pub namespace: String,
    pub name: String,
}

impl PodKey {
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> PodKey {
        PodKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// A local Pod: its interface's address and the OpenFlow port of its host side.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LocalPod {
    pub key: PodKey,
    pub ip: Ipv4Addr,
    pub mac: MacAddr,
    pub ofport: u32,
}
