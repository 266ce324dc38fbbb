//! [`ProxyController`]: keeps the [`Datapath`]'s Services equal to what the API server's
//! Service and EndpointSlice stores describe. It remembers the [`Service`] value it last
//! installed per key; each wake-up (the stores changed, or a retry is due) translates again
//! only the objects that changed ([`Translations`]) and sends only the Services whose value
//! differs (an update) or that went away (a removal), so the work is the size of the change.
//! A failed update or removal is kept pending and retried with backoff; a Service the datapath refuses is
//! logged once and not sent again until it changes. Each sync also sets the datapath's
//! Service routes (the Node's own traffic to the Service CIDR, [`ServiceCidr`]) when they
//! differ from what was last set, the first sync always (a restart finds the routes as the OS
//! kept them), and the host's NodePort rules and routes for traffic from outside
//! ([`FromOutside`]) the same way; the `healthCheckNodePort` servers follow the installed
//! Services ([`HealthChecks`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use ipnet::Ipv4Net;
use k8s_openapi::api::core::v1::Service as ApiService;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::reflector::Store;
use model::{Service, ServiceKey};
use tokio_util::sync::CancellationToken;

use super::from_outside::{FromOutside, OutsideTraffic};
use super::health_check::{HealthCheck, HealthChecks};
use super::incremental::Translations;
use super::metrics::ServiceSyncMetrics;
use super::service_cidr::ServiceCidr;
use super::translate::Problem;
use crate::datapath::Datapath;
use crate::error::AgentError;
use crate::kubernetes::reflectors::Reflected;
use crate::tasks::Requeue;

/// What one [`ProxyController::sync`] sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProxySync {
    /// Services installed or changed.
    pub updated: usize,
    /// Services removed.
    pub removed: usize,
}

/// Services for Node `node_name`, from the API server's objects to the datapath.
#[derive(Debug)]
pub struct ProxyController {
    /// The stores' Services, translated and kept.
    translations: Translations,
    /// Services whose last update or removal failed: tried again at the next sync.
    pending: BTreeSet<ServiceKey>,
    /// What the datapath holds, per Service.
    installed: BTreeMap<ServiceKey, Service>,
    /// Services the datapath refused, as they were when refused.
    refused: BTreeMap<ServiceKey, Service>,
    /// Objects that could not be translated, as last logged.
    problems: BTreeMap<String, Problem>,
    /// Which destinations the Node routes into the datapath.
    service_cidr: ServiceCidr,
    /// The destinations last set in the datapath (`None`: not set since the start).
    routed: Option<Vec<Ipv4Net>>,
    /// Whether and where the Node serves Service traffic from outside.
    from_outside: FromOutside,
    /// The NodePorts last set in the datapath (`None`: not set since the start).
    node_ports: Option<OutsideTraffic>,
    /// The `healthCheckNodePort` servers of the installed Services.
    health_checks: HealthChecks,
}

impl ProxyController {
    /// A controller for Node `node_name` that has installed nothing, routing the Node's own
    /// Service traffic as `service_cidr` says and traffic from outside as `from_outside` says.
    pub fn new(
        node_name: &str,
        service_cidr: ServiceCidr,
        from_outside: FromOutside,
    ) -> ProxyController {
        ProxyController {
            translations: Translations::new(node_name),
            pending: BTreeSet::new(),
            installed: BTreeMap::new(),
            refused: BTreeMap::new(),
            problems: BTreeMap::new(),
            service_cidr,
            routed: None,
            from_outside,
            node_ports: None,
            health_checks: HealthChecks::default(),
        }
    }

    /// The Services the stores describe now, for bring-up's first round: from then on the
    /// controller counts them as installed.
    pub fn first_round(
        &mut self,
        services: &Store<ApiService>,
        slices: &Store<EndpointSlice>,
    ) -> Vec<Service> {
        self.translate(services, slices);
        self.installed = self
            .translations
            .all_wanted()
            .map(|s| (s.key.clone(), s.clone()))
            .collect();
        self.installed.values().cloned().collect()
    }

    /// Brings the translations to the stores, logging each problem once (when it appears or
    /// changes); returns the keys whose wanted value may have changed.
    fn translate(
        &mut self,
        services: &Store<ApiService>,
        slices: &Store<EndpointSlice>,
    ) -> BTreeSet<ServiceKey> {
        let (changed, problems) = self.translations.update(&services.state(), &slices.state());
        for (id, problem) in &problems {
            if self.problems.get(id) != Some(problem) {
                tracing::warn!("{problem}; skipped until fixed");
            }
        }
        self.problems = problems;
        changed
    }

    /// Sends the datapath the Services that changed since the last sync (and those whose last
    /// send failed) and removes those that went away. Every change is tried; the first
    /// datapath error is returned (the Services it concerns are sent again by the next sync).
    pub async fn sync<D: Datapath>(
        &mut self,
        datapath: &D,
        services: &Store<ApiService>,
        slices: &Store<EndpointSlice>,
    ) -> Result<ProxySync, AgentError> {
        let mut candidates = self.translate(services, slices);
        candidates.append(&mut self.pending);
        let mut sent = ProxySync::default();
        let mut first_error = None;
        let gone: Vec<ServiceKey> = candidates
            .iter()
            .filter(|key| {
                self.installed.contains_key(*key) && self.translations.wanted(key).is_none()
            })
            .cloned()
            .collect();
        // Removals first: a Service re-created under another name may take the same frontend.
        for key in gone {
            match datapath.remove_service(&key).await {
                Ok(changes) => {
                    self.installed.remove(&key);
                    sent.removed += 1;
                    tracing::info!("Service {key} removed: {} flow mods", changes.changed);
                }
                Err(error) => {
                    tracing::error!("Service {key}: removal failed: {error}");
                    self.pending.insert(key);
                    first_error.get_or_insert(error);
                }
            }
        }
        for key in &candidates {
            let Some(service) = self.translations.wanted(key) else {
                self.refused.remove(key);
                continue;
            };
            if self.installed.get(key) == Some(service) || self.refused.get(key) == Some(service) {
                continue;
            }
            match datapath.update_service(service).await {
                Ok(changes) => {
                    tracing::info!(
                        "Service {key}: {} endpoints, {} flow mods",
                        changes.endpoints,
                        changes.changed
                    );
                    self.refused.remove(key);
                    self.installed.insert(key.clone(), service.clone());
                    sent.updated += 1;
                }
                Err(AgentError::ServiceRefused(reason)) => {
                    tracing::warn!("Service {key} {reason}; skipped until it changes");
                    self.refused.insert(key.clone(), service.clone());
                }
                Err(error) => {
                    tracing::error!("Service {key}: update failed: {error}");
                    self.pending.insert(key.clone());
                    first_error.get_or_insert(error);
                }
            }
        }
        if let Err(error) = self.route(datapath, services).await {
            first_error.get_or_insert(error);
        }
        let checks: BTreeMap<u16, HealthCheck> = self
            .installed
            .values()
            .filter_map(HealthCheck::of)
            .collect();
        let failed = self.health_checks.sync(&checks).await;
        if !failed.is_empty() {
            first_error.get_or_insert(AgentError::HealthCheckListen { ports: failed });
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(sent),
        }
    }

    /// Sets the datapath's Service routes, then its NodePorts, when they differ from what was
    /// last set.
    async fn route<D: Datapath>(
        &mut self,
        datapath: &D,
        services: &Store<ApiService>,
    ) -> Result<(), AgentError> {
        let state = services.state();
        let outside = self.from_outside.wanted(self.installed.values());
        let cidr = self
            .service_cidr
            .destinations(state.iter().map(|s| s.as_ref()));
        self.set_routes(datapath, cidr, &outside).await?;
        if self.node_ports.as_ref() == Some(&outside) {
            return Ok(());
        }
        match datapath
            .set_node_ports(&outside.node_ports, self.from_outside.node_port_addresses())
            .await
        {
            Ok(changed) => {
                if changed {
                    let list: Vec<String> = outside
                        .node_ports
                        .iter()
                        .map(|(protocol, port)| format!("{protocol}/{port}"))
                        .collect();
                    tracing::info!(
                        "NodePorts from outside and from the Node now enter the datapath: [{}]",
                        list.join(", ")
                    );
                }
                self.node_ports = Some(outside);
                Ok(())
            }
            Err(error) => {
                tracing::error!("NodePorts: {error}");
                Err(error)
            }
        }
    }

    /// Sets the datapath's Service routes to the Service CIDR `cidr` and the `/32`s of
    /// `outside` when they differ from what was last set.
    async fn set_routes<D: Datapath>(
        &mut self,
        datapath: &D,
        cidr: Vec<Ipv4Net>,
        outside: &OutsideTraffic,
    ) -> Result<(), AgentError> {
        let mut wanted = cidr.clone();
        wanted.extend(outside.routes.iter().copied());
        wanted.sort();
        wanted.dedup();
        if self.routed.as_ref() == Some(&wanted) {
            return Ok(());
        }
        match datapath.set_service_routes(&wanted).await {
            Ok(changes) => {
                if !changes.is_empty() {
                    let list = |nets: &mut dyn Iterator<Item = &Ipv4Net>| {
                        nets.map(ToString::to_string).collect::<Vec<_>>().join(", ")
                    };
                    tracing::info!(
                        "the Node's own traffic to Services now enters the datapath for [{}] ({})",
                        list(&mut cidr.iter()),
                        self.service_cidr.describe()
                    );
                    if !outside.routes.is_empty() {
                        tracing::info!(
                            "traffic from outside to [{}] (the NodePort address, external and load-balancer IPs) now enters the datapath",
                            list(&mut outside.routes.iter())
                        );
                    }
                }
                self.routed = Some(wanted);
                Ok(())
            }
            Err(error) => {
                tracing::error!("Service routes: {error}");
                Err(error)
            }
        }
    }

    /// Syncs at once, then each time a store changes, until `stop`; each sync's duration goes
    /// to `metrics`. A failed sync is retried by `requeue` with backoff, with no new change
    /// needed; changes arriving meanwhile are folded into that retry (it reads the stores as
    /// they are then).
    pub async fn run<D: Datapath>(
        mut self,
        datapath: Arc<D>,
        services: Reflected<ApiService>,
        slices: Reflected<EndpointSlice>,
        mut requeue: Requeue,
        metrics: ServiceSyncMetrics,
        stop: CancellationToken,
    ) {
        loop {
            let started = Instant::now();
            let synced = self
                .sync(datapath.as_ref(), services.store(), slices.store())
                .await;
            metrics.observe(started.elapsed());
            match synced {
                Ok(_) => requeue.succeeded(),
                Err(error) => {
                    let delay = requeue.failed();
                    tracing::error!("Service sync failed (retried in {delay:?}): {error}");
                }
            }
            loop {
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = services.changed() => {}
                    () = slices.changed() => {}
                    () = requeue.due() => {
                        tracing::info!("retrying the failed Service updates");
                        break;
                    }
                }
                if !requeue.is_owed() {
                    break;
                }
            }
        }
    }
}
