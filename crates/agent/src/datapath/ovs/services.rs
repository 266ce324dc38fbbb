//! Services on the OVS datapath: each Service is one owner (`service:NAMESPACE/NAME`) whose
//! flows and select groups the pipeline's `ServiceRenderer` renders. An update replaces only
//! that owner's set, so it costs the Service's size; the renderer's group ids are committed only
//! once the switch took the change, so a refused or failed install leaves the renderer, the
//! cache and the switch as they were. Bring-up's first round renders every Service given to it
//! the same way, so a restart keeps Service traffic flowing.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use model::{Protocol, Service, ServiceKey};
use pipeline::render::{ServiceRenderer, service_owner};
use pipeline::{Objects, Owner};

use super::OvsDatapath;
use crate::datapath::ServiceChanges;
use crate::error::AgentError;

/// The Services' renderer, with the group ids of the Services installed.
#[derive(Debug, Default)]
pub(super) struct ServiceState {
    renderer: ServiceRenderer,
}

impl ServiceState {
    /// Every owner's objects for `services`, as a new round installs them, with their group ids
    /// recorded. A Service the renderer refuses, or whose frontend (cluster IP, protocol, port)
    /// an earlier one of `services` already has, is logged and left out: the round carries the
    /// others.
    pub(super) fn render_round(&mut self, services: &[Service]) -> Vec<(Owner, Objects)> {
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
                    self.renderer.commit(update.groups);
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
        state.renderer.commit(update.groups);
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
        state.renderer.commit(update.groups);
        Ok(ServiceChanges {
            endpoints: 0,
            changed: diff.len(),
        })
    }
}
