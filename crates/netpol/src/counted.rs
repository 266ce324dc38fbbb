//! [`Counted`]: a multiset of addresses that says when an address enters (count 0 → 1) or
//! leaves (1 → 0) it. A rule's peer IPs and a policy's local applied-to IPs are counted: two
//! members (of two groups, or two Pods that share an address) may give the same IP, and the IP
//! stays while one of them does.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Counted {
    counts: BTreeMap<Ipv4Addr, u32>,
}

impl Counted {
    /// One more member gives `ip`; whether `ip` is new.
    pub(crate) fn add(&mut self, ip: Ipv4Addr) -> bool {
        let n = self.counts.entry(ip).or_insert(0);
        *n += 1;
        *n == 1
    }

    /// One member fewer gives `ip`; whether `ip` is gone.
    pub(crate) fn remove(&mut self, ip: Ipv4Addr) -> bool {
        let Some(n) = self.counts.get_mut(&ip) else {
            return false;
        };
        *n -= 1;
        if *n == 0 {
            self.counts.remove(&ip);
            return true;
        }
        false
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The addresses, each once.
    pub(crate) fn ips(&self) -> impl Iterator<Item = Ipv4Addr> + '_ {
        self.counts.keys().copied()
    }
}

impl FromIterator<Ipv4Addr> for Counted {
    fn from_iter<I: IntoIterator<Item = Ipv4Addr>>(iter: I) -> Counted {
        let mut counted = Counted::default();
        for ip in iter {
            counted.add(ip);
        }
        counted
    }
}
