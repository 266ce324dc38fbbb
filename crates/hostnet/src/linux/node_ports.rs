//! The host's half of NodePort (proxyAll): table `ip antrea-nodeport`, whose `prerouting` (from
//! outside) and `output` (from the Node itself) chains DNAT NodePort connections to the Node's
//! addresses to the virtual NodePort IP, port kept. The Service routes send that address to the
//! gateway, so the datapath load-balances the connection; the replies come back through the
//! gateway and this entry un-DNATs them.
//!
//! The ports are one set (`inet_proto . inet_service`). The Node's addresses are `fib daddr
//! type local` (loopback excluded: a connection from 127.0.0.1 cannot leave through the
//! gateway) or, with `nodePortAddresses`, those prefixes. The whole table is replaced in one
//! transaction when anything differs, so no moment has half of it; the set's elements and the
//! rules' comment (which spells the addresses) tell an unchanged table without writing.
//!
//! A connection from outside arrives on the bridge's interface and is forwarded to the gateway:
//! the Service routes switch forwarding on (`service_routes.rs`).

use std::collections::BTreeSet;

use model::{Protocol, VIRTUAL_NODE_PORT_IP};
use serde_json::Value;

use crate::error::Result;
use crate::model::{NodePortRules, Outcome};

use super::LinuxHost;
use super::nft;

/// The table holding the NodePort rules.
pub const NODE_PORT_TABLE: &str = "antrea-nodeport";
/// The set of (protocol, port) NodePorts.
const PORTS_SET: &str = "ports";
/// Chains and their hooks: from outside, and from the Node's own processes.
const CHAINS: [(&str, &str); 2] = [("prerouting", "prerouting"), ("output", "output")];

fn protocol_name(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Tcp => "tcp",
        Protocol::Udp => "udp",
        Protocol::Sctp => "sctp",
    }
}

/// The match on the Node's addresses the rules use.
fn address_match(rules: &NodePortRules) -> String {
    if rules.addresses.is_empty() {
        "fib daddr type local ip daddr != 127.0.0.0/8".to_owned()
    } else {
        format!(
            "ip daddr {{ {} }}",
            nft::prefixes(&rules.addresses).join(", ")
        )
    }
}

/// The comment on both rules: what they match besides the ports.
fn rule_comment(rules: &NodePortRules) -> String {
    format!(
        "antrea nodeport to {VIRTUAL_NODE_PORT_IP}: {}",
        address_match(rules)
    )
}

/// The table's body for `rules` (which has ports).
fn body(rules: &NodePortRules) -> String {
    let elements: Vec<String> = rules
        .ports
        .iter()
        .map(|(protocol, port)| format!("{} . {port}", protocol_name(*protocol)))
        .collect();
    let mut body = format!(
        "  set {PORTS_SET} {{ type inet_proto . inet_service; elements = {{ {} }} }}\n",
        elements.join(", ")
    );
    for (chain, hook) in CHAINS {
        body.push_str(&format!(
            "  chain {chain} {{ type nat hook {hook} priority -100; policy accept; \
             {} meta l4proto . th dport @{PORTS_SET} counter dnat to {VIRTUAL_NODE_PORT_IP} \
             comment \"{}\"; }}\n",
            address_match(rules),
            rule_comment(rules)
        ));
    }
    body
}

/// The (protocol, port) elements of the ports set in a table listing.
fn listed_ports(objects: &[Value]) -> BTreeSet<(String, u64)> {
    objects
        .iter()
        .filter_map(|o| o.get("set"))
        .filter(|s| s.get("name").and_then(Value::as_str) == Some(PORTS_SET))
        .filter_map(|s| s.get("elem").and_then(Value::as_array))
        .flatten()
        .filter_map(|e| e.get("concat").and_then(Value::as_array))
        .filter_map(|pair| match pair.as_slice() {
            [protocol, port] => Some((protocol.as_str()?.to_owned(), port.as_u64()?)),
            _ => None,
        })
        .collect()
}

/// Whether the table listing `objects` is exactly `rules`' table.
fn is_current(objects: &[Value], rules: &NodePortRules) -> bool {
    let wanted: BTreeSet<(String, u64)> = rules
        .ports
        .iter()
        .map(|(protocol, port)| (protocol_name(*protocol).to_owned(), u64::from(*port)))
        .collect();
    let comment = rule_comment(rules);
    CHAINS
        .iter()
        .all(|(chain, _)| nft::holds_only_rule(objects, chain, &comment))
        && listed_ports(objects) == wanted
}

impl LinuxHost {
    /// See [`crate::HostNetwork::reconcile_node_ports`].
    pub(super) async fn node_ports(&self, rules: &NodePortRules) -> Result<Outcome> {
        let rules = rules.clone();
        let changed = self
            .netns
            .run(move || {
                let op = "read the NodePort rules";
                let listing = nft::list_table("ip", NODE_PORT_TABLE, op)?;
                if rules.ports.is_empty() {
                    if listing.is_none() {
                        return Ok(false);
                    }
                    nft::delete_table("ip", NODE_PORT_TABLE, "remove the NodePort rules")?;
                    tracing::info!(table = NODE_PORT_TABLE, "NodePort rules removed");
                    return Ok(true);
                }
                if listing.is_some_and(|objects| is_current(&objects, &rules)) {
                    return Ok(false);
                }
                nft::replace_table(
                    "ip",
                    NODE_PORT_TABLE,
                    &body(&rules),
                    "install the NodePort rules",
                )?;
                tracing::info!(
                    table = NODE_PORT_TABLE,
                    ports = rules.ports.len(),
                    addresses = %address_match(&rules),
                    "NodePort rules installed"
                );
                Ok(true)
            })
            .await?;
        Ok(self.outcome(changed))
    }
}
