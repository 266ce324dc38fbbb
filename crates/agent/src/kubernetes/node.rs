//! This Node's object: waiting until it has what the agent needs (a Pod CIDR and an
//! InternalIP), and publishing the annotations the other Nodes read: the transport NIC's MAC
//! (`node.antrea.io/mac-address`, in noEncap and hybrid modes, for direct routing) and the
//! transport addresses (`node.antrea.io/transport-addresses`, when a transport interface is
//! configured). Each is removed when it does not apply, with one JSON merge patch, and nothing
//! is sent when the Node already carries the wanted values.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::Api;
use kube::api::{Patch, PatchParams};
use model::MacAddr;
use serde_json::{Map, Value, json};

use super::error::KubernetesError;
use crate::config::{AgentConfig, TrafficEncapMode};
use crate::node::{MAC_ANNOTATION, NodeInfo};

/// The annotation listing a Node's transport addresses (comma separated).
pub const TRANSPORT_ADDRESSES_ANNOTATION: &str = "node.antrea.io/transport-addresses";

/// How long and how often to ask for this Node while it is not ready (Antrea: every 5 s for
/// 60 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeWait {
    /// Give up after this long.
    pub timeout: Duration,
    /// Ask again after this long.
    pub interval: Duration,
}

impl Default for NodeWait {
    fn default() -> NodeWait {
        NodeWait {
            timeout: Duration::from_secs(60),
            interval: Duration::from_secs(5),
        }
    }
}

/// Gets Node `name` until it has a Pod CIDR and an InternalIP, logging why it is not ready
/// yet; an unreachable API server counts as not ready. Fails after `wait.timeout` with the
/// last reason.
pub async fn wait_for_node(
    nodes: &Api<Node>,
    name: &str,
    wait: NodeWait,
) -> Result<NodeInfo, KubernetesError> {
    let deadline = tokio::time::Instant::now() + wait.timeout;
    loop {
        let reason = match nodes.get_opt(name).await {
            Ok(Some(node)) => match NodeInfo::from_node(&node) {
                Ok(info) => {
                    tracing::info!("Node {name}: IP {}, Pod CIDR {}", info.ip, info.pod_cidr);
                    return Ok(info);
                }
                Err(reason) => reason.to_string(),
            },
            Ok(None) => "no such Node object".to_owned(),
            Err(error) => format!("API server: {error}"),
        };
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Err(KubernetesError::NodeNotReady {
                node: name.to_owned(),
                waited: wait.timeout,
                reason,
            });
        }
        tracing::info!("waiting for Node {name}: {reason}");
        tokio::time::sleep(wait.interval.min(deadline - now)).await;
    }
}

/// The annotations this Node publishes: a value to set, or `None` to remove it.
pub type Annotations = BTreeMap<&'static str, Option<String>>;

/// What this Node should carry: its transport NIC's MAC in noEncap and hybrid modes, and its
/// transport address when `transportInterface` or `transportInterfaceCIDRs` is configured.
pub fn wanted_annotations(
    config: &AgentConfig,
    mac: MacAddr,
    transport_ip: Ipv4Addr,
) -> Annotations {
    let direct = matches!(
        config.traffic_encap_mode,
        TrafficEncapMode::NoEncap | TrafficEncapMode::Hybrid
    );
    let transport_configured =
        config.transport_interface.is_some() || !config.transport_interface_cidrs.is_empty();
    BTreeMap::from([
        (MAC_ANNOTATION, direct.then(|| mac.to_string())),
        (
            TRANSPORT_ADDRESSES_ANNOTATION,
            transport_configured.then(|| transport_ip.to_string()),
        ),
    ])
}

/// The merge patch that gives `node` the `wanted` annotations, or `None` when it has them.
pub fn annotation_patch(node: &Node, wanted: &Annotations) -> Option<Value> {
    let current = node.metadata.annotations.as_ref();
    let mut changes = Map::new();
    for (key, want) in wanted {
        let have = current.and_then(|a| a.get(*key));
        if have != want.as_ref() {
            changes.insert(
                (*key).to_owned(),
                want.clone().map_or(Value::Null, Value::String),
            );
        }
    }
    (!changes.is_empty()).then(|| json!({"metadata": {"annotations": changes}}))
}

/// Gives Node `name` the `wanted` annotations; returns whether a patch was sent.
pub async fn publish_annotations(
    nodes: &Api<Node>,
    name: &str,
    wanted: &Annotations,
) -> Result<bool, KubernetesError> {
    let annotate = |source| KubernetesError::Annotate {
        node: name.to_owned(),
        source,
    };
    let node = nodes
        .get_opt(name)
        .await
        .map_err(annotate)?
        .ok_or_else(|| KubernetesError::NodeGone {
            node: name.to_owned(),
        })?;
    let Some(patch) = annotation_patch(&node, wanted) else {
        tracing::info!("Node {name}: annotations unchanged");
        return Ok(false);
    };
    nodes
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(annotate)?;
    for (key, value) in wanted {
        match value {
            Some(value) => tracing::info!("Node {name}: annotation {key}={value}"),
            None => tracing::info!("Node {name}: annotation {key} removed if present"),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;
    use crate::config::Platform;

    fn config(yaml: &str) -> AgentConfig {
        AgentConfig::parse(yaml, Platform::Linux).unwrap().config
    }

    fn node(annotations: &[(&str, &str)]) -> Node {
        Node {
            metadata: ObjectMeta {
                name: Some("n1".into()),
                annotations: Some(
                    annotations
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                ),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    const MAC: MacAddr = MacAddr([2, 0, 0x0a, 0x0a, 0, 0x0b]);
    const IP: Ipv4Addr = Ipv4Addr::new(10, 10, 0, 11);

    #[test]
    fn encap_without_transport_interface_publishes_nothing() {
        let wanted = wanted_annotations(&config("trafficEncapMode: encap\n"), MAC, IP);
        assert_eq!(wanted.values().flatten().count(), 0);
        assert_eq!(annotation_patch(&node(&[]), &wanted), None);
        // Stale annotations of an earlier mode are removed.
        assert_eq!(
            annotation_patch(&node(&[(MAC_ANNOTATION, "02:00:0a:0a:00:0b")]), &wanted),
            Some(json!({"metadata": {"annotations": {MAC_ANNOTATION: null}}}))
        );
    }

    #[test]
    fn no_encap_publishes_the_mac_and_a_transport_interface_its_address() {
        let wanted = wanted_annotations(
            &config("trafficEncapMode: noEncap\ntransportInterface: eth1\n"),
            MAC,
            IP,
        );
        let patch = annotation_patch(&node(&[("other", "kept")]), &wanted);
        assert_eq!(
            patch,
            Some(json!({"metadata": {"annotations": {
                MAC_ANNOTATION: "02:00:0a:0a:00:0b",
                TRANSPORT_ADDRESSES_ANNOTATION: "10.10.0.11",
            }}}))
        );
        let done = node(&[
            (MAC_ANNOTATION, "02:00:0a:0a:00:0b"),
            (TRANSPORT_ADDRESSES_ANNOTATION, "10.10.0.11"),
        ]);
        assert_eq!(annotation_patch(&done, &wanted), None);
    }
}
