//! The endpoint half of a pass (blocking HNS calls): list the network's endpoints, sort them
//! into owned and stale, delete stale ones past the grace period, report the rest.
//!
//! Age is measured from the first pass that saw an endpoint in a state, kept in [`Sightings`]
//! between passes: HNS documents carry no creation time.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::time::Duration;

use hcn::schema::{HostComputeQuery, QueryFilter};
use hcn::{Guid, HcnApi, HcnError, Hresult};
use tokio::time::Instant;

use super::intent::EndpointIntent;
use super::report::{HealAction, HealError, HealReport, SeenEndpoint, Stale, StaleEndpoint};

/// When each endpoint was first seen stale, and when each owned endpoint was first seen
/// unattached; only endpoints still in that state at the last pass are kept.
#[derive(Debug, Default)]
pub(super) struct Sightings {
    stale: HashMap<Guid, Instant>,
    unattached: HashMap<Guid, Instant>,
}

/// What a pass over the endpoints works with.
pub(super) struct EndpointPass<'a> {
    pub hns: &'a dyn HcnApi,
    pub network: Guid,
    pub intent: &'a EndpointIntent,
    pub grace: Duration,
    /// No CNI call can be in flight (see [`super::HnsReconciler::reconcile_settled`]): the
    /// grace period is over for everything.
    pub settled: bool,
    pub now: Instant,
}

impl EndpointPass<'_> {
    /// Runs the pass, updating `sightings` and filling `report`.
    pub fn run(&self, sightings: &mut Sightings, report: &mut HealReport) {
        let Some(seen) = self.list(report) else {
            return;
        };
        let present: HashMap<&str, &SeenEndpoint> =
            seen.iter().map(|e| (e.name.as_str(), e)).collect();

        // The intended IP of every owned endpoint that exists: the one to keep for that IP.
        let owner_of_ip: BTreeMap<IpAddr, &str> = self
            .intent
            .iter()
            .filter(|(name, _)| present.contains_key(name))
            .map(|(name, ip)| (ip, name))
            .collect();

        let mut next = Sightings::default();
        for endpoint in &seen {
            if self.intent.ip_of(&endpoint.name).is_some() {
                if !endpoint.is_attached() {
                    self.unattached(endpoint, sightings, &mut next, report);
                }
                continue;
            }
            let why = match endpoint.ips.iter().find_map(|ip| owner_of_ip.get(ip)) {
                Some(kept) => Stale::Duplicate {
                    kept: (*kept).to_owned(),
                },
                None => Stale::Orphan,
            };
            self.stale(
                StaleEndpoint {
                    endpoint: endpoint.clone(),
                    why,
                },
                sightings,
                &mut next,
                report,
            );
        }
        *sightings = next;

        for (name, ip) in self.intent.iter() {
            if !present.contains_key(name) {
                tracing::warn!(endpoint = name, %ip, "HNS has no endpoint for this Pod interface");
                report.missing.push((name.to_owned(), ip));
            }
        }
    }

    /// The endpoints on the network; `None` when they cannot be listed.
    fn list(&self, report: &mut HealReport) -> Option<Vec<SeenEndpoint>> {
        let ids = match self
            .hns
            .enumerate_endpoints(&HostComputeQuery::new(QueryFilter::Network(self.network)))
        {
            Ok(ids) => ids,
            Err(source) => {
                report_error(
                    report,
                    HealAction::ListEndpoints,
                    format!("network {}", self.network),
                    source,
                );
                return None;
            }
        };
        let mut seen = Vec::with_capacity(ids.len());
        for id in ids {
            match self.hns.query_endpoint(id) {
                Ok(document) => seen.push(SeenEndpoint::from_document(&document)),
                // Deleted between the listing and the query.
                Err(e) if e.is_not_found() => {}
                Err(source) => report_error(
                    report,
                    HealAction::QueryEndpoint,
                    format!("endpoint {id}"),
                    source,
                ),
            }
        }
        Some(seen)
    }

    /// An owned endpoint without a namespace: reported once it stayed so for the grace period.
    fn unattached(
        &self,
        endpoint: &SeenEndpoint,
        before: &Sightings,
        next: &mut Sightings,
        report: &mut HealReport,
    ) {
        let first = before.unattached.get(&endpoint.id).copied();
        next.unattached
            .insert(endpoint.id, first.unwrap_or(self.now));
        if self.past_grace(first) {
            tracing::warn!(%endpoint, "Pod endpoint was never attached to a namespace");
            report.unattached.push(endpoint.clone());
        }
    }

    /// A stale endpoint: deleted once it stayed stale for the grace period, else left pending.
    fn stale(
        &self,
        stale: StaleEndpoint,
        before: &Sightings,
        next: &mut Sightings,
        report: &mut HealReport,
    ) {
        let first = before.stale.get(&stale.endpoint.id).copied();
        if !self.past_grace(first) {
            if first.is_none() {
                tracing::info!(endpoint = %stale.endpoint, why = ?stale.why, "stale HNS endpoint seen; deleted if still stale after the grace period");
            }
            next.stale
                .insert(stale.endpoint.id, first.unwrap_or(self.now));
            report.pending.push(stale);
            return;
        }
        match self.remove(&stale.endpoint) {
            Ok(true) => {
                tracing::warn!(endpoint = %stale.endpoint, why = ?stale.why, "deleted stale HNS endpoint");
                report.removed.push(stale);
            }
            Ok(false) => {
                tracing::debug!(endpoint = %stale.endpoint, "stale HNS endpoint already gone")
            }
            Err(error) => {
                // Kept: the next pass tries again.
                next.stale
                    .insert(stale.endpoint.id, first.unwrap_or(self.now));
                tracing::warn!(%error, "could not delete stale HNS endpoint");
                report.errors.push(error);
            }
        }
    }

    /// Whether something first seen at `first` (`None`: in this pass) is past the grace period.
    /// In a settled pass everything is; otherwise something first seen in this pass never is,
    /// even with a zero grace period.
    fn past_grace(&self, first: Option<Instant>) -> bool {
        self.settled || first.is_some_and(|first| self.now.duration_since(first) >= self.grace)
    }

    /// Detaches (when attached) and deletes `endpoint`; `false` when HNS no longer had it.
    fn remove(&self, endpoint: &SeenEndpoint) -> Result<bool, HealError> {
        let failed = |action, source| HealError {
            action,
            subject: endpoint.to_string(),
            source,
        };
        if let Some(namespace) = endpoint.namespace {
            match self.hns.detach_endpoint(namespace, endpoint.id) {
                Ok(()) => {}
                Err(e)
                    if e.is_not_found() || e.hresult() == Some(Hresult::ENDPOINT_NOT_ATTACHED) => {}
                Err(e) => return Err(failed(HealAction::DetachEndpoint, e)),
            }
        }
        match self.hns.delete_endpoint(endpoint.id) {
            Ok(()) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(failed(HealAction::DeleteEndpoint, e)),
        }
    }
}

/// Logs and records a failed HNS call.
pub(super) fn report_error(
    report: &mut HealReport,
    action: HealAction,
    subject: String,
    source: HcnError,
) {
    let error = HealError {
        action,
        subject,
        source,
    };
    tracing::warn!(%error, "HNS call failed during reconciliation");
    report.errors.push(error);
}
