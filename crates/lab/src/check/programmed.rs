//! Waiting, before any probe, until every Service frontend the Services' probes go through is
//! installed on the Node that load-balances it: the switch holds a `ServiceLB` flow matching the
//! frontend's protocol, address and port whose actions send to a group (its endpoints), and for
//! traffic from the Node's host (its own, NodePorts, load-balancer IPs) the host hands it to the
//! datapath: a route of the address to the gateway via the virtual Service IP, and for a
//! NodePort the host's DNAT of the port (the `antrea-nodeport` set). The flows are read the way
//! an operator would, through the agent's API: `antctl get ovsflows --table ServiceLB -o json`
//! in the Node's namespace with the Node's loopback token; the host's part with `ip -j route`
//! and `nft -j list set`. Polled with a deadline; a frontend never seen is "not programmed",
//! told apart from a Node whose state could not be read at all.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use ipnet::Ipv4Net;
use model::{VIRTUAL_NODE_PORT_IP, VIRTUAL_SERVICE_IP};
use serde_json::Value;

use super::probe::Frontend;
use super::report::{FrontendState, FrontendStatus};
use crate::host::command::{describe, in_netns, run_with_timeout};
use crate::layout::Layout;
use crate::plan::HOST_GATEWAY;

/// The nftables table and set of the host's NodePort DNAT (hostnet's `node_ports.rs`).
const NODE_PORT_SET: [&str; 3] = ["ip", "antrea-nodeport", "ports"];

/// How long one `antctl` call may take.
const ANTCTL_TIMEOUT: Duration = Duration::from_secs(10);
/// The pause between two reads of a Node's flows.
const POLL_PAUSE: Duration = Duration::from_millis(200);

/// Whether the dumped flow `flow` (ovs-ofctl syntax) installs `frontend`: it matches the
/// frontend's protocol, destination address and port, and sends to a group.
pub fn installs(flow: &str, frontend: &Frontend) -> bool {
    let (matches, actions) = flow.split_once(" actions=").unwrap_or((flow, ""));
    let words: Vec<&str> = matches.split([',', ' ']).collect();
    let nw_dst = format!("nw_dst={}", frontend.ip);
    let tp_dst = format!("tp_dst={}", frontend.port);
    words.contains(&frontend.transport.flow_word())
        && words.contains(&nw_dst.as_str())
        && words.contains(&tp_dst.as_str())
        && actions.split([',', ' ']).any(|a| a.starts_with("group:"))
}

/// The flow texts of `antctl get ovsflows -o json`'s document.
pub fn flow_texts(json: &[u8]) -> Result<Vec<String>, String> {
    let document: Value =
        serde_json::from_slice(json).map_err(|e| format!("antctl's answer is not JSON: {e}"))?;
    document["flows"]
        .as_array()
        .ok_or_else(|| "antctl's answer has no `flows` list".to_owned())?
        .iter()
        .map(|f| {
            f["flow"]
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!("a flow without text: {f}"))
        })
        .collect()
}

/// What a Node's host hands to the datapath (proxyAll): the destinations it routes to the
/// gateway via the virtual Service IP, and the NodePorts it DNATs (`tcp`/`udp`, port).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostSide {
    /// The Service routes' destinations.
    pub routed: Vec<Ipv4Net>,
    /// The NodePorts.
    pub node_ports: BTreeSet<(String, u16)>,
}

impl HostSide {
    /// Why the host does not hand `frontend`'s traffic to the datapath; `None` when it does or
    /// when the traffic does not come from the host.
    pub fn missing(&self, frontend: &Frontend) -> Option<String> {
        if !frontend.from_host {
            return None;
        }
        if !self.routed.iter().any(|net| net.contains(&frontend.ip)) {
            return Some(format!(
                "no route of {} to {HOST_GATEWAY} via {VIRTUAL_SERVICE_IP}",
                frontend.ip
            ));
        }
        let port = (frontend.transport.flow_word().to_owned(), frontend.port);
        (frontend.ip == VIRTUAL_NODE_PORT_IP && !self.node_ports.contains(&port)).then(|| {
            format!(
                "no NodePort DNAT of {} {} (nftables set {})",
                frontend.transport.as_str(),
                frontend.port,
                NODE_PORT_SET.join(" ")
            )
        })
    }
}

/// The Service routes' destinations in `ip -j route show` output: routes on the gateway via the
/// virtual Service IP.
pub fn service_routes(json: &[u8]) -> Result<Vec<Ipv4Net>, String> {
    let routes: Value =
        serde_json::from_slice(json).map_err(|e| format!("ip -j route is not JSON: {e}"))?;
    let routes = routes
        .as_array()
        .ok_or_else(|| "ip -j route is not a list".to_owned())?;
    Ok(routes
        .iter()
        .filter(|r| {
            r["dev"] == HOST_GATEWAY && r["gateway"] == VIRTUAL_SERVICE_IP.to_string().as_str()
        })
        .filter_map(|r| {
            let dst = r["dst"].as_str()?;
            match dst.parse::<Ipv4Net>() {
                Ok(net) => Some(net),
                Err(_) => dst.parse::<Ipv4Addr>().ok().map(Ipv4Net::from),
            }
        })
        .collect())
}

/// The (protocol, port) elements of `nft -j list set` output.
pub fn node_port_elements(json: &[u8]) -> Result<BTreeSet<(String, u16)>, String> {
    let document: Value =
        serde_json::from_slice(json).map_err(|e| format!("nft -j is not JSON: {e}"))?;
    let items = document["nftables"]
        .as_array()
        .ok_or_else(|| "nft -j has no `nftables` list".to_owned())?;
    Ok(items
        .iter()
        .filter_map(|item| item["set"]["elem"].as_array())
        .flatten()
        .filter_map(|elem| {
            let pair = elem["concat"].as_array()?;
            let port = u16::try_from(pair.get(1)?.as_u64()?).ok()?;
            Some((pair.first()?.as_str()?.to_owned(), port))
        })
        .collect())
}

/// Runs `cmd`; its stdout, or why it failed.
fn stdout_of(mut cmd: Command) -> Result<std::process::Output, String> {
    run_with_timeout(&mut cmd, b"", ANTCTL_TIMEOUT).map_err(|e| e.to_string())
}

/// `node`'s host side.
fn host_side(node: &str) -> Result<HostSide, String> {
    let mut routes = Command::new("ip");
    routes.args(["-j", "-n", node, "route", "show"]);
    let out = stdout_of(routes)?;
    if !out.status.success() {
        return Err(format!(
            "ip -j -n {node} route show: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let routed = service_routes(&out.stdout)?;
    let mut set = in_netns(node, "nft");
    set.args(["-j", "list", "set"]).args(NODE_PORT_SET);
    let out = stdout_of(set)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let node_ports = if out.status.success() {
        node_port_elements(&out.stdout)?
    } else if stderr.contains("No such file or directory") {
        BTreeSet::new()
    } else {
        return Err(format!("nft list set in {node}: {}", stderr.trim()));
    };
    Ok(HostSide { routed, node_ports })
}

/// The `antctl` beside `agent_bin`.
pub fn antctl_beside(agent_bin: &Path) -> PathBuf {
    agent_bin.with_file_name("antctl")
}

/// `node`'s `ServiceLB` flows as its agent's API reports them.
fn service_flows(layout: &Layout, antctl: &Path, node: &str) -> Result<Vec<String>, String> {
    let mut cmd = in_netns(node, antctl);
    cmd.arg("--local-access-dir")
        .arg(layout.api_local_access_dir(node))
        .args(["get", "ovsflows", "--table", "ServiceLB", "-o", "json"]);
    let out = run_with_timeout(&mut cmd, b"", ANTCTL_TIMEOUT).map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!(
            "`{}` exited with {}: {}",
            describe(&cmd),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    flow_texts(&out.stdout)
}

/// Polls every Node named by `frontends` until each of its frontends is installed, for at most
/// `timeout`; the status of each frontend, in order.
pub fn wait_programmed(
    layout: &Layout,
    antctl: &Path,
    frontends: &[Frontend],
    timeout: Duration,
) -> Vec<FrontendStatus> {
    let started = Instant::now();
    let mut seen: Vec<Option<f64>> = vec![None; frontends.len()];
    let mut missing: Vec<String> = vec![String::new(); frontends.len()];
    let mut unreadable: BTreeMap<&str, String> = BTreeMap::new();
    loop {
        let mut waiting: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (i, f) in frontends.iter().enumerate() {
            if seen[i].is_none() {
                waiting.entry(f.node.as_str()).or_default().push(i);
            }
        }
        if waiting.is_empty() {
            break;
        }
        for (node, indices) in waiting {
            let read =
                service_flows(layout, antctl, node).and_then(|flows| Ok((flows, host_side(node)?)));
            let (flows, host) = match read {
                Ok(read) => {
                    unreadable.remove(node);
                    read
                }
                Err(why) => {
                    unreadable.insert(node, why);
                    continue;
                }
            };
            for i in indices {
                let f = &frontends[i];
                let why = if flows.iter().any(|flow| installs(flow, f)) {
                    host.missing(f)
                } else {
                    Some(format!(
                        "no ServiceLB flow for {} {}:{} to a group",
                        f.transport.as_str(),
                        f.ip,
                        f.port
                    ))
                };
                match why {
                    None => seen[i] = Some(started.elapsed().as_secs_f64()),
                    Some(why) => missing[i] = why,
                }
            }
        }
        if seen.iter().all(Option::is_some) || started.elapsed() >= timeout {
            break;
        }
        thread::sleep(POLL_PAUSE);
    }
    frontends
        .iter()
        .zip(seen)
        .zip(missing)
        .map(|((f, installed_after), missing)| {
            let (state, detail) = match (installed_after, unreadable.get(f.node.as_str())) {
                (Some(_), _) => (FrontendState::Installed, String::new()),
                (None, Some(why)) => (
                    FrontendState::Unreadable,
                    format!("cannot read {}'s Service state: {why}", f.node),
                ),
                (None, None) => (
                    FrontendState::NotProgrammed,
                    format!(
                        "{missing} on {} after {:.0} s",
                        f.node,
                        timeout.as_secs_f64()
                    ),
                ),
            };
            FrontendStatus {
                frontend: f.clone(),
                state,
                installed_after,
                detail,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::Transport;

    fn frontend(transport: Transport, ip: &str, port: u16) -> Frontend {
        Frontend {
            node: "lab-n1".into(),
            service: "default/lab-local-n1".into(),
            transport,
            ip: ip.parse().unwrap(),
            port,
            from_host: false,
        }
    }

    #[test]
    fn the_host_side_is_read_from_ip_and_nft_json() {
        let routes = br#"[{"dst":"10.10.0.0/24","dev":"br-int","protocol":"kernel"},
            {"dst":"10.96.0.0/12","gateway":"169.254.0.253","dev":"antrea-gw0","protocol":"165"},
            {"dst":"10.244.2.0/24","gateway":"10.244.2.1","dev":"antrea-gw0"},
            {"dst":"169.254.0.252","gateway":"169.254.0.253","dev":"antrea-gw0","protocol":"165"},
            {"dst":"169.254.0.253","dev":"antrea-gw0","protocol":"165","scope":"link"}]"#;
        let routed = service_routes(routes).unwrap();
        assert_eq!(
            routed,
            [
                "10.96.0.0/12".parse::<Ipv4Net>().unwrap(),
                "169.254.0.252/32".parse().unwrap()
            ]
        );
        let set = br#"{"nftables": [{"metainfo": {"version": "1.0.6"}}, {"set": {"family": "ip",
            "name": "ports", "table": "antrea-nodeport", "elem": [{"concat": ["tcp", 30080]},
            {"concat": ["udp", 30053]}]}}]}"#;
        let node_ports = node_port_elements(set).unwrap();
        assert!(node_ports.contains(&("tcp".to_owned(), 30080)));
        assert!(node_ports.contains(&("udp".to_owned(), 30053)));
        assert!(service_routes(b"{}").is_err());
        assert!(node_port_elements(b"[]").is_err());

        let host = HostSide { routed, node_ports };
        let from_host = |ip: &str, port| Frontend {
            from_host: true,
            ..frontend(Transport::Tcp, ip, port)
        };
        assert_eq!(
            host.missing(&frontend(Transport::Tcp, "192.0.2.10", 80)),
            None
        );
        assert_eq!(host.missing(&from_host("10.96.1.1", 80)), None);
        assert_eq!(host.missing(&from_host("169.254.0.252", 30080)), None);
        assert!(
            host.missing(&from_host("169.254.0.252", 30081))
                .unwrap()
                .contains("no NodePort DNAT of TCP 30081")
        );
        assert!(
            host.missing(&from_host("192.0.2.10", 80))
                .unwrap()
                .contains("no route of 192.0.2.10")
        );
    }

    #[test]
    fn a_frontend_is_installed_by_its_flow_to_a_group_only() {
        let flow = "cookie=0x1000500000001, table=26, priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.1.1,tp_dst=80 actions=set_field:0x20000/0x70000->reg4,group:3";
        assert!(installs(flow, &frontend(Transport::Tcp, "10.96.1.1", 80)));
        assert!(!installs(flow, &frontend(Transport::Udp, "10.96.1.1", 80)));
        assert!(!installs(flow, &frontend(Transport::Tcp, "10.96.1.10", 80)));
        assert!(!installs(
            flow,
            &frontend(Transport::Tcp, "10.96.1.1", 8080)
        ));
        let rejecting = "priority=200,tcp,nw_dst=10.96.1.1,tp_dst=80 actions=controller(max_len=128,userdata=01)";
        assert!(!installs(
            rejecting,
            &frontend(Transport::Tcp, "10.96.1.1", 80)
        ));
        let dropping = "priority=200,tcp,nw_dst=169.254.0.252,tp_dst=30081 actions=drop";
        assert!(!installs(
            dropping,
            &frontend(Transport::Tcp, "169.254.0.252", 30081)
        ));
    }

    #[test]
    fn antctl_documents_are_read_or_refused() {
        let json = br#"{"flows":[{"table_id":26,"table":"ServiceLB","flow":"priority=0 actions=goto_table:27"}]}"#;
        assert_eq!(
            flow_texts(json),
            Ok(vec!["priority=0 actions=goto_table:27".to_owned()])
        );
        assert!(flow_texts(b"not json").is_err());
        assert!(flow_texts(br#"{"flows":[{"table_id":1}]}"#).is_err());
        assert!(flow_texts(br#"{}"#).is_err());
        assert_eq!(
            antctl_beside(Path::new("/t/debug/antrea-agent")),
            Path::new("/t/debug/antctl")
        );
    }
}
