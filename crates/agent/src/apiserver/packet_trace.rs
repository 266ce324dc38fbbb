//! [`TraceReport`], the document of `/v1/tracepacket`: a packet from a Pod (its OpenFlow port,
//! MAC and address, sent to the gateway's MAC as the Pod's default route does) to an address
//! and port, run through the bridge by ovs-vswitchd's `ofproto/trace` (new connections: each
//! `ct` continues as `trk,new`), shown table by table with the agent's table names, and the
//! verdict of the last pass: out on which ports, or dropped.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};

use model::MacAddr;
use pipeline::layout::TableGraph;
use serde::{Deserialize, Serialize};

use super::pod_interfaces::PodInterfaceReport;

/// The transport protocol of a traced packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceProtocol {
    Tcp,
    Udp,
    Icmp,
}

impl TraceProtocol {
    /// `tcp`, `udp` or `icmp`.
    pub fn parse(text: &str) -> Result<TraceProtocol, String> {
        match text {
            "tcp" => Ok(TraceProtocol::Tcp),
            "udp" => Ok(TraceProtocol::Udp),
            "icmp" => Ok(TraceProtocol::Icmp),
            other => Err(format!("protocol {other}: expected tcp, udp or icmp")),
        }
    }
}

/// Where a traced packet goes: `IP` or `IP:port`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceDestination {
    pub ip: Ipv4Addr,
    pub port: Option<u16>,
}

impl TraceDestination {
    /// `IP` or `IP:port` (IPv4).
    pub fn parse(text: &str) -> Result<TraceDestination, String> {
        if let Ok(ip) = text.parse::<Ipv4Addr>() {
            return Ok(TraceDestination { ip, port: None });
        }
        text.parse::<SocketAddrV4>()
            .map(|addr| TraceDestination {
                ip: *addr.ip(),
                port: Some(addr.port()),
            })
            .map_err(|_| format!("destination {text}: expected an IPv4 address, or IP:port"))
    }
}

/// The source port of traced TCP and UDP packets.
const SOURCE_PORT: u16 = 40000;

/// The `ofproto/trace` flow of a packet from `pod` to `destination` (ICMP echo without a port,
/// TCP with one, unless `protocol` says otherwise), sent to `gateway_mac`.
pub fn packet_flow(
    pod: &PodInterfaceReport,
    gateway_mac: MacAddr,
    destination: TraceDestination,
    protocol: Option<TraceProtocol>,
) -> Result<String, String> {
    let who = pod.pod();
    let ofport = pod
        .ofport
        .ok_or_else(|| format!("Pod {who} has no OpenFlow port yet"))?;
    let ip = pod
        .ips
        .first()
        .ok_or_else(|| format!("Pod {who} has no address recorded"))?;
    let mac = pod
        .mac
        .ok_or_else(|| format!("Pod {who} has no MAC recorded"))?;
    let protocol = protocol.unwrap_or(match destination.port {
        Some(_) => TraceProtocol::Tcp,
        None => TraceProtocol::Icmp,
    });
    let l4 = match (protocol, destination.port) {
        (TraceProtocol::Icmp, None) => "icmp,icmp_type=8,icmp_code=0".to_owned(),
        (TraceProtocol::Icmp, Some(port)) => {
            return Err(format!("ICMP has no port (destination port {port})"));
        }
        (TraceProtocol::Tcp, Some(port)) => format!("tcp,tcp_src={SOURCE_PORT},tcp_dst={port}"),
        (TraceProtocol::Udp, Some(port)) => format!("udp,udp_src={SOURCE_PORT},udp_dst={port}"),
        (_, None) => return Err("TCP and UDP need a destination port (IP:port)".to_owned()),
    };
    Ok(format!(
        "in_port={ofport},dl_src={mac},dl_dst={gateway_mac},{l4},nw_src={ip},nw_dst={},nw_ttl=64",
        destination.ip
    ))
}

/// A traced packet, table by table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceReport {
    /// The flow traced (`ofproto/trace` syntax).
    pub flow: String,
    /// The tables the packet went through, in order (several passes when conntrack recirculates).
    pub steps: Vec<TraceStep>,
    /// Where the packet ends.
    pub verdict: Verdict,
    /// `ofproto/trace`'s whole output.
    pub trace: String,
}

/// One table the packet went through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceStep {
    pub table_id: u8,
    /// The table's name; `None` for a table no feature declares.
    pub table: Option<String>,
    /// The flow that matched, as the trace shows it.
    pub flow: String,
    /// Its actions, one per line, as the trace shows them.
    pub actions: Vec<String>,
}

/// Where a traced packet ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind")]
pub enum Verdict {
    /// Sent out of these ports (OpenFlow number and name).
    Output { ports: Vec<(u32, String)> },
    /// Dropped.
    Drop,
    /// Neither clearly: the datapath actions as the trace shows them.
    Unknown { datapath_actions: String },
}

impl TraceReport {
    /// The report of `trace`, the output of `ofproto/trace` on `bridge` for `flow`, with
    /// `graph`'s table names and `port_names` (OpenFlow number to name).
    pub fn parse(
        graph: &TableGraph,
        bridge: &str,
        flow: String,
        trace: String,
        port_names: &BTreeMap<u32, String>,
    ) -> TraceReport {
        let mut steps: Vec<TraceStep> = Vec::new();
        for line in trace.lines() {
            let trimmed = line.trim();
            if let Some((id, rest)) = trimmed.split_once(". ")
                && let Ok(table_id) = id.parse::<u8>()
            {
                steps.push(TraceStep {
                    table_id,
                    table: graph.table(table_id).map(|t| t.name().to_owned()),
                    flow: rest.to_owned(),
                    actions: Vec::new(),
                });
            } else if line.starts_with(' ')
                && !trimmed.is_empty()
                && let Some(step) = steps.last_mut()
            {
                step.actions.push(trimmed.to_owned());
            }
        }
        let header = format!("bridge(\"{bridge}\")");
        let last = trace.rsplit(&header).next().unwrap_or(&trace);
        let mut out: Vec<u32> = Vec::new();
        for line in last.lines().map(str::trim) {
            let port = line
                .strip_prefix("-> output port is ")
                .or_else(|| line.strip_prefix("output:"))
                .and_then(|p| p.parse::<u32>().ok());
            if let Some(port) = port
                && !out.contains(&port)
            {
                out.push(port);
            }
        }
        let datapath_actions = trace
            .lines()
            .rev()
            .find_map(|l| l.trim().strip_prefix("Datapath actions:"))
            .unwrap_or("")
            .trim()
            .to_owned();
        let verdict = if datapath_actions == "drop" {
            Verdict::Drop
        } else if out.is_empty() {
            Verdict::Unknown { datapath_actions }
        } else {
            let name = |p: u32| port_names.get(&p).cloned().unwrap_or_else(|| "?".into());
            Verdict::Output {
                ports: out.into_iter().map(|p| (p, name(p))).collect(),
            }
        };
        TraceReport {
            flow,
            steps,
            verdict,
            trace,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> PodInterfaceReport {
        PodInterfaceReport::example()
    }

    #[test]
    fn the_packet_leaves_the_pod_for_the_gateway() {
        let gw: MacAddr = "aa:bb:cc:dd:ee:ff".parse().unwrap();
        let to = |text| TraceDestination::parse(text).unwrap();
        assert_eq!(
            packet_flow(&pod(), gw, to("10.244.1.4:80"), None).unwrap(),
            "in_port=3,dl_src=02:00:0a:f4:01:03,dl_dst=aa:bb:cc:dd:ee:ff,tcp,tcp_src=40000,tcp_dst=80,nw_src=10.244.1.3,nw_dst=10.244.1.4,nw_ttl=64"
        );
        assert!(
            packet_flow(&pod(), gw, to("10.244.1.4"), None)
                .unwrap()
                .contains(",icmp,icmp_type=8,")
        );
        assert!(
            packet_flow(&pod(), gw, to("10.244.1.4:53"), Some(TraceProtocol::Udp))
                .unwrap()
                .contains(",udp,udp_src=40000,udp_dst=53,")
        );
        assert!(packet_flow(&pod(), gw, to("10.244.1.4"), Some(TraceProtocol::Tcp)).is_err());
        assert!(packet_flow(&pod(), gw, to("10.244.1.4:1"), Some(TraceProtocol::Icmp)).is_err());
        assert!(TraceDestination::parse("10.244.1").is_err());
        assert!(TraceDestination::parse("10.244.1.4:x").is_err());
        assert!(TraceProtocol::parse("sctp").is_err());
    }

    #[test]
    fn steps_named_and_the_last_pass_decides() {
        let g = TableGraph::standard();
        let trace = "Flow: icmp,in_port=3\n\nbridge(\"br-int\")\n----------------\n 0. in_port=3, priority 190\n    set_field:0x2->reg0\n    goto_table:1\n 1. ip,in_port=3, priority 200\n    ct(table=2)\n\nbridge(\"br-int\")\n----------------\n 2. ip, priority 0\n    output:4\n\nFinal flow: unchanged\nDatapath actions: 4\n".to_owned();
        let names = BTreeMap::from([(4, "b-5678".to_owned())]);
        let report = TraceReport::parse(g, "br-int", "f".into(), trace, &names);
        let steps: Vec<(u8, Option<&str>, usize)> = report
            .steps
            .iter()
            .map(|s| (s.table_id, s.table.as_deref(), s.actions.len()))
            .collect();
        assert_eq!(
            steps[..2],
            [(0, Some("Classifier"), 2), (1, Some("SpoofGuard"), 1)]
        );
        assert_eq!(
            report.verdict,
            Verdict::Output {
                ports: vec![(4, "b-5678".into())]
            }
        );
        let dropped = "bridge(\"br-int\")\n 0. priority 0\n    drop\n\nDatapath actions: drop\n";
        let report = TraceReport::parse(g, "br-int", "f".into(), dropped.into(), &names);
        assert_eq!(report.verdict, Verdict::Drop);
    }
}
