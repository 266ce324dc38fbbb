//! Allocation, release, check and garbage collection over a configuration and its store.

use std::collections::HashSet;
use std::net::IpAddr;

use cni::spec::{CniResult, IpConfig};
use ipnet::IpNet;

use crate::store::{Locked, Owner, Store};
use crate::{IpamConfig, IpamError, RangeSet};

/// The IPAM of one network configuration.
#[derive(Debug, Clone)]
pub struct Ipam {
    config: IpamConfig,
    store: Store,
}

/// One address file of the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// The address.
    pub ip: IpAddr,
    /// Its holder; `None` for an empty or unreadable file.
    pub owner: Option<Owner>,
}

impl Ipam {
    /// Opens the store of `config` (creating its directory).
    pub fn new(config: IpamConfig) -> Result<Ipam, IpamError> {
        let store = Store::open(&config.data_dir, &config.network)?;
        Ok(Ipam { config, store })
    }

    /// The configuration.
    pub fn config(&self) -> &IpamConfig {
        &self.config
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Gives `container_id`/`ifname` one address from every range set, as host-local ADD does,
    /// and returns them with the configured routes. Calling it again for the same container and
    /// interface returns the addresses it already holds (host-local refuses a duplicate
    /// allocation instead). If a range set is exhausted, the addresses taken by this call are
    /// released and the error names the range set.
    pub fn allocate(&self, container_id: &str, ifname: &str) -> Result<CniResult, IpamError> {
        let locked = self.store.lock()?;
        let held: Vec<IpAddr> = owned_by(&locked, container_id, ifname)?;
        let mut taken = Vec::new();
        let mut ips = Vec::new();
        for (index, set) in self.config.range_sets.iter().enumerate() {
            let existing = held
                .iter()
                .find_map(|&ip| set.range_for(ip).map(|r| (r, ip)));
            let found = match existing {
                Some(found) => Some(found),
                None => reserve_next(&locked, set, index, container_id, ifname)?,
            };
            let Some((range, ip)) = found else {
                for ip in taken {
                    locked.remove(ip)?;
                }
                return Err(IpamError::Exhausted {
                    index,
                    ranges: set.to_string(),
                });
            };
            if existing.is_none() {
                taken.push(ip);
            }
            ips.push(IpConfig {
                address: IpNet::new(ip, range.subnet.prefix_len())
                    .expect("a range's address is of its subnet's family"),
                gateway: Some(range.gateway),
                interface: None,
            });
        }
        Ok(CniResult {
            ips,
            routes: self.config.routes.clone(),
            ..CniResult::default()
        })
    }

    /// Releases every address of `container_id`/`ifname` (host-local DEL: exact owner files, or
    /// if there are none, ID-only files of that container). Releasing nothing is not an error.
    /// Returns the released addresses.
    pub fn release(&self, container_id: &str, ifname: &str) -> Result<Vec<IpAddr>, IpamError> {
        let locked = self.store.lock()?;
        let entries = locked.entries()?;
        let exact: Vec<IpAddr> = entries
            .iter()
            .filter(|(_, o)| {
                o.as_ref()
                    .is_some_and(|o| o.is(container_id, ifname) && o.ifname.is_some())
            })
            .map(|(ip, _)| *ip)
            .collect();
        let released = if exact.is_empty() {
            entries
                .iter()
                .filter(|(_, o)| {
                    o.as_ref().is_some_and(|o| {
                        o.ifname.is_none() && o.container_id == container_id.trim()
                    })
                })
                .map(|(ip, _)| *ip)
                .collect()
        } else {
            exact
        };
        for &ip in &released {
            locked.remove(ip)?;
        }
        Ok(released)
    }

    /// Whether `container_id`/`ifname` holds any address (host-local CHECK).
    pub fn check(&self, container_id: &str, ifname: &str) -> Result<bool, IpamError> {
        let locked = self.store.lock()?;
        Ok(!owned_by(&locked, container_id, ifname)?.is_empty())
    }

    /// Releases every address whose holder is not in `valid` (pairs of container ID and
    /// interface name; an ID-only file is kept if its container appears with any interface),
    /// and every empty or unreadable address file. Returns the released addresses.
    pub fn gc(&self, valid: &HashSet<(String, String)>) -> Result<Vec<IpAddr>, IpamError> {
        self.store.lock()?.gc(valid)
    }

    /// Every address file of the store, sorted by address.
    pub fn allocations(&self) -> Result<Vec<Allocation>, IpamError> {
        let locked = self.store.lock()?;
        Ok(locked
            .entries()?
            .into_iter()
            .map(|(ip, owner)| Allocation { ip, owner })
            .collect())
    }
}

fn owned_by(
    locked: &Locked<'_>,
    container_id: &str,
    ifname: &str,
) -> Result<Vec<IpAddr>, IpamError> {
    Ok(locked
        .entries()?
        .into_iter()
        .filter(|(_, o)| o.as_ref().is_some_and(|o| o.is(container_id, ifname)))
        .map(|(ip, _)| ip)
        .collect())
}

fn reserve_next<'s>(
    locked: &Locked<'_>,
    set: &'s RangeSet,
    index: usize,
    container_id: &str,
    ifname: &str,
) -> Result<Option<(&'s crate::Range, IpAddr)>, IpamError> {
    for (range, ip) in set.candidates(locked.last_reserved(index)) {
        if locked.reserve(ip, container_id, ifname, index)? {
            return Ok(Some((range, ip)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ipam(dir: &std::path::Path, ranges: &str) -> Ipam {
        let ranges: serde_json::Value = serde_json::from_str(ranges).unwrap();
        let conf = serde_json::json!({
            "name": "net",
            "ipam": {"type": "host-local", "dataDir": dir.display().to_string(), "ranges": ranges}
        });
        Ipam::new(IpamConfig::from_netconf(&conf).unwrap()).unwrap()
    }

    fn first(r: &CniResult) -> String {
        r.ips[0].address.to_string()
    }

    #[test]
    fn round_robin_idempotent_release_and_exhaustion() {
        let dir = tempfile::tempdir().unwrap();
        let ipam = ipam(dir.path(), r#"[[{"subnet":"10.1.0.0/29"}]]"#);
        let a = ipam.allocate("a", "eth0").unwrap();
        assert_eq!(first(&a), "10.1.0.2/29");
        assert_eq!(a.ips[0].gateway.unwrap().to_string(), "10.1.0.1");
        assert_eq!(
            first(&ipam.allocate("a", "eth0").unwrap()),
            "10.1.0.2/29",
            "same owner, same address"
        );
        assert_eq!(first(&ipam.allocate("b", "eth0").unwrap()), "10.1.0.3/29");
        assert_eq!(
            ipam.release("a", "eth0").unwrap(),
            ["10.1.0.2".parse::<IpAddr>().unwrap()]
        );
        assert!(ipam.release("a", "eth0").unwrap().is_empty());
        assert_eq!(
            first(&ipam.allocate("c", "eth0").unwrap()),
            "10.1.0.4/29",
            "round robin, not lowest free"
        );
        for id in ["d", "e", "f"] {
            ipam.allocate(id, "eth0").unwrap();
        }
        let e = ipam.allocate("g", "eth0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "failed to allocate for range 0: no IP addresses available in range set: 10.1.0.1-10.1.0.6"
        );
        assert!(ipam.check("d", "eth0").unwrap() && !ipam.check("d", "eth1").unwrap());
    }

    #[test]
    fn one_address_per_range_set_and_rollback() {
        let dir = tempfile::tempdir().unwrap();
        let ipam = ipam(
            dir.path(),
            r#"[[{"subnet":"10.1.0.0/24"}],[{"subnet":"10.2.0.0/30"}]]"#,
        );
        let r = ipam.allocate("a", "eth0").unwrap();
        assert_eq!(
            r.ips
                .iter()
                .map(|i| i.address.to_string())
                .collect::<Vec<_>>(),
            ["10.1.0.2/24", "10.2.0.2/30"]
        );
        let e = ipam.allocate("b", "eth0").unwrap_err();
        assert!(matches!(e, IpamError::Exhausted { index: 1, .. }), "{e}");
        assert!(
            !ipam.check("b", "eth0").unwrap(),
            "the range-0 address was rolled back"
        );
    }

    /// The states a crash can leave, in the order `reserve` goes through them.
    #[test]
    fn every_crash_point_leaves_a_usable_store() {
        let dir = tempfile::tempdir().unwrap();
        let ipam = ipam(dir.path(), r#"[[{"subnet":"10.1.0.0/29"}]]"#);
        let store = ipam.store().dir().to_owned();
        // Crash after writing the temporary file, before linking: nothing is reserved.
        std::fs::write(store.join(".tmp.10.1.0.2.77"), b"dead\r\neth0").unwrap();
        assert_eq!(first(&ipam.allocate("a", "eth0").unwrap()), "10.1.0.2/29");
        assert!(!store.join(".tmp.10.1.0.2.77").exists());
        // Crash after linking, before removing the temporary file and recording the last
        // address: the reservation is complete and is honoured.
        std::fs::write(store.join("10.1.0.3"), b"b\r\neth0").unwrap();
        std::fs::hard_link(store.join("10.1.0.3"), store.join(".tmp.10.1.0.3.78")).unwrap();
        assert_eq!(
            first(&ipam.allocate("c", "eth0").unwrap()),
            "10.1.0.4/29",
            "10.1.0.3 stays b's"
        );
        assert!(ipam.check("b", "eth0").unwrap());
        assert_eq!(std::fs::read(store.join("10.1.0.3")).unwrap(), b"b\r\neth0");
        // A half-written last_reserved_ip (host-local writes it in place) is ignored.
        std::fs::write(store.join("last_reserved_ip.0"), b"10.1.").unwrap();
        assert_eq!(first(&ipam.allocate("d", "eth0").unwrap()), "10.1.0.5/29");
        assert_eq!(
            std::fs::read(store.join("last_reserved_ip.0")).unwrap(),
            b"10.1.0.5"
        );
    }

    #[test]
    fn gc_keeps_only_valid_attachments() {
        let dir = tempfile::tempdir().unwrap();
        let ipam = ipam(dir.path(), r#"[[{"subnet":"10.1.0.0/24"}]]"#);
        for (id, ifname) in [("a", "eth0"), ("b", "eth0"), ("a", "eth1")] {
            ipam.allocate(id, ifname).unwrap();
        }
        std::fs::write(ipam.store().dir().join("10.1.0.100"), b"legacy").unwrap();
        std::fs::write(ipam.store().dir().join("10.1.0.101"), b"").unwrap();
        let valid = HashSet::from([
            ("a".to_owned(), "eth0".to_owned()),
            ("legacy".to_owned(), "eth0".to_owned()),
        ]);
        let released: Vec<String> = ipam
            .gc(&valid)
            .unwrap()
            .iter()
            .map(IpAddr::to_string)
            .collect();
        assert_eq!(released, ["10.1.0.3", "10.1.0.4", "10.1.0.101"]);
        let left: Vec<String> = ipam
            .allocations()
            .unwrap()
            .iter()
            .map(|a| a.ip.to_string())
            .collect();
        assert_eq!(left, ["10.1.0.2", "10.1.0.100"]);
    }
}
