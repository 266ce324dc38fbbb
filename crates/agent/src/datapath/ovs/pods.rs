//! A Pod on the OVS datapath: its interface (`hostnet`, configured while the port is made), its
//! container port (named after the endpoint, `external_ids` as Antrea writes them, its OpenFlow
//! port number requested), the kernel kept off the host end (userspace datapath), and its flows,
//! committed in one bundle.
//! Detaching removes the same from any partial state.

use std::time::{Duration, Instant};

use hostnet::{HostNetwork, PodInterface, PodInterfaceSpec};
use model::{LocalPod, PodKey};
use pipeline::Owner;
use pipeline::owners::POD;
use pipeline::render::pod_flows;

use super::OvsDatapath;
use super::port_added::first_port_number;
use crate::datapath::PodAttach;
use crate::datapath::step_clock::StepClock;
use crate::error::AgentError;
use crate::ovs::{PortWant, antrea_type, container_id as ids};

/// How long OVS may take to give a Pod's port an OpenFlow port number.
const OFPORT_WAIT: Duration = Duration::from_secs(20);

impl<H: HostNetwork> OvsDatapath<H> {
    /// The interface's pair first ([`HostNetwork::add_pod_interface`]); then, at the same time,
    /// its configuration, the port (with the OpenFlow port number requested), the Pod's flows
    /// for that number, and the kernel block; returns once all four are confirmed, the port by
    /// the first of ovs-vswitchd's reports ([`first_port_number`]). Should ovs-vswitchd give
    /// the port another number, the flows follow it. A retry after an attach cut short finds the
    /// pair it made kept ([`HostNetwork::add_pod_interface`]), so a port made on it stays valid.
    pub(super) async fn attach(
        &self,
        pod: &PodAttach,
        clock: &mut StepClock,
    ) -> Result<PodInterface, AgentError> {
        let spec = &pod.interface;
        let (created, _) = self.host.add_pod_interface(spec).await?;
        clock.lap("interface");
        let host_ifname = spec.host_ifname.as_str();
        let requested = self
            .ofports
            .reserve(host_ifname)
            .ok_or(AgentError::NoFreeOfport)?;
        let mut port = PortWant::new(host_ifname, antrea_type::CONTAINER);
        port.interface_type = H::POD_PORT_TYPE.to_owned();
        port.ofport_request = u16::try_from(requested).ok();
        for (k, v) in [
            (ids::CONTAINER_ID, pod.container_id.clone()),
            (ids::POD_NAME, pod.key.name.to_string()),
            (ids::POD_NAMESPACE, pod.key.namespace.to_string()),
            (ids::IP_ADDRESS, spec.address.addr().to_string()),
            (ids::ATTACHED_MAC, created.container_mac.to_string()),
            (ids::IPAM_STORE, pod.ipam_store.clone()),
        ] {
            port.external_ids.insert(k.to_owned(), v);
        }
        if spec.ifname != "eth0" {
            port.external_ids
                .insert(ids::IF_DEV.to_owned(), spec.ifname.clone());
        }
        let local = LocalPod {
            key: pod.key.clone(),
            ip: spec.address.addr(),
            mac: created.container_mac,
        };
        let owner = Owner::new(POD, &pod.key);
        // Both reports of the port's number are listened to before the port is created: the
        // switch's port status, and the watch on the ofport, registered while the port is
        // created so that it arrives in the monitor's next update.
        let statuses = self.flows.connection().port_status();
        let port_ready = async {
            let (watch, created) = tokio::join!(
                self.bridge.watch_ofport(host_ifname),
                self.bridge.ensure_port(&port)
            );
            let (watch, _) = (watch?, created?);
            let written = Instant::now();
            let ofport = first_port_number(statuses, host_ifname, watch.wait(OFPORT_WAIT))
                .await
                .map_err(AgentError::ovsdb(format!("OpenFlow port of {host_ifname}")))?;
            Ok::<_, AgentError>((ofport, written, Instant::now()))
        };
        let flows_ready = async {
            self.flows
                .set(owner.clone(), pod_flows(&self.network, &local, requested))
                .await?;
            Ok::<_, AgentError>(Instant::now())
        };
        let blocked = async {
            if self.netdev {
                self.host.block_kernel_ingress(host_ifname).await?;
            }
            Ok::<_, AgentError>(Instant::now())
        };
        let configured = async {
            self.host.configure_pod_interface(spec).await?;
            Ok::<_, AgentError>(Instant::now())
        };
        let (configured, port, flows, block) =
            tokio::join!(configured, port_ready, flows_ready, blocked);
        let (configured, (ofport, written, numbered), flows, block) =
            (configured?, port?, flows?, block?);
        clock.part("configured", configured);
        clock.part("ovsdb", written);
        clock.part("ofport", numbered);
        clock.part("flows", flows);
        clock.part("block", block);
        clock.lap("attach");
        if ofport != requested {
            tracing::warn!(
                "port {host_ifname} got OpenFlow port {ofport}, not the {requested} requested: its flows follow"
            );
            self.ofports.record(host_ifname, ofport);
            self.flows
                .set(owner, pod_flows(&self.network, &local, ofport))
                .await?;
            clock.lap("flows again");
        }
        Ok(created)
    }

    /// Flows, OVS port, kernel block, interface; each step succeeds when its object is gone.
    pub(super) async fn detach(
        &self,
        key: Option<&PodKey>,
        name: Option<&str>,
    ) -> Result<(), AgentError> {
        if let Some(key) = key {
            self.flows.remove(Owner::new(POD, key)).await?;
        }
        if let Some(name) = name {
            self.bridge.delete_port(name).await?;
            self.ofports.release(name);
            if self.netdev {
                self.host.unblock_kernel_ingress(name).await?;
            }
            self.host.delete_pod_interface(name).await?;
        }
        Ok(())
    }

    /// The interface as `created` describes it.
    pub(super) async fn check(
        &self,
        spec: &PodInterfaceSpec,
        created: &PodInterface,
    ) -> Result<(), AgentError> {
        Ok(self.host.check_pod_interface(spec, created).await?)
    }
}
