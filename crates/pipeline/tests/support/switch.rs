//! A private OVS bridge laid out like a Node's `br-int` (uplink, gateway, tunnel, two Pods), an
//! OpenFlow connection to it, and helpers to dump and trace.

use std::sync::{Arc, Mutex};

use localipc::Endpoint;
use openflow::conn::{ConnOptions, OfConnection};
use openflow::msg::flow_mod::FlowMod;
use ovstest::Ovs;
use pipeline::Round;
use pipeline::cache::{DesiredCache, Installer, Owner};
use pipeline::layout::NodePorts;
use pipeline::owners::{NODE, PEER, POD};

use super::PodOnPort;
use model::NodeNetwork;
use pipeline::render::{node_flows, peer_flows, pod_flows};

pub struct Switch {
    pub ovs: Ovs,
    pub conn: OfConnection,
}

impl Switch {
    /// Starts OVS with `br0` and the Node's ports (`tunnel`: the tunnel port's type, if any).
    pub async fn start(tunnel: Option<&str>) -> Switch {
        Switch::start_with(tunnel, ConnOptions::default()).await
    }

    /// Like [`Switch::start`], connecting with `options`.
    pub async fn start_with(tunnel: Option<&str>, options: ConnOptions) -> Switch {
        Switch::with_pods(tunnel, options, &super::pods()).await
    }

    /// Like [`Switch::start_with`], with `pods` instead of n1's two Pods.
    pub async fn with_pods(
        tunnel: Option<&str>,
        options: ConnOptions,
        pods: &[PodOnPort],
    ) -> Switch {
        let ovs = Ovs::start().expect("start OVS");
        ovs.add_bridge("br0").expect("add br0");
        let internal = |name: &str, ofport: u32| {
            ovs.vsctl(&[
                "add-port",
                "br0",
                name,
                "--",
                "set",
                "interface",
                name,
                "type=internal",
                &format!("ofport_request={ofport}"),
            ])
            .unwrap_or_else(|e| panic!("add {name}: {e}"));
        };
        internal("uplink0", NodePorts::UPLINK);
        internal("antrea-gw0", NodePorts::GATEWAY);
        for pod in pods {
            internal(
                &format!("{}-{}", pod.key.namespace, pod.key.name),
                pod.ofport,
            );
        }
        if let Some(kind) = tunnel {
            ovs.vsctl(&[
                "add-port",
                "br0",
                "antrea-tun0",
                "--",
                "set",
                "interface",
                "antrea-tun0",
                &format!("type={kind}"),
                "options:key=flow",
                "options:remote_ip=flow",
                "options:local_ip=10.10.0.11",
                &format!("ofport_request={}", NodePorts::TUNNEL),
            ])
            .expect("add tunnel port");
        }
        let endpoint: Endpoint = format!("unix:{}", ovs.mgmt_socket("br0").display())
            .parse()
            .unwrap();
        let conn = OfConnection::connect(endpoint, options)
            .await
            .expect("connect");
        Switch { ovs, conn }
    }

    /// An installer with an empty cache of `round`.
    pub fn installer(&self, round: Round) -> Installer {
        Installer::new(
            self.conn.clone(),
            Arc::new(Mutex::new(DesiredCache::new(round))),
        )
    }

    /// The switch's flows, parsed back into flow mods, sorted by their text.
    pub fn dump(&self) -> Vec<String> {
        let dump = self
            .ovs
            .ofctl(&["-O", "OpenFlow15", "--no-stats", "dump-flows", "{mgmt:br0}"])
            .expect("dump-flows");
        let mut flows: Vec<String> = dump
            .lines()
            .filter(|l| l.contains("actions="))
            .map(|l| {
                let (head, actions) = l.trim().split_once(" actions=").expect("actions");
                let text = format!("{} actions={actions}", head.replace(", ", ","));
                let fm: FlowMod = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
                fm.to_string()
            })
            .collect();
        flows.sort();
        flows
    }

    /// The switch's groups as `dump-groups` prints them, sorted.
    pub fn dump_groups(&self) -> Vec<String> {
        let dump = self
            .ovs
            .ofctl(&["-O", "OpenFlow15", "dump-groups", "{mgmt:br0}"])
            .expect("dump-groups");
        let mut groups: Vec<String> = dump
            .lines()
            .filter_map(|l| l.strip_prefix(" group_id="))
            .map(|l| format!("group_id={l}"))
            .collect();
        groups.sort();
        groups
    }

    /// The switch's meters as `dump-meters` prints them, each on one line (`meter=…` followed
    /// by its band lines), sorted.
    pub fn dump_meters(&self) -> Vec<String> {
        let dump = self
            .ovs
            .ofctl(&["-O", "OpenFlow15", "dump-meters", "{mgmt:br0}"])
            .expect("dump-meters");
        let mut meters: Vec<String> = Vec::new();
        for line in dump.lines().skip(1).map(str::trim) {
            if line.starts_with("meter=") {
                meters.push(line.to_string());
            } else if let Some(meter) = meters.last_mut().filter(|_| !line.is_empty()) {
                if !meter.ends_with('=') {
                    meter.push(' ');
                }
                meter.push_str(line);
            }
        }
        meters.sort();
        meters
    }

    /// Sends the packet `fields` (ovs-ofctl compose-packet syntax) into the pipeline as if it
    /// arrived on `in_port`; returns its length in bytes.
    pub fn send_packet(&self, in_port: u32, fields: &str) -> u64 {
        let dump = self
            .ovs
            .ofctl(&["compose-packet", fields])
            .expect("compose-packet");
        let hex: String = dump
            .lines()
            .filter_map(|l| l.split_once("  ").map(|(_, rest)| rest))
            .flat_map(|rest| {
                rest.split(['-', ' '])
                    .take_while(|b| b.len() == 2)
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect();
        self.ovs
            .ofctl(&[
                "packet-out",
                "{mgmt:br0}",
                &format!("in_port={in_port} packet={hex} actions=table"),
            ])
            .expect("packet-out");
        hex.len() as u64 / 2
    }

    /// `ofproto/trace br0 FLOW [--ct-next STATE]...`.
    pub fn trace(&self, flow: &str, ct_next: &[&str]) -> String {
        let mut args = vec!["ofproto/trace", "br0", flow];
        for state in ct_next {
            args.extend(["--ct-next", state]);
        }
        self.ovs
            .appctl(&args)
            .unwrap_or_else(|e| panic!("trace {flow}: {e}"))
    }
}

/// Installs n1's flows through `installer`, one owner at a time.
pub async fn install_all(installer: &Installer, node: &NodeNetwork) {
    installer
        .replace(Owner::from(NODE), node_flows(node))
        .await
        .expect("node flows");
    for pod in super::pods() {
        installer
            .replace(Owner::new(POD, &pod.key), pod_flows(node, &pod, pod.ofport))
            .await
            .expect("pod flows");
    }
    let peer = super::peer();
    installer
        .replace(Owner::new(PEER, &peer.name), peer_flows(node, &peer))
        .await
        .expect("peer flows");
}

/// Flow mods as sorted text.
pub fn texts(flows: &[FlowMod]) -> Vec<String> {
    let mut t: Vec<String> = flows.iter().map(|f| f.to_string()).collect();
    t.sort();
    t
}
