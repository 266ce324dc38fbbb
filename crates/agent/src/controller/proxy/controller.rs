//! [`ProxyController`]: keeps the [`Datapath`]'s Services equal to what the API server's
//! Service and EndpointSlice stores describe. It remembers the [`Service`] value it last
//! installed per key; each wake-up (the stores changed, or a retry is due) takes the keys of
//! the objects the reflectors changed ([`Reflected::take_changes`]: the whole stores at the
//! first sync and after a re-list), translates again only the Services those concern
//! ([`Translations`]) and sends only the Services whose value differs (an update) or that went
//! away (a removal), so the work is the size of the change.
//! A failed update or removal is kept pending and retried with backoff; a Service the datapath refuses is
//! logged once and not sent again until it changes. Each sync also sets the datapath's
//! Service routes (the Node's own traffic to the Service CIDR, [`ServiceCidr`]) when they
//! differ from what was last set, the first sync always (a restart finds the routes as the OS
//! kept them), and the host's NodePort rules and routes for traffic from outside
//! ([`FromOutside`]) the same way; the `healthCheckNodePort` servers follow the installed
//! Services ([`HealthChecks`]). Both are worked out from the installed Services that need the
//! host (NodePorts, external or load-balancer IPs, a health check port), kept aside, and the
//! Service CIDR's discovery sees only the changed Services' cluster IPs (it only widens).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ipnet::Ipv4Net;
use k8s_openapi::api::core::v1::Service as ApiService;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use model::{Service, ServiceKey};
use tokio_util::sync::CancellationToken;

use super::from_outside::{FromOutside, OutsideTraffic};
use super::health_check::{HealthCheck, HealthChecks};
use super::incremental::{ObjectChanges, Translations};
use super::metrics::ServiceSyncMetrics;
use super::service_cidr::ServiceCidr;
use crate::cluster::ObjectKey;
use crate::datapath::Datapath;
use crate::error::AgentError;
use crate::kubernetes::reflectors::Reflected;
use crate::kubernetes::store_changes::StoreChanges;
use crate::tasks::Requeue;

/// What one [`ProxyController::sync`] sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProxySync {
    /// Services installed or changed.
    pub updated: usize,
    /// Services removed.
    pub removed: usize,
    /// Of the sync's time, how long the datapath took to settle after its changes were in
    /// place ([`crate::datapath::Datapath::settle_services`], once for all of them).
    pub settled: Duration,
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
    /// The installed Services that need the host: NodePorts, external or load-balancer IPs, a
    /// health check port.
    host_facing: BTreeSet<ServiceKey>,
    /// Services the datapath refused, as they were when refused.
    refused: BTreeMap<ServiceKey, Service>,
    /// Which destinations the Node routes into the datapath.
    service_cidr: ServiceCidr,
    /// Those destinations, after the Services seen so far.
    cidr: Vec<Ipv4Net>,
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
            host_facing: BTreeSet::new(),
            refused: BTreeMap::new(),
            service_cidr,
            cidr: Vec::new(),
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
        services: &Reflected<ApiService>,
        slices: &Reflected<EndpointSlice>,
    ) -> Vec<Service> {
        self.translate(services, slices);
        let wanted: Vec<Service> = self.translations.all_wanted().cloned().collect();
        for service in &wanted {
            self.record_installed(service.clone());
        }
        wanted
    }

    /// Brings the translations to the stores' changes, logging each problem once (when it
    /// appears or changes) and widening the discovered Service CIDR with the changed Services;
    /// returns the keys whose wanted value may have changed.
    fn translate(
        &mut self,
        services: &Reflected<ApiService>,
        slices: &Reflected<EndpointSlice>,
    ) -> BTreeSet<ServiceKey> {
        let changed = self
            .translations
            .apply(changes_of(services), changes_of(slices));
        for problem in self.translations.take_fresh_problems() {
            tracing::warn!("{problem}; skipped until fixed");
        }
        let seen = changed
            .iter()
            .filter_map(|key| self.translations.service_object(key));
        self.cidr = self.service_cidr.destinations(seen.map(AsRef::as_ref));
        changed
    }

    /// How many Service translations the controller made since the start (a Service
    /// translated again counts again): a sync costs its changed Services' translations.
    pub fn translated(&self) -> u64 {
        self.translations.translated()
    }

    /// Notes `service` as installed.
    fn record_installed(&mut self, service: Service) {
        let needs_host = service.ports.iter().any(|p| p.node_port.is_some())
            || !service.external_ips.is_empty()
            || !service.load_balancer_ips.is_empty()
            || service.health_check_node_port.is_some();
        if needs_host {
            self.host_facing.insert(service.key.clone());
        } else {
            self.host_facing.remove(&service.key);
        }
        self.installed.insert(service.key.clone(), service);
    }

    /// Notes the Service `key` as removed.
    fn forget_installed(&mut self, key: &ServiceKey) {
        self.installed.remove(key);
        self.host_facing.remove(key);
    }

    /// The installed Services that need the host.
    fn host_facing(&self) -> impl Iterator<Item = &Service> {
        self.host_facing
            .iter()
            .filter_map(|key| self.installed.get(key))
    }

    /// Sends the datapath the Services that changed since the last sync (and those whose last
    /// send failed) and removes those that went away, then settles the datapath once for all
    /// of them and logs each. Every change is tried; the first datapath error is returned (the
    /// Services it concerns are sent again by the next sync).
    pub async fn sync<D: Datapath>(
        &mut self,
        datapath: &D,
        services: &Reflected<ApiService>,
        slices: &Reflected<EndpointSlice>,
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
        // Each change is logged once the batch has settled: from then on new connections
        // take the new way.
        let mut done = Vec::new();
        // Removals first: a Service re-created under another name may take the same frontend.
        for key in gone {
            match datapath.remove_service(&key).await {
                Ok(changes) => {
                    self.forget_installed(&key);
                    sent.removed += 1;
                    done.push(format!(
                        "Service {key} removed: {} flow mods",
                        changes.changed
                    ));
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
            let service = service.clone();
            match datapath.update_service(&service).await {
                Ok(changes) => {
                    done.push(format!(
                        "Service {key}: {} endpoints, {} flow mods",
                        changes.endpoints, changes.changed
                    ));
                    self.refused.remove(key);
                    self.record_installed(service);
                    sent.updated += 1;
                }
                Err(AgentError::ServiceRefused(reason)) => {
                    tracing::warn!("Service {key} {reason}; skipped until it changes");
                    self.refused.insert(key.clone(), service);
                }
                Err(error) => {
                    tracing::error!("Service {key}: update failed: {error}");
                    self.pending.insert(key.clone());
                    first_error.get_or_insert(error);
                }
            }
        }
        if !done.is_empty() {
            sent.settled = datapath.settle_services().await;
            for line in done {
                tracing::info!("{line}");
            }
        }
        if let Err(error) = self.route(datapath).await {
            first_error.get_or_insert(error);
        }
        let checks: BTreeMap<u16, HealthCheck> =
            self.host_facing().filter_map(HealthCheck::of).collect();
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
    async fn route<D: Datapath>(&mut self, datapath: &D) -> Result<(), AgentError> {
        let outside = self.from_outside.wanted(self.host_facing());
        self.set_routes(datapath, self.cidr.clone(), &outside)
            .await?;
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
    /// needed; changes arriving meanwhile are folded into that retry (it takes their keys and
    /// reads the stores as they are then).
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
            let synced = self.sync(datapath.as_ref(), &services, &slices).await;
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

/// What changed in `reflected`'s store since the last take, with each changed object as the
/// store holds it now.
fn changes_of<K>(reflected: &Reflected<K>) -> ObjectChanges<K>
where
    K: kube::Resource<DynamicType = ()> + Clone + 'static,
{
    match reflected.take_changes() {
        StoreChanges::Everything => ObjectChanges::Whole(reflected.store().state()),
        StoreChanges::Objects(keys) => ObjectChanges::Touched(
            keys.into_iter()
                .map(|key| {
                    let object = reflected.store().get(&key);
                    let namespace = key.namespace.unwrap_or_default();
                    (ObjectKey::new(namespace, key.name), object)
                })
                .collect(),
        ),
    }
}
