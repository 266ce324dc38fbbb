//! The support bundle of `/v1/supportbundle`: one tar.gz ([`ustar`], [`gzip`]) holding what
//! an operator sends with a problem report — the agent's log (when it writes a file), its
//! configuration file and feature gates, the Pods' interfaces, an OVSDB dump, the bridge's
//! flows (with table names) and groups, and on Windows the HNS networks and endpoints; a
//! `README.txt` says what each member is and what could not be collected, and why.

mod gzip;
mod ustar;

use std::fmt::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use openflow::conn::OfConnection;
use serde_json::{Value, json};

use super::agent_facts::AgentFacts;
use super::ovs_flows::{FlowFilter, FlowsReport};
use super::pod_interfaces;
use crate::ovs::OvsBridge;
use gzip::gzip_stored;
use ustar::UstarWriter;

/// How long each part of the bundle may take.
const PART_WAIT: Duration = Duration::from_secs(10);

/// What the bundle is collected from.
pub struct BundleSources<'a> {
    pub facts: &'a AgentFacts,
    pub conn: Option<&'a OfConnection>,
    pub bridge: Option<&'a OvsBridge>,
}

/// The members collected so far and the README's lines.
struct Collected {
    members: Vec<(String, Vec<u8>)>,
    readme: String,
}

impl Collected {
    fn add(&mut self, name: &str, what: &str, content: Result<Vec<u8>, String>) {
        match content {
            Ok(bytes) => {
                let _ = writeln!(self.readme, "{name}: {what}");
                self.members.push((name.to_owned(), bytes));
            }
            Err(reason) => {
                let _ = writeln!(self.readme, "{name}: not collected ({what}): {reason}");
            }
        }
    }
}

/// Runs `part` for at most [`PART_WAIT`].
async fn bounded<T>(
    what: &str,
    part: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(PART_WAIT, part)
        .await
        .unwrap_or_else(|_| Err(format!("{what}: no answer within {PART_WAIT:?}")))
}

/// The bundle, as tar.gz bytes.
pub async fn collect(sources: &BundleSources<'_>) -> Result<Vec<u8>, String> {
    let facts = sources.facts;
    let mut c = Collected {
        members: Vec::new(),
        readme: format!(
            "antrea-rs agent support bundle, agent {}\n\n",
            super::VersionReport::this_build()
        ),
    };
    let read = |path: &std::path::Path| {
        std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
    };
    match &facts.log_file {
        Some(path) => c.add("agent.log", "the agent's log file", read(path)),
        None => {
            let _ = writeln!(
                c.readme,
                "agent.log: not collected: the agent writes no log file (no --log-file); its \
                 log is its stderr, where the container runtime keeps it (kubectl logs)"
            );
        }
    }
    c.add(
        "antrea-agent.conf",
        &format!("the configuration file {}", facts.config_path.display()),
        read(&facts.config_path),
    );
    c.add(
        "featuregates.json",
        "the feature gates in force, with their defaults",
        serde_json::to_vec_pretty(&facts.feature_gates()).map_err(|e| e.to_string()),
    );
    let bridge = facts.config.ovs_bridge.as_str();
    let interfaces = match sources.bridge {
        Some(bridge) => bounded("the Pods' ports", pod_interfaces::read(bridge)).await,
        None => Err("the bridge is not up yet".to_owned()),
    };
    c.add(
        "podinterfaces.json",
        "the Pods' interfaces as the CNI server recorded them",
        interfaces.and_then(|i| serde_json::to_vec_pretty(&i).map_err(|e| e.to_string())),
    );
    c.add(
        "ovsdb.json",
        "every table of the Open_vSwitch database, row by row",
        bounded("the OVSDB dump", ovsdb_dump(facts)).await,
    );
    let (flows, groups) = match sources.conn {
        Some(conn) => (
            bounded("the flow dump", flows_text(conn, bridge)).await,
            bounded("the group dump", groups_text(conn, bridge)).await,
        ),
        None => {
            let down = "the bridge's OpenFlow connection is not up yet".to_owned();
            (Err(down.clone()), Err(down))
        }
    };
    c.add(
        "flows.txt",
        "the bridge's flows with their counters, each after its table's name",
        flows,
    );
    c.add("groups.txt", "the bridge's groups", groups);
    add_hns_state(&mut c).await;
    let mtime = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut tar = UstarWriter::default();
    tar.append("README.txt", c.readme.as_bytes(), mtime)?;
    for (name, bytes) in &c.members {
        tar.append(name, bytes, mtime)?;
    }
    Ok(gzip_stored(&tar.finish()))
}

/// The flows of `bridge`, one per line after their table's name.
async fn flows_text(conn: &OfConnection, bridge: &str) -> Result<Vec<u8>, String> {
    let report = FlowsReport::read(conn, &FlowFilter::default())
        .await
        .map_err(|e| e.to_string())?;
    let mut text = format!("# the flows of {bridge}: {}\n", report.flows.len());
    for flow in &report.flows {
        let _ = writeln!(text, "{}  {}", flow.table_label(), flow.flow);
    }
    Ok(text.into_bytes())
}

/// The groups of `bridge`, one per line: those its flows name, and any other with a lower id
/// ([`OfConnection::dump_groups`]).
async fn groups_text(conn: &OfConnection, bridge: &str) -> Result<Vec<u8>, String> {
    let bound = conn.group_bound(&[]).await.map_err(|e| e.to_string())?;
    let groups = conn.dump_groups(bound).await.map_err(|e| e.to_string())?;
    let mut text = format!("# the groups of {bridge}: {}\n", groups.len());
    for group in &groups {
        let _ = writeln!(text, "{}", group.to_string().trim());
    }
    Ok(text.into_bytes())
}

/// Every row of every table of the `Open_vSwitch` database, as JSON `{table: [rows]}`, read
/// on a connection of its own.
async fn ovsdb_dump(facts: &AgentFacts) -> Result<Vec<u8>, String> {
    let endpoint = facts.config.ovsdb_endpoint();
    let client = ovsdb::Client::connect(endpoint.clone(), ovsdb::ClientConfig::default())
        .await
        .map_err(|e| format!("connecting to {endpoint}: {e}"))?;
    let database = ovsdb::vswitch::DATABASE;
    let schema = client
        .call("get_schema", vec![Value::from(database)])
        .await
        .map_err(|e| format!("get_schema: {e}"))?;
    let tables: Vec<String> = schema["tables"]
        .as_object()
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default();
    let mut params = vec![Value::from(database)];
    params.extend(
        tables
            .iter()
            .map(|table| json!({"op": "select", "table": table, "where": []})),
    );
    let results = client
        .call("transact", params)
        .await
        .map_err(|e| format!("select every row: {e}"))?;
    let dump: serde_json::Map<String, Value> = tables
        .iter()
        .zip(results.as_array().into_iter().flatten())
        .map(|(table, result)| (table.clone(), result["rows"].clone()))
        .collect();
    serde_json::to_vec_pretty(&dump).map_err(|e| e.to_string())
}

/// On Windows: the HNS networks and endpoints, as HNS describes them.
#[cfg(windows)]
async fn add_hns_state(c: &mut Collected) {
    use hcn::HcnApi;
    use hcn::schema::HostComputeQuery;
    let read = tokio::task::spawn_blocking(|| {
        let client = hcn::HcnClient::new().map_err(|e| e.to_string())?;
        let query = HostComputeQuery::default();
        let networks = client
            .enumerate_networks(&query)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|id| client.query_network(id).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, String>>()?;
        let endpoints = client
            .enumerate_endpoints(&query)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|id| client.query_endpoint(id).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, String>>()?;
        let networks = serde_json::to_vec_pretty(&networks).map_err(|e| e.to_string());
        let endpoints = serde_json::to_vec_pretty(&endpoints).map_err(|e| e.to_string());
        Ok::<_, String>((networks, endpoints))
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r);
    match read {
        Ok((networks, endpoints)) => {
            c.add("hns-networks.json", "the HNS networks", networks);
            c.add("hns-endpoints.json", "the HNS endpoints", endpoints);
        }
        Err(reason) => c.add("hns-networks.json", "the HNS state", Err(reason)),
    }
}

/// On Linux there is no HNS: the README says so.
#[cfg(not(windows))]
async fn add_hns_state(c: &mut Collected) {
    let _ = writeln!(
        c.readme,
        "hns-networks.json, hns-endpoints.json: not on this Node: HNS is Windows' (a Linux Node \
         has none)"
    );
}
