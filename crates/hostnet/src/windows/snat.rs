//! Pod egress SNAT: the host NAT `antrea-nat` on the Pod CIDR. NetNat translates traffic from
//! its internal prefix that leaves the host, so the cluster CIDRs and the egress interface of
//! [`crate::PodSnat`] need no rule of their own (Pod-to-Pod traffic stays in OVS).

use ipnet::{IpNet, Ipv4Net};
use winos::netnat::ANTREA_NAT;

use super::{Backend, os, outcome};
use crate::error::Result;
use crate::model::Outcome;

impl<H, I, N, F> Backend<H, I, N, F>
where
    N: winos::NetNat,
{
    /// `antrea-nat` on `pod_cidr`, replaced when its prefix differs.
    pub(super) fn snat(&self, pod_cidr: Ipv4Net) -> Result<Outcome> {
        let prefix = IpNet::V4(pod_cidr.trunc());
        let ensured = self
            .nat
            .ensure(ANTREA_NAT, prefix)
            .map_err(os(format!("NetNat {ANTREA_NAT} on {prefix}")))?;
        Ok(outcome(ensured != winos::Ensured::Unchanged))
    }

    /// `antrea-nat` removed.
    pub(super) fn no_snat(&self) -> Result<Outcome> {
        let removed = self
            .nat
            .remove(ANTREA_NAT)
            .map_err(os(format!("removing NetNat {ANTREA_NAT}")))?;
        Ok(outcome(removed))
    }
}
