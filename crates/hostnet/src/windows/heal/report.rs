//! [`HealReport`]: what one reconciliation pass found in HNS and what it did about it.

use std::fmt;
use std::net::IpAddr;

use hcn::schema::HostComputeEndpoint;
use hcn::{Guid, HcnError};

use crate::windows::CallbackError;

/// An endpoint as one pass saw it on the agent's network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenEndpoint {
    /// The endpoint's HNS ID.
    pub id: Guid,
    /// Its name.
    pub name: String,
    /// Its IP addresses (text HNS returned that is not an address is left out).
    pub ips: Vec<IpAddr>,
    /// The namespace it is attached to; `None` when it was never attached (HNS "state 3").
    pub namespace: Option<Guid>,
}

impl SeenEndpoint {
    /// The parts of an HNS endpoint document a pass needs.
    pub fn from_document(endpoint: &HostComputeEndpoint) -> Self {
        SeenEndpoint {
            id: endpoint.id,
            name: endpoint.name.clone(),
            ips: endpoint
                .ip_configurations
                .iter()
                .filter_map(|c| c.ip_address.parse().ok())
                .collect(),
            namespace: endpoint.host_compute_namespace,
        }
    }

    /// Whether the endpoint is attached to a namespace.
    pub fn is_attached(&self) -> bool {
        self.namespace.is_some()
    }
}

impl fmt::Display for SeenEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "endpoint {:?} ({}", self.name, self.id)?;
        for ip in &self.ips {
            write!(f, ", {ip}")?;
        }
        match self.namespace {
            Some(ns) => write!(f, ", namespace {ns})"),
            None => f.write_str(", never attached)"),
        }
    }
}

/// Why an endpoint on the agent's network is not wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stale {
    /// No Pod owns it: the intent does not name it, and no owned endpoint holds its IP.
    Orphan,
    /// Not named by the intent, but holding an IP of an owned endpoint, `kept`, that exists.
    Duplicate {
        /// The name of the owned endpoint with the same IP, which stays.
        kept: String,
    },
}

/// An endpoint that is not wanted, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleEndpoint {
    /// The endpoint.
    pub endpoint: SeenEndpoint,
    /// Why it is not wanted.
    pub why: Stale,
}

/// What the pass found about the agent's HNS network.
#[derive(Debug)]
pub enum NetworkState {
    /// The network exists.
    Present {
        /// Its HNS ID.
        id: Guid,
    },
    /// No network has the configured name (HNS networks do not survive a reboot); the recreate
    /// callback ran and returned this.
    Missing {
        /// The recreate callback's result.
        recreate: Result<(), CallbackError>,
    },
    /// The network could not be looked up; the error is in [`HealReport::errors`].
    Unknown,
}

/// The HNS action that failed during a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealAction {
    /// Looking the network up by name.
    FindNetwork,
    /// Listing the network's endpoints.
    ListEndpoints,
    /// Reading one endpoint.
    QueryEndpoint,
    /// Detaching a stale endpoint from its namespace before deleting it.
    DetachEndpoint,
    /// Deleting a stale endpoint.
    DeleteEndpoint,
}

impl fmt::Display for HealAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HealAction::FindNetwork => "finding the network",
            HealAction::ListEndpoints => "listing the network's endpoints",
            HealAction::QueryEndpoint => "reading an endpoint",
            HealAction::DetachEndpoint => "detaching a stale endpoint",
            HealAction::DeleteEndpoint => "deleting a stale endpoint",
        })
    }
}

/// An HNS call that failed during a pass. The pass goes on with the other items.
#[derive(Debug, thiserror::Error)]
#[error("{action} ({subject}): {source}")]
pub struct HealError {
    /// What the pass was doing.
    pub action: HealAction,
    /// What it was about: the network name or the endpoint.
    pub subject: String,
    /// HNS's error.
    #[source]
    pub source: HcnError,
}

/// What one pass found and did.
#[derive(Debug)]
pub struct HealReport {
    /// The agent's network.
    pub network: NetworkState,
    /// Stale endpoints deleted in this pass (each was stale in an earlier pass at least the
    /// grace period ago).
    pub removed: Vec<StaleEndpoint>,
    /// Stale endpoints left for now: first seen stale in this pass, or within the grace period.
    pub pending: Vec<StaleEndpoint>,
    /// Owned endpoints still not attached to a namespace after the grace period. Reported only:
    /// the Pod's CNI ADD owns them.
    pub unattached: Vec<SeenEndpoint>,
    /// Intended endpoints that are not on the network: name and intended IP. Reported only: a
    /// CNI ADD recreates them.
    pub missing: Vec<(String, IpAddr)>,
    /// HNS calls that failed.
    pub errors: Vec<HealError>,
}

impl HealReport {
    pub(super) fn new(network: NetworkState) -> Self {
        HealReport {
            network,
            removed: Vec::new(),
            pending: Vec::new(),
            unattached: Vec::new(),
            missing: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// The names of the removed endpoints that were orphans.
    pub fn removed_orphans(&self) -> Vec<&str> {
        self.removed_where(|why| matches!(why, Stale::Orphan))
    }

    /// The names of the removed endpoints that were duplicates.
    pub fn removed_duplicates(&self) -> Vec<&str> {
        self.removed_where(|why| matches!(why, Stale::Duplicate { .. }))
    }

    /// Whether the pass found HNS matching the intent and made no call that failed.
    pub fn is_clean(&self) -> bool {
        matches!(self.network, NetworkState::Present { .. })
            && self.removed.is_empty()
            && self.pending.is_empty()
            && self.unattached.is_empty()
            && self.missing.is_empty()
            && self.errors.is_empty()
    }

    fn removed_where(&self, keep: impl Fn(&Stale) -> bool) -> Vec<&str> {
        self.removed
            .iter()
            .filter(|s| keep(&s.why))
            .map(|s| s.endpoint.name.as_str())
            .collect()
    }
}
