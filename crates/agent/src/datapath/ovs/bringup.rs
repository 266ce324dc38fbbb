//! Node bring-up, in Antrea's order for Windows Nodes (applied to every OS): find the transport
//! NIC; create the bridge (datapath id and LOCAL MAC from the NIC); connect OpenFlow and put the
//! flows of a new round in place *before* the NIC joins the secure-mode bridge; attach the NIC
//! as the uplink and move its configuration to LOCAL; gateway; tunnel; SNAT and peer routes.
//! The peers', the NetworkPolicy and the Services' flows bring-up is given are part of that first
//! round, so a restart never leaves an isolated Pod open nor a Service without its flows.
//!
//! Every step is idempotent and reports whether it changed anything; a restart with everything
//! in place writes nothing to OVSDB, sends no flow mod and changes nothing on the host.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use hostnet::{GatewayConfig, HostNetwork, NicConfig, Outcome, TransportSelector};
use ipnet::Ipv4Net;
use model::{NodeNetwork, PeerNode, Service, TrafficMode, TunnelType};
use netpol::Snapshot;
use pipeline::layout::NodePorts;

use super::{OvsDatapath, OvsOptions};
use crate::config::{self, AgentConfig, DatapathType, TrafficEncapMode};
use crate::controller::log_changes;
use crate::datapath::{Datapath, PeerChanges};
use crate::error::AgentError;
use crate::flows::{Flows, RoundOutcome};
use crate::node::{NodeInfo, gateway_mac};
use crate::ovs::unixctl::VswitchdControl;
use crate::ovs::{BridgeWant, OvsBridge, PortWant, antrea_type};
use crate::supervise::Takeover;

/// How long OVS may take to create a device or assign a port.
const OVS_WAIT: Duration = Duration::from_secs(20);

/// The tunnel port's name.
pub const TUNNEL_PORT: &str = "antrea-tun0";

/// A Node that is up.
#[derive(Debug)]
pub struct RunningNode<H> {
    pub info: NodeInfo,
    /// The datapath, with the peers and the NetworkPolicy given to bring-up in force.
    pub datapath: Arc<OvsDatapath<H>>,
    pub host: Arc<H>,
    /// The physical NIC, now the bridge's uplink.
    pub uplink: String,
    /// The MTU of the gateway and of Pod interfaces.
    pub pod_mtu: u32,
    /// Host changes made during bring-up.
    pub host_changes: u32,
    /// The takeover this run made before the bridge (Windows: the HNS network on the NIC);
    /// `None` when it found it in place, or when the OS has no such step (Linux).
    pub takeover: Option<Takeover>,
}

/// Host-side changes counted across steps.
#[derive(Debug, Default)]
struct HostChanges(u32);

impl HostChanges {
    fn note(&mut self, step: &str, outcome: Outcome) {
        match outcome {
            Outcome::Changed => {
                self.0 += 1;
                tracing::info!("{step}: done");
            }
            Outcome::Unchanged => tracing::info!("{step}: unchanged"),
        }
    }
}

impl HostChanges {
    /// Counts a peer reconciliation's route and SNAT changes.
    fn count_peers(&mut self, changes: &PeerChanges) {
        self.0 += u32::from(!changes.routes.is_empty()) + u32::from(changes.snat_changed);
    }
}

fn log_ovs(step: &str, outcome: Outcome) {
    match outcome {
        Outcome::Changed => tracing::info!("{step}: written to OVSDB"),
        Outcome::Unchanged => tracing::info!("{step}: unchanged"),
    }
}

/// How the configuration says to find the transport interface.
pub fn transport_selector(config: &AgentConfig, node: &NodeInfo) -> TransportSelector {
    if let Some(name) = &config.transport_interface {
        return TransportSelector::InterfaceName(name.clone());
    }
    let cidrs: Vec<Ipv4Net> = config
        .transport_interface_cidrs
        .iter()
        .filter_map(|net| match net {
            ipnet::IpNet::V4(v4) => Some(*v4),
            ipnet::IpNet::V6(_) => None,
        })
        .collect();
    if cidrs.is_empty() {
        TransportSelector::NodeIp(node.ip)
    } else {
        TransportSelector::Cidrs(cidrs)
    }
}

/// The pipeline's traffic mode for the configuration.
pub fn traffic_mode(config: &AgentConfig) -> TrafficMode {
    let tunnel = match config.tunnel_type {
        config::TunnelType::Geneve => TunnelType::Geneve,
        config::TunnelType::Vxlan => TunnelType::Vxlan,
    };
    match config.traffic_encap_mode {
        TrafficEncapMode::Encap => TrafficMode::Encap(tunnel),
        TrafficEncapMode::NoEncap => TrafficMode::NoEncap,
        TrafficEncapMode::Hybrid => TrafficMode::Hybrid(tunnel),
    }
}

/// Waits until the OS shows interface `name` (OVS creates internal ports' devices shortly
/// after the port row).
async fn wait_for_device(name: &str) -> Result<(), AgentError> {
    let deadline = tokio::time::Instant::now() + OVS_WAIT;
    while !device_exists(name) {
        if tokio::time::Instant::now() >= deadline {
            return Err(AgentError::InterfaceMissing {
                name: name.to_owned(),
                waited: OVS_WAIT,
            });
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

#[cfg(target_os = "linux")]
fn device_exists(name: &str) -> bool {
    std::path::Path::new("/sys/class/net").join(name).exists()
}

/// On Windows the vNICs of internal ports are looked up by the host network backend itself.
#[cfg(not(target_os = "linux"))]
fn device_exists(_name: &str) -> bool {
    true
}

/// Brings the Node up with `peers`, `policy` and `services` in force from the first flow on;
/// see the module documentation for the order.
pub async fn bring_up<H: HostNetwork + 'static>(
    config: &AgentConfig,
    info: &NodeInfo,
    peers: &[PeerNode],
    policy: &Snapshot,
    services: &[Service],
    host: Arc<H>,
) -> Result<RunningNode<H>, AgentError> {
    let bridge_name = config.ovs_bridge.as_str();

    // 1. The transport NIC; after a restart its configuration is already on the bridge.
    let selector = transport_selector(config, info);
    let found = host.find_transport_interface(&selector).await?;
    let (nic_name, nic) = if found.name == bridge_name {
        match host.find_uplink(bridge_name).await? {
            Some(uplink) => (uplink.nic, uplink.bridge),
            None => {
                return Err(AgentError::UplinkUnknown {
                    bridge: bridge_name.to_owned(),
                });
            }
        }
    } else {
        (found.name.clone(), found.clone())
    };
    let node_ip = node_address(&nic, info.ip).ok_or_else(|| AgentError::NoTransportAddress {
        nic: nic_name.clone(),
    })?;
    tracing::info!(
        "transport interface {nic_name}: MAC {}, MTU {}, Node IP {node_ip}{}",
        nic.mac,
        nic.mtu,
        if found.name == bridge_name {
            " (already on the bridge)"
        } else {
            ""
        }
    );
    let transport_mtu = u16::try_from(nic.mtu).unwrap_or(u16::MAX);
    let pod_mtu = u32::from(config.pod_mtu(transport_mtu, false));

    // What must exist before the bridge: nothing on Linux; on Windows the uplink takeover,
    // whose HNS vNIC becomes the bridge's LOCAL port. If this run made it and a step up to the
    // flows fails, it is undone so the Node keeps its network.
    let mut changes = HostChanges::default();
    let prepared = host.prepare_bridge(&found, bridge_name).await?;
    changes.note(&format!("{bridge_name} prepared from {nic_name}"), prepared);
    let early = async {
        // 2. The bridge, its datapath id and LOCAL MAC from the NIC, LOCAL's MTU pinned.
        let bridge = OvsBridge::connect(config.ovsdb_endpoint(), bridge_name).await?;
        let datapath_type = match config.ovs_datapath_type {
            DatapathType::System => "system",
            DatapathType::Netdev => "netdev",
        };
        let want = BridgeWant {
            name: bridge_name.to_owned(),
            datapath_type: datapath_type.to_owned(),
            mac: nic.mac,
        };
        log_ovs(
            &format!("bridge {bridge_name}"),
            bridge.ensure_bridge(&want).await?,
        );
        log_ovs(
            &format!("MTU {} of LOCAL {bridge_name}", nic.mtu),
            bridge.ensure_mtu_request(bridge_name, nic.mtu).await?,
        );
        wait_for_device(bridge_name).await?;

        // 3. OpenFlow, and every desired flow (Node, peers, Pods already attached, NetworkPolicy,
        //    Services) in place before the NIC joins the bridge: in secure mode an empty table
        //    cuts the Node off.
        let gateway_ip = info.gateway_ip();
        let network = NodeNetwork {
            node_ip,
            node_mac: nic.mac,
            pod_cidr: info.pod_cidr,
            gateway_ip,
            gateway_mac: gateway_mac(gateway_ip),
            mode: traffic_mode(config),
        };
        let recorded = Flows::recorded_round(&bridge).await?;
        let flows = Arc::new(Flows::connect(config.bridge_mgmt_endpoint(), OVS_WAIT).await?);
        let options = OvsOptions {
            netdev: config.ovs_datapath_type == DatapathType::Netdev,
            gateway_if: config.host_gateway.clone(),
            snat: !config.no_snat,
            vswitchd: VswitchdControl::new(config.platform, &config.ovs_run_dir),
        };
        let datapath = OvsDatapath::new(network, bridge, flows, host.clone(), options);
        let desired = datapath.first_round(peers, policy, services).await?;
        match datapath
            .flows
            .start_round(recorded, &desired, &datapath.bridge)
            .await?
        {
            RoundOutcome::Unchanged(round) => {
                tracing::info!("flows: unchanged ({round} already installed)")
            }
            RoundOutcome::Replaced {
                previous: Some(previous),
                round,
            } => {
                tracing::info!("flows: installed as {round}, leftovers of {previous} deleted")
            }
            RoundOutcome::Replaced {
                previous: None,
                round,
            } => tracing::info!("flows: installed as {round}"),
        }
        datapath.flush_udp_left_stale_while_down().await;
        Ok::<_, AgentError>(datapath)
    }
    .await;
    let datapath = match early {
        Ok(parts) => parts,
        Err(error) if prepared == Outcome::Changed => {
            let restored = match host.restore_uplink(bridge_name).await {
                Ok(_) => "yes".to_owned(),
                Err(e) => format!("no ({e})"),
            };
            return Err(AgentError::RolledBack {
                error: Box::new(error),
                restored,
            });
        }
        Err(error) => return Err(error),
    };

    // 4.–7. The NIC becomes the uplink, then gateway, tunnel, peers. If this run took the NIC
    //        over and a later step fails, the NIC gets its configuration back.
    let fresh = found.name != bridge_name;
    let mut steps = Steps {
        config,
        datapath: &datapath,
        pod_mtu,
        changes,
    };
    let result = steps.attach(&found, &nic_name, peers).await;
    let host_changes = steps.changes.0;
    if let Err(error) = result {
        if !fresh {
            return Err(error);
        }
        let restored = restore_nic(&datapath.bridge, &*host, &nic_name, bridge_name).await;
        return Err(AgentError::RolledBack {
            error: Box::new(error),
            restored,
        });
    }
    Ok(RunningNode {
        info: info.clone(),
        datapath: Arc::new(datapath),
        host,
        uplink: nic_name,
        pod_mtu,
        host_changes,
        takeover: (prepared == Outcome::Changed).then(|| Takeover {
            default_gateway: found.default_gateway(),
        }),
    })
}

/// The NIC's address holding `ip`, else its first one.
fn node_address(nic: &NicConfig, ip: Ipv4Addr) -> Option<Ipv4Net> {
    nic.addresses
        .iter()
        .find(|a| a.addr() == ip)
        .or_else(|| nic.addresses.first())
        .copied()
}

/// The steps from attaching the NIC on, with what they share.
struct Steps<'a, H> {
    config: &'a AgentConfig,
    datapath: &'a OvsDatapath<H>,
    pod_mtu: u32,
    changes: HostChanges,
}

impl<'a, H: HostNetwork + 'static> Steps<'a, H> {
    async fn attach(
        &mut self,
        found: &NicConfig,
        nic: &str,
        peers: &[PeerNode],
    ) -> Result<(), AgentError> {
        self.uplink(found, nic).await?;
        self.gateway().await?;
        self.tunnel().await?;
        let peer_changes = self.datapath.set_peers(peers).await?;
        log_changes(&peer_changes);
        self.changes.count_peers(&peer_changes);
        Ok(())
    }

    fn bridge(&self) -> &'a OvsBridge {
        &self.datapath.bridge
    }

    fn host(&self) -> &'a H {
        &self.datapath.host
    }

    fn network(&self) -> &'a NodeNetwork {
        &self.datapath.network
    }

    /// 4. The NIC as uplink port 32770, the kernel kept off it (userspace datapath), its
    ///    configuration moved to LOCAL.
    async fn uplink(&mut self, found: &NicConfig, nic: &str) -> Result<(), AgentError> {
        let bridge_name = self.bridge().name();
        let mut uplink = PortWant::new(nic, antrea_type::UPLINK);
        uplink.ofport_request = Some(NodePorts::UPLINK as u16);
        log_ovs(
            &format!("uplink port {nic}"),
            self.bridge().ensure_port(&uplink).await?,
        );
        let ofport = self.bridge().wait_for_ofport(nic, OVS_WAIT).await?;
        if ofport != NodePorts::UPLINK {
            tracing::warn!(
                "uplink {nic} has OpenFlow port {ofport}, not {}: the flows expect {}",
                NodePorts::UPLINK,
                NodePorts::UPLINK
            );
        }
        self.no_flood(nic, ofport).await?;
        if self.config.ovs_datapath_type == DatapathType::Netdev {
            self.changes.note(
                &format!("kernel ingress block on {nic}"),
                self.host().block_kernel_ingress(nic).await?,
            );
        }
        let (_, outcome) = self.host().take_over_uplink(found, bridge_name).await?;
        self.changes.note(
            &format!("configuration of {nic} moved to {bridge_name}"),
            outcome,
        );
        Ok(())
    }

    /// The uplink's `no-flood` port flag, as Antrea sets it. Only an OpenFlow 1.0 port mod
    /// changes it and OVS's 1.5 port description does not show it, so it is set on every run:
    /// setting a set flag changes nothing, and it is neither an OVSDB write nor a flow mod.
    async fn no_flood(&self, nic: &str, ofport: u32) -> Result<(), AgentError> {
        let endpoint = self.config.bridge_mgmt_endpoint();
        let ports = self
            .datapath
            .flows
            .connection()
            .port_desc()
            .await
            .map_err(|source| AgentError::OpenFlow {
                endpoint: endpoint.to_string(),
                source,
            })?;
        let port = ports.iter().find(|p| p.port_no == ofport).ok_or_else(|| {
            AgentError::PortNotOnSwitch {
                name: nic.to_owned(),
                ofport,
            }
        })?;
        openflow::of10::set_port_no_flood(&endpoint, ofport, port.hw_addr, true, OVS_WAIT)
            .await
            .map_err(|source| AgentError::NoFlood {
                nic: nic.to_owned(),
                source,
            })?;
        tracing::info!("uplink {nic} (port {ofport}): no-flood set");
        Ok(())
    }

    /// 5. The gateway port 32769 with its MAC and MTU, and the first IP of the Pod CIDR.
    async fn gateway(&mut self) -> Result<(), AgentError> {
        let gw = self.config.host_gateway.as_str();
        let mut gateway = PortWant::new(gw, antrea_type::GATEWAY);
        gateway.interface_type = "internal".into();
        gateway.ofport_request = Some(NodePorts::GATEWAY as u16);
        gateway.mtu_request = Some(self.pod_mtu);
        gateway.mac = Some(self.network().gateway_mac.to_string());
        log_ovs(
            &format!("gateway port {gw}"),
            self.bridge().ensure_port(&gateway).await?,
        );
        wait_for_device(gw).await?;
        // The prefix length is an Ipv4Net's, so at most 32.
        let address = Ipv4Net::new_assert(
            self.network().gateway_ip,
            self.network().pod_cidr.prefix_len(),
        );
        let config = GatewayConfig {
            name: gw.to_owned(),
            address,
            mac: Some(self.network().gateway_mac),
            mtu: self.pod_mtu,
        };
        let (_, outcome) = self.host().configure_gateway(&config).await?;
        self.changes
            .note(&format!("gateway {gw} {address}"), outcome);
        self.bridge().wait_for_ofport(gw, OVS_WAIT).await?;
        Ok(())
    }

    /// 6. The flow-based tunnel port 32768; none in noEncap.
    async fn tunnel(&mut self) -> Result<(), AgentError> {
        let Some(tunnel) = self.network().mode.tunnel() else {
            if self.bridge().delete_port(TUNNEL_PORT).await? {
                tracing::info!("tunnel port {TUNNEL_PORT} removed (noEncap)");
            }
            return Ok(());
        };
        let mut port = PortWant::new(TUNNEL_PORT, antrea_type::TUNNEL);
        port.interface_type = ovs_tunnel_type(tunnel).to_owned();
        port.ofport_request = Some(NodePorts::TUNNEL as u16);
        port.options = tunnel_options(self.config, self.network().node_ip.addr());
        log_ovs(
            &format!("tunnel port {TUNNEL_PORT} ({})", ovs_tunnel_type(tunnel)),
            self.bridge().ensure_port(&port).await?,
        );
        self.bridge().wait_for_ofport(TUNNEL_PORT, OVS_WAIT).await?;
        Ok(())
    }
}

/// The OVS interface type of a tunnel port speaking `tunnel`.
fn ovs_tunnel_type(tunnel: TunnelType) -> &'static str {
    match tunnel {
        TunnelType::Geneve => "geneve",
        TunnelType::Vxlan => "vxlan",
    }
}

/// The tunnel port's options: flow-based key and remote, this Node's IP as source, the
/// configured UDP port and checksum.
pub fn tunnel_options(config: &AgentConfig, node_ip: Ipv4Addr) -> BTreeMap<String, String> {
    let mut options = BTreeMap::from([
        ("key".to_owned(), "flow".to_owned()),
        ("remote_ip".to_owned(), "flow".to_owned()),
        ("local_ip".to_owned(), node_ip.to_string()),
    ]);
    if config.tunnel_port != 0 {
        options.insert("dst_port".into(), config.tunnel_port.to_string());
    }
    if config.tunnel_csum {
        options.insert("csum".into(), "true".into());
    }
    options
}

/// Undoes the uplink takeover after a failed first bring-up: NIC out of the bridge, kernel
/// back on it, its configuration back. Returns what happened, for the error message.
async fn restore_nic<H: HostNetwork>(
    bridge: &OvsBridge,
    host: &H,
    nic: &str,
    bridge_name: &str,
) -> String {
    let mut notes = Vec::new();
    match host.reconcile_peer_routes(&[]).await {
        Ok(_) => {}
        Err(e) => notes.push(format!("peer routes: {e}")),
    }
    match bridge.delete_port(nic).await {
        Ok(_) => {}
        Err(e) => notes.push(format!("removing port {nic}: {e}")),
    }
    match host.unblock_kernel_ingress(nic).await {
        Ok(_) => {}
        Err(e) => notes.push(format!("kernel ingress of {nic}: {e}")),
    }
    match host.restore_uplink(bridge_name).await {
        Ok(_) => {}
        Err(e) => notes.push(format!("configuration of {nic}: {e}")),
    }
    if notes.is_empty() {
        "yes".to_owned()
    } else {
        format!("partly ({})", notes.join("; "))
    }
}
