//! [`Scenario`]: one state of the lab — its NetworkPolicies and label changes — and what
//! Kubernetes allows in it, split into what the destination's ingress isolation admits and what
//! the source's egress isolation admits, so that both the whole cluster's answer and one Node's
//! own decisions follow from it.

use serde_json::{Value, json};

use crate::model::{Cluster, LabelChange, Pod, Port, node};
use crate::reachability::Reachability;

/// Whether one side's policies admit a connection from the first Pod to the second on a port.
pub type Rule = fn(Pod, Pod, Port) -> bool;

/// A NetworkPolicy of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub namespace: &'static str,
    pub name: &'static str,
    /// The policy's `spec`.
    pub spec: Value,
}

impl Policy {
    /// The NetworkPolicy object.
    pub fn object(&self) -> Value {
        json!({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {"namespace": self.namespace, "name": self.name},
            "spec": self.spec,
        })
    }
}

/// A state of the lab and what it allows. Scenarios are applied in order, each replacing the
/// previous one's policies (a policy with the same Namespace and name is updated, one missing
/// is deleted) and labels (changes are relative to the lab's own labels).
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: &'static str,
    pub policies: Vec<Policy>,
    pub labels: Vec<LabelChange>,
    /// What the destination's ingress policies admit (true where it is not isolated).
    pub ingress: Rule,
    /// What the source's egress policies admit (true where it is not isolated).
    pub egress: Rule,
}

impl Scenario {
    /// The lab's objects in this scenario.
    pub fn cluster(&self) -> Cluster {
        Cluster::new(&self.labels)
    }

    /// Whether a new connection from `s` to `d` on `port` gets through the cluster: the
    /// source's egress and the destination's ingress both admit it. A Pod reaching its own
    /// address never leaves its network namespace, so policy does not apply to it.
    pub fn allows(&self, s: Pod, d: Pod, port: Port) -> bool {
        s == d || ((self.egress)(s, d, port) && (self.ingress)(s, d, port))
    }

    /// What Node `node_name` decides on its own: the egress side for its source Pods, the
    /// ingress side for its destination Pods; `None` when neither end is on it.
    pub fn allows_at(&self, node_name: &str, s: Pod, d: Pod, port: Port) -> Option<bool> {
        let (from_here, to_here) = (node(s) == node_name, node(d) == node_name);
        (from_here || to_here).then(|| {
            (!from_here || (self.egress)(s, d, port)) && (!to_here || (self.ingress)(s, d, port))
        })
    }

    /// The whole cluster's expected table ([`Scenario::allows`]).
    pub fn expected(&self) -> Reachability {
        Reachability::from_fn(|s, d, port| Some(self.allows(s, d, port)))
    }

    /// Node `node_name`'s expected table ([`Scenario::allows_at`]).
    pub fn expected_at(&self, node_name: &str) -> Reachability {
        Reachability::from_fn(|s, d, port| self.allows_at(node_name, s, d, port))
    }
}
