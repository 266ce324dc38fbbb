//! nftables through the `nft` command: Pod egress SNAT (table `ip antrea`, chain `pod-snat`) and
//! the NodePort DNAT (table `ip antrea-nodeport`, `node_ports.rs`).
//! Keeping the kernel off OVS-owned interfaces (table `netdev antrea`, an ingress chain with
//! policy drop per interface) happens once per Pod and goes through netlink instead
//! (`nfnetlink`).
//!
//! Every change is one `nft -f -` transaction. Reads use `nft -j`. The SNAT rule carries a
//! comment that spells out its parameters, so an unchanged rule is recognised without
//! comparing expressions.

use std::io::Write;
use std::process::{Command, Stdio};

use ipnet::Ipv4Net;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::PodSnat;

/// The table (in both the `ip` and the `netdev` family) holding antrea's rules.
pub const TABLE: &str = "antrea";
/// The SNAT chain in `ip antrea`.
pub const SNAT_CHAIN: &str = "pod-snat";

/// Runs `nft` with `args`, feeding `stdin`; returns stdout.
fn nft(args: &[&str], stdin: &str, op: &str) -> Result<String> {
    let mut child = Command::new("nft")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::os(format!("run nft to {op}"), e))?;
    if let Some(mut input) = child.stdin.take() {
        input
            .write_all(stdin.as_bytes())
            .map_err(|e| Error::os(format!("write the nft script to {op}"), e))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|e| Error::os(format!("wait for nft to {op}"), e))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        let detail = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        Err(Error::Nft {
            op: op.to_owned(),
            detail: format!("{detail} ({})", output.status),
        })
    }
}

/// Applies `script` as one transaction.
pub fn apply(script: &str, op: &str) -> Result<()> {
    nft(&["-f", "-"], script, op).map(drop)
}

/// The objects of table `table` (`nft -j list table`), or `None` when it does not exist.
pub fn list_table(family: &str, table: &str, op: &str) -> Result<Option<Vec<Value>>> {
    let tables = nft(&["-j", "list", "tables", family], "", op)?;
    let exists = parse(&tables, op)?
        .iter()
        .any(|o| o.get("table").and_then(|t| t.get("name")) == Some(&Value::from(table)));
    if !exists {
        return Ok(None);
    }
    let listing = nft(&["-j", "list", "table", family, table], "", op)?;
    parse(&listing, op).map(Some)
}

fn parse(json: &str, op: &str) -> Result<Vec<Value>> {
    let value: Value = serde_json::from_str(json).map_err(|e| Error::Nft {
        op: op.to_owned(),
        detail: format!("unreadable JSON from nft: {e}"),
    })?;
    Ok(value
        .get("nftables")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// Objects of `kind` (`"chain"`, `"rule"`) in chain or table listing `objects` whose `chain`
/// or `name` field is `chain`.
pub fn objects<'a>(objects: &'a [Value], kind: &str, chain: &str) -> Vec<&'a Value> {
    let field = if kind == "chain" { "name" } else { "chain" };
    objects
        .iter()
        .filter_map(|o| o.get(kind))
        .filter(|o| o.get(field).and_then(Value::as_str) == Some(chain))
        .collect()
}

/// Whether chain `chain` of table listing `listing` exists and holds exactly one rule, whose
/// comment is `comment` (the rule's parameters spelled out).
pub fn holds_only_rule(listing: &[Value], chain: &str, comment: &str) -> bool {
    let rules = objects(listing, "rule", chain);
    !objects(listing, "chain", chain).is_empty()
        && rules.len() == 1
        && rules[0].get("comment").and_then(Value::as_str) == Some(comment)
}

/// Makes table `table` of `family` hold exactly `body` (its sets and chains) in one
/// transaction: created when missing, emptied and filled, with no moment in between.
pub fn replace_table(family: &str, table: &str, body: &str, op: &str) -> Result<()> {
    apply(
        &format!(
            "table {family} {table} {{}}\ndelete table {family} {table}\ntable {family} {table} {{\n{body}}}\n"
        ),
        op,
    )
}

/// Deletes table `table` of `family` (which exists) and everything in it.
pub fn delete_table(family: &str, table: &str, op: &str) -> Result<()> {
    apply(&format!("delete table {family} {table}\n"), op)
}

/// `nets` as nft prefixes: host bits cleared, each once, in order.
pub fn prefixes(nets: &[Ipv4Net]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    nets.iter()
        .map(|n| n.trunc().to_string())
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// The comment that identifies the SNAT rule for `snat`.
pub fn snat_comment(snat: &PodSnat) -> String {
    let cluster = prefixes(&snat.cluster_cidrs);
    format!(
        "antrea pod snat {} not {} oif {}",
        snat.pod_cidr.trunc(),
        cluster.join(","),
        snat.egress_interface
    )
}

/// The transaction that makes `pod-snat` hold exactly the rule for `snat`.
pub fn snat_script(snat: &PodSnat) -> String {
    let mut rule = format!("ip saddr {}", snat.pod_cidr.trunc());
    if !snat.cluster_cidrs.is_empty() {
        let cluster = prefixes(&snat.cluster_cidrs);
        rule.push_str(&format!(" ip daddr != {{ {} }}", cluster.join(", ")));
    }
    format!(
        "add table ip {TABLE}\n\
         add chain ip {TABLE} {SNAT_CHAIN} {{ type nat hook postrouting priority srcnat; policy accept; }}\n\
         flush chain ip {TABLE} {SNAT_CHAIN}\n\
         add rule ip {TABLE} {SNAT_CHAIN} {rule} oifname \"{oif}\" counter masquerade comment \"{comment}\"\n",
        oif = snat.egress_interface,
        comment = snat_comment(snat),
    )
}
