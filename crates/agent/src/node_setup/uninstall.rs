//! `uninstall` (alias `reset-node`): puts the host back as it was before `install-ovs`,
//! `prepare-node` and the agent. In order: the services (the agent's, then `ovs-vswitchd`, then
//! `ovsdb-server`: each stopped and deleted); the host network through the host network backend
//! (Pod interfaces, peer and Service routes, NodePort and SNAT rules, and the uplink given its
//! configuration back, which removes the HNS network); the firewall rules; the files (the CNI
//! conflist and plugin, the OVS database) and the OVS run and log directories when empty (OVS
//! logs are kept). A second run finds nothing and says so.

use hostnet::{HostNetwork, NodePortRules, Outcome, ServiceRoutes};
use winos::Firewall;
use winos::firewall::{TUNNEL_RULE, pod_cidr_rules};

use super::host::{ServiceManager, SetupError};
use super::report::Report;
use super::{HostFiles, NodePaths};
use crate::service::{OVS_SERVICES, SERVICE_NAME, Uninstalled};

/// The OVS bridge whose uplink is given its configuration back.
pub const BRIDGE: &str = "br-int";
/// The gateway interface the Service routes use.
pub const GATEWAY: &str = "antrea-gw0";

/// The host interfaces `uninstall` acts through.
pub struct UninstallHost<'a, H> {
    /// The service control manager.
    pub services: &'a dyn ServiceManager,
    /// The host network backend.
    pub network: &'a H,
    /// The Windows Firewall.
    pub firewall: &'a dyn Firewall,
    /// The files.
    pub files: &'a HostFiles,
}

impl<H> std::fmt::Debug for UninstallHost<'_, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UninstallHost")
            .field("firewall", &self.firewall)
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

/// The services `uninstall` removes, in order: the agent's, then Open vSwitch's, dependents
/// first.
pub fn services() -> [&'static str; 3] {
    [SERVICE_NAME, OVS_SERVICES[1], OVS_SERVICES[0]]
}

/// `uninstall`.
pub async fn uninstall<H: HostNetwork>(
    host: &UninstallHost<'_, H>,
    paths: &NodePaths,
    report: &mut Report,
) -> Result<(), SetupError> {
    for name in services() {
        match host.services.uninstall(name)? {
            Uninstalled::Deleted { stopped: true } => {
                report.changed(format!("stopped and deleted service {name}"))
            }
            Uninstalled::Deleted { stopped: false } => {
                report.changed(format!("deleted service {name}"))
            }
            Uninstalled::Missing => report.unchanged(format!("no service {name}")),
        }
    }
    reset_network(host.network, report).await?;
    let [pod_in, pod_out] = pod_cidr_rules(&[]).map(|rule| rule.name);
    for name in [pod_in, pod_out, TUNNEL_RULE.to_owned()] {
        let removed = host
            .firewall
            .remove_rule(&name)
            .map_err(SetupError::of(format!("remove firewall rule {name}")))?;
        if removed {
            report.changed(format!("removed firewall rule {name}"));
        } else {
            report.unchanged(format!("no firewall rule {name}"));
        }
    }
    for path in [paths.conflist(), paths.cni_plugin(), paths.ovs_db()] {
        if host
            .files
            .remove(&path)
            .map_err(SetupError::of(format!("remove {path}")))?
        {
            report.changed(format!("removed {path}"));
        } else {
            report.unchanged(format!("no file {path}"));
        }
    }
    for dir in [paths.ovs_run_dir(), paths.ovs_log_dir()] {
        if host
            .files
            .remove_empty_dir(&dir)
            .map_err(SetupError::of(format!("remove {dir}")))?
        {
            report.changed(format!("removed empty directory {dir}"));
        } else {
            report.unchanged(format!("no empty directory {dir}"));
        }
    }
    Ok(())
}

/// Undoes the agent's host network: Pod interfaces, routes, NodePorts, SNAT, then the uplink.
async fn reset_network<H: HostNetwork>(network: &H, report: &mut Report) -> Result<(), SetupError> {
    let failed = |what: &str| SetupError::of::<hostnet::Error>(what.to_owned());
    let pods = network
        .pod_interfaces()
        .await
        .map_err(failed("list the Pod interfaces"))?;
    if pods.is_empty() {
        report.unchanged("no Pod interfaces");
    }
    for pod in pods {
        network
            .delete_pod_interface(&pod)
            .await
            .map_err(failed(&format!("delete Pod interface {pod}")))?;
        report.changed(format!("deleted Pod interface {pod}"));
    }
    let peers = network
        .reconcile_peer_routes(&[])
        .await
        .map_err(failed("delete the peer routes"))?;
    route_changes(report, "peer route", &peers.deleted);
    let service = network
        .reconcile_service_routes(&ServiceRoutes {
            interface: GATEWAY.to_owned(),
            destinations: Vec::new(),
        })
        .await
        .map_err(failed("delete the Service routes"))?;
    route_changes(report, "Service route", &service.deleted);
    let node_ports = network
        .reconcile_node_ports(&NodePortRules {
            ports: Default::default(),
            addresses: Vec::new(),
        })
        .await
        .map_err(failed("delete the NodePort rules"))?;
    outcome(report, node_ports, "NodePort rules");
    let snat = network
        .remove_pod_snat()
        .await
        .map_err(failed("remove the Pod SNAT"))?;
    outcome(report, snat, "Pod SNAT");
    match network
        .restore_uplink(BRIDGE)
        .await
        .map_err(failed("give the uplink its configuration back"))?
    {
        Some(nic) => report.changed(format!(
            "removed the HNS network; NIC {} has its configuration back ({})",
            nic.name,
            nic.addresses
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        None => report.unchanged(format!("no uplink taken over by {BRIDGE}")),
    }
    Ok(())
}

fn route_changes(report: &mut Report, what: &str, deleted: &[ipnet::Ipv4Net]) {
    if deleted.is_empty() {
        report.unchanged(format!("no {what}s"));
    }
    for destination in deleted {
        report.changed(format!("deleted {what} to {destination}"));
    }
}

fn outcome(report: &mut Report, outcome: Outcome, what: &str) {
    match outcome {
        Outcome::Changed => report.changed(format!("removed {what}")),
        Outcome::Unchanged => report.unchanged(format!("no {what}")),
    }
}
