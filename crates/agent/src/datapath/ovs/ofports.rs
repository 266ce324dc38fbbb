//! [`PodOfports`]: the OpenFlow port numbers the OVS datapath requests for Pods
//! (`ofport_request`). Knowing a Pod's number before ovs-vswitchd assigns it lets the Pod's
//! flows go to the switch while the port is being added, instead of after.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;

use pipeline::layout::NodePorts;

/// The numbers of the Pods' ports, by port name. Numbers below [`NodePorts::TUNNEL`], the first
/// of the Node's fixed ports.
#[derive(Debug, Default)]
pub struct PodOfports {
    ports: Mutex<Assigned>,
}

#[derive(Debug, Default)]
struct Assigned {
    by_name: BTreeMap<String, u32>,
    used: BTreeSet<u32>,
}

impl PodOfports {
    /// Records that port `name` has number `ofport` (read back from the switch).
    pub fn record(&self, name: &str, ofport: u32) {
        let mut a = self.lock();
        if let Some(old) = a.by_name.insert(name.to_owned(), ofport) {
            a.used.remove(&old);
        }
        a.used.insert(ofport);
    }

    /// The number for port `name`: the one it has, else the lowest free one; `None` when every
    /// number is taken.
    pub fn reserve(&self, name: &str) -> Option<u32> {
        let mut a = self.lock();
        if let Some(ofport) = a.by_name.get(name) {
            return Some(*ofport);
        }
        let ofport = (1..NodePorts::TUNNEL).find(|n| !a.used.contains(n))?;
        a.by_name.insert(name.to_owned(), ofport);
        a.used.insert(ofport);
        Some(ofport)
    }

    /// Forgets port `name` (deleted); its number may be given to another port.
    pub fn release(&self, name: &str) {
        let mut a = self.lock();
        if let Some(ofport) = a.by_name.remove(name) {
            a.used.remove(&ofport);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Assigned> {
        self.ports
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_unique_stable_and_reused_after_release() {
        let ports = PodOfports::default();
        ports.record("old", 1);
        assert_eq!(ports.reserve("a"), Some(2));
        assert_eq!(ports.reserve("b"), Some(3));
        assert_eq!(ports.reserve("a"), Some(2), "a port keeps its number");
        assert_eq!(ports.reserve("old"), Some(1));
        ports.release("a");
        assert_eq!(ports.reserve("c"), Some(2));
        // The switch gave "b" another number: 3 is free again.
        ports.record("b", 7);
        assert_eq!(ports.reserve("d"), Some(3));
    }

    #[test]
    fn the_node_ports_are_never_given() {
        let ports = PodOfports::default();
        for n in 1..NodePorts::TUNNEL {
            ports.record(&format!("p{n}"), n);
        }
        assert_eq!(ports.reserve("one-too-many"), None);
    }
}
