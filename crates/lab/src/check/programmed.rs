//! Waiting, before any probe, until every Service frontend the Services' probes go through is
//! installed on the Node that load-balances it: the switch holds a `ServiceLB` flow matching the
//! frontend's protocol, address and port whose actions send to a group (its endpoints). The
//! flows are read the way an operator would, through the agent's API: `antctl get ovsflows
//! --table ServiceLB -o json` in the Node's namespace with the Node's loopback token. Polled
//! with a deadline; a frontend never seen is "not programmed", told apart from a Node whose
//! flows could not be read at all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::probe::Frontend;
use super::report::{FrontendState, FrontendStatus};
use crate::host::command::{describe, in_netns, run_with_timeout};
use crate::layout::Layout;

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
            match service_flows(layout, antctl, node) {
                Ok(flows) => {
                    unreadable.remove(node);
                    for i in indices {
                        if flows.iter().any(|flow| installs(flow, &frontends[i])) {
                            seen[i] = Some(started.elapsed().as_secs_f64());
                        }
                    }
                }
                Err(why) => {
                    unreadable.insert(node, why);
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
        .map(|(f, installed_after)| {
            let (state, detail) = match (installed_after, unreadable.get(f.node.as_str())) {
                (Some(_), _) => (FrontendState::Installed, String::new()),
                (None, Some(why)) => (
                    FrontendState::Unreadable,
                    format!("cannot read {}'s ServiceLB flows: {why}", f.node),
                ),
                (None, None) => (
                    FrontendState::NotProgrammed,
                    format!(
                        "no ServiceLB flow for {} {}:{} to a group on {} after {:.0} s",
                        f.transport.as_str(),
                        f.ip,
                        f.port,
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
        }
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
