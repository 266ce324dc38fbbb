//! A Pod on this Node: its identity and its interface's addresses.

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::MacAddr;
use crate::policy::PodKey;

/// A local Pod: the address and MAC of its interface.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LocalPod {
    pub key: PodKey,
    pub ip: Ipv4Addr,
    pub mac: MacAddr,
}
