//! [`EndpointIntent`]: the Pod endpoints the agent's interface store says exist.

use std::collections::BTreeMap;
use std::net::IpAddr;

/// The HNS endpoints that should exist on the agent's network: each Pod endpoint's name
/// (`hostnet::naming::endpoint_name`) and its IP, as the agent's interface store records them.
///
/// An endpoint on the network is *owned* when the intent names it; no other endpoint is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EndpointIntent {
    by_name: BTreeMap<String, IpAddr>,
}

impl EndpointIntent {
    /// No endpoint intended.
    pub fn new() -> Self {
        EndpointIntent::default()
    }

    /// Records that endpoint `name` should exist with address `ip` (replacing an earlier `ip`
    /// for the same name).
    pub fn insert(&mut self, name: impl Into<String>, ip: IpAddr) {
        self.by_name.insert(name.into(), ip);
    }

    /// The intended IP of endpoint `name`, when the intent names it.
    pub fn ip_of(&self, name: &str) -> Option<IpAddr> {
        self.by_name.get(name).copied()
    }

    /// Every intended endpoint, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, IpAddr)> {
        self.by_name.iter().map(|(name, ip)| (name.as_str(), *ip))
    }
}

impl<N: Into<String>> FromIterator<(N, IpAddr)> for EndpointIntent {
    fn from_iter<I: IntoIterator<Item = (N, IpAddr)>>(iter: I) -> Self {
        let mut intent = EndpointIntent::new();
        for (name, ip) in iter {
            intent.insert(name, ip);
        }
        intent
    }
}
