//! Services on the OVS datapath: each Service is one owner (`service:NAMESPACE/NAME`) whose
//! flows and select groups the pipeline's `ServiceRenderer` renders. An update replaces only
//! that owner's set, so it costs the Service's size; the renderer's group ids are committed only
//! once the switch took the change, so a refused or failed install leaves the renderer, the
//! cache and the switch as they were. Bring-up's first round renders every Service given to it
//! the same way, so a restart keeps Service traffic flowing.
//!
//! Updates are settled in batches ([`OvsDatapath::settle`], once per proxy sync): when any
//! installed update changed the switch, the datapath's revalidation is waited for once (no
//! cached megaflow still sends a new connection the old way; the wait is the same for one change
//! or a thousand), then the UDP conntrack entries the updates left stale (connections DNATed to
//! an endpoint a Service no longer uses, or to a frontend that is gone) are flushed, so a
//! client that keeps its source port reaches a remaining endpoint with its next datagram. A
//! failed flush is logged and counted (`Flows::flush_conntrack`) and does not fail the update:
//! the flows are right, the stale entries only live until they idle out. At start, once the
//! first round is installed, the entries ovs-vswitchd's conntrack still holds through an
//! installed frontend to an endpoint it no longer has (removed while the agent was down) are
//! flushed the same way.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

use ipnet::Ipv4Net;
use model::{NodeNetwork, Protocol, Service, ServiceKey};
use pipeline::layout::CT_ZONE;
use pipeline::render::{ServiceRenderer, StaleUdp, service_owner};
use pipeline::{Objects, Owner};

use super::{OvsDatapath, conntrack_dump};
use crate::datapath::ServiceChanges;
use crate::error::AgentError;
use crate::heap;

/// The Services' renderer, with the group ids of the Services installed, and what the updates
/// since the last settle left to do.
#[derive(Debug, Default)]
pub(super) struct ServiceState {
    renderer: ServiceRenderer,
    /// Whether an update since the last settle changed the switch.
    unsettled: bool,
    /// The UDP conntrack entries the updates since the last settle left stale, per Service.
    stale_udp: Vec<(ServiceKey, Vec<StaleUdp>)>,
}

impl ServiceState {
    /// Notes an installed update of Service `key` that sent `changed` mods and left `stale`.
    fn note(&mut self, key: &ServiceKey, changed: usize, stale: Vec<StaleUdp>) {
        self.unsettled |= changed > 0;
        if !stale.is_empty() {
            self.stale_udp.push((key.clone(), stale));
        }
    }

    /// Every owner's objects for `services`, as a new round installs them, with their group ids
    /// recorded; refusals pass the packet-in meter when `metered` (the round installs it with
    /// the Node's objects), and the traffic of `node` itself and of its Pods is told apart
    /// (`ServiceRenderer::set_local_sources`), in this round and every update after. A Service
    /// the renderer refuses, or whose frontend (cluster IP, protocol, port) an earlier one of
    /// `services` already has, is logged and left out: the round carries the others.
    pub(super) fn render_round(
        &mut self,
        services: &[Service],
        metered: bool,
        node: &NodeNetwork,
    ) -> Vec<(Owner, Objects)> {
        self.renderer.set_packet_in_meters(metered);
        self.renderer
            .set_local_sources(&[Ipv4Net::from(node.node_ip.addr()), node.pod_cidr]);
        let mut frontends: BTreeSet<(Ipv4Addr, Protocol, u16)> = BTreeSet::new();
        let mut round = Vec::with_capacity(services.len());
        for service in services {
            let mine: Vec<(Ipv4Addr, Protocol, u16)> = service
                .cluster_ips
                .iter()
                .flat_map(|ip| service.ports.iter().map(|p| (*ip, p.protocol, p.port)))
                .collect();
            if let Some((ip, protocol, port)) = mine.iter().find(|f| frontends.contains(f)) {
                tracing::warn!(
                    "Service {} left out of the first round: another Service already has {ip} {protocol}/{port}",
                    service.key
                );
                continue;
            }
            match self.renderer.upsert(service) {
                Ok(update) => {
                    round.push((service_owner(&service.key), update.objects()));
                    self.renderer.commit(update.record);
                    frontends.extend(mine);
                }
                Err(error) => tracing::warn!("left out of the first round: {error}"),
            }
        }
        round
    }
}

impl<H> OvsDatapath<H> {
    pub(super) async fn install_service(
        &self,
        service: &Service,
    ) -> Result<ServiceChanges, AgentError> {
        let mut state = self.services.lock().await;
        let update = state.renderer.upsert(service)?;
        let diff = self.flows.apply(update.change).await?;
        state.renderer.commit(update.record);
        state.note(&service.key, diff.len(), update.stale_udp);
        drop(state);
        heap::after_change(diff.len());
        Ok(ServiceChanges {
            endpoints: service.ports.iter().map(|p| p.endpoints.len()).sum(),
            changed: diff.len(),
        })
    }

    pub(super) async fn uninstall_service(
        &self,
        key: &ServiceKey,
    ) -> Result<ServiceChanges, AgentError> {
        let mut state = self.services.lock().await;
        let update = state.renderer.remove(key);
        let diff = self.flows.apply(update.change).await?;
        state.renderer.commit(update.record);
        state.note(key, diff.len(), update.stale_udp);
        drop(state);
        heap::after_change(diff.len());
        Ok(ServiceChanges {
            endpoints: 0,
            changed: diff.len(),
        })
    }

    /// Brings the datapath to the Service updates installed since the last settle: waits once
    /// for revalidation when any of them changed the switch, so that no cached megaflow still
    /// sends a new connection the old way, then flushes the UDP conntrack entries they left
    /// stale. In this order, a datagram tracked to a removed endpoint through a stale megaflow
    /// before the wait ended is flushed as well, and the next one is tracked through the new
    /// tables. Returns how long it took.
    pub(super) async fn settle(&self) -> Duration {
        let start = Instant::now();
        let (unsettled, stale) = {
            let mut state = self.services.lock().await;
            (
                std::mem::take(&mut state.unsettled),
                std::mem::take(&mut state.stale_udp),
            )
        };
        if unsettled {
            self.wait_for_revalidation("Service updates").await;
        }
        for (key, stale) in stale {
            self.flush_stale_udp(&key, &stale).await;
        }
        start.elapsed()
    }

    /// Flushes the UDP conntrack entries the last run left through an installed Service's
    /// frontend to an endpoint it no longer has (read from ovs-vswitchd's zone 65520); for
    /// after the first round is installed. A failure to read is logged: the entries idle out.
    /// Without a UDP Service nothing is read (the zone may hold many TCP connections).
    pub async fn flush_udp_left_stale_while_down(&self) {
        if !self.services.lock().await.renderer.installs_udp() {
            tracing::debug!("no UDP Service: no conntrack entry to flush at start");
            return;
        }
        let dump = match self
            .vswitchd
            .call("dpctl/dump-conntrack", &[&format!("zone={CT_ZONE}")])
            .await
        {
            Ok(dump) => dump,
            Err(error) => {
                tracing::warn!(
                    "UDP conntrack of endpoints removed while the agent was down not read (they idle out): {error}"
                );
                return;
            }
        };
        let entries = conntrack_dump::udp_entries(&dump);
        let stale = self
            .services
            .lock()
            .await
            .renderer
            .stale_udp_among(&entries);
        for (key, stale) in stale {
            self.flush_stale_udp(&key, &stale).await;
        }
    }

    /// Flushes the UDP conntrack entries `stale` names; logs what was flushed, or the failure.
    async fn flush_stale_udp(&self, key: &ServiceKey, stale: &[StaleUdp]) {
        if stale.is_empty() {
            return;
        }
        let flushes: Vec<_> = stale.iter().map(StaleUdp::ct_flush).collect();
        match self.flows.flush_conntrack(&flushes).await {
            Ok(()) => {
                for entries in stale {
                    tracing::info!("Service {key}: flushed UDP conntrack to {entries}");
                }
            }
            Err(error) => {
                let names: Vec<String> = stale.iter().map(ToString::to_string).collect();
                tracing::warn!(
                    "Service {key}: UDP conntrack to {} not flushed (its flows are installed; the entries idle out): {error}",
                    names.join(", ")
                );
            }
        }
    }
}
