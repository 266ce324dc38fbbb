//! The lab cluster: Namespaces x, y, z labelled `ns=<name>`, Pods a, b, c in each labelled
//! `pod=<name>` and serving TCP and UDP on ports 80 and 81 (named `serve-<port>-<protocol>`);
//! x and y run on Node n1, z on n2. Label changes a scenario makes are applied on top, and the
//! Kubernetes objects of the result are given as JSON (which is also YAML).

use std::collections::BTreeMap;
use std::fmt;
use std::net::Ipv4Addr;

use serde_json::{Value, json};

/// The lab's Namespaces.
pub const NAMESPACES: [&str; 3] = ["x", "y", "z"];

/// The Pod names in every Namespace.
pub const POD_NAMES: [&str; 3] = ["a", "b", "c"];

/// Node n1's Pod CIDR (Namespaces x and y).
pub const N1_POD_CIDR: &str = "10.244.1.0/24";

/// Node n2's Pod CIDR (Namespace z).
pub const N2_POD_CIDR: &str = "10.244.2.0/24";

/// A Pod of the lab: `(Namespace, name)`.
pub type Pod = (&'static str, &'static str);

/// A transport protocol the lab serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Protocol {
    Tcp,
    Udp,
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
        })
    }
}

/// A port every lab Pod serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Port {
    pub protocol: Protocol,
    pub number: u16,
}

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.protocol, self.number)
    }
}

/// The ports every Pod serves and every probe tries.
pub const PORTS: [Port; 4] = [
    Port {
        protocol: Protocol::Tcp,
        number: 80,
    },
    Port {
        protocol: Protocol::Tcp,
        number: 81,
    },
    Port {
        protocol: Protocol::Udp,
        number: 80,
    },
    Port {
        protocol: Protocol::Udp,
        number: 81,
    },
];

/// The nine Pods in lab order (x/a, x/b, … z/c).
pub fn pods() -> Vec<Pod> {
    NAMESPACES
        .iter()
        .flat_map(|ns| POD_NAMES.iter().map(move |name| (*ns, *name)))
        .collect()
}

/// The position of `pod` in [`pods`]. Panics for a Pod outside the lab (a bug in a test).
pub fn index(pod: Pod) -> usize {
    pods()
        .iter()
        .position(|p| *p == pod)
        .unwrap_or_else(|| panic!("{}/{} is not a lab Pod", pod.0, pod.1))
}

/// The Node `pod` runs on: z on n2, the others on n1.
pub fn node(pod: Pod) -> &'static str {
    if pod.0 == "z" { "n2" } else { "n1" }
}

/// The Pods of Node `node`, in lab order (the order the tests add them in).
pub fn pods_on(node_name: &str) -> Vec<Pod> {
    pods()
        .into_iter()
        .filter(|p| node(*p) == node_name)
        .collect()
}

/// The Pod's address: what host-local IPAM gives when each Node's Pods are added in lab order
/// (the gateway holds `.1`): x/a..y/c are 10.244.1.2-7, z/a..z/c 10.244.2.2-4.
pub fn ip(pod: Pod) -> Ipv4Addr {
    let on_node = pods_on(node(pod));
    let offset = on_node.iter().position(|p| *p == pod).unwrap_or(0) as u8;
    let subnet = if node(pod) == "n1" { 1 } else { 2 };
    Ipv4Addr::new(10, 244, subnet, 2 + offset)
}

/// A label a scenario sets (`Some`) or removes (`None`) on top of the lab's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelChange {
    /// A Pod's label `key`.
    Pod(Pod, &'static str, Option<&'static str>),
    /// A Namespace's label `key`.
    Namespace(&'static str, &'static str, Option<&'static str>),
}

type Labels = BTreeMap<&'static str, &'static str>;

/// The lab's labels after a scenario's changes, and the Kubernetes objects they make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    pod_labels: BTreeMap<Pod, Labels>,
    namespace_labels: BTreeMap<&'static str, Labels>,
}

impl Cluster {
    /// The lab with `changes` applied in order.
    pub fn new(changes: &[LabelChange]) -> Cluster {
        let mut cluster = Cluster {
            pod_labels: pods()
                .into_iter()
                .map(|p| (p, Labels::from([("pod", p.1)])))
                .collect(),
            namespace_labels: NAMESPACES
                .iter()
                .map(|ns| (*ns, Labels::from([("ns", *ns)])))
                .collect(),
        };
        for change in changes {
            let (labels, key, value) = match *change {
                LabelChange::Pod(pod, key, value) => {
                    (cluster.pod_labels.entry(pod).or_default(), key, value)
                }
                LabelChange::Namespace(ns, key, value) => {
                    (cluster.namespace_labels.entry(ns).or_default(), key, value)
                }
            };
            match value {
                Some(value) => labels.insert(key, value),
                None => labels.remove(key),
            };
        }
        cluster
    }

    /// The Namespace object of `ns`.
    pub fn namespace_object(&self, ns: &str) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": ns, "labels": self.namespace_labels.get(ns)},
        })
    }

    /// The Pod object of `pod` on its Node, Running with address `ip` once it has one.
    pub fn pod_object(&self, pod: Pod, ip: Option<Ipv4Addr>) -> Value {
        let port = |protocol: Protocol, number: u16| {
            json!({
                "name": format!("serve-{number}-{}", protocol.to_string().to_lowercase()),
                "containerPort": number,
                "protocol": protocol.to_string(),
            })
        };
        let mut object = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"namespace": pod.0, "name": pod.1, "labels": self.pod_labels.get(&pod)},
            "spec": {
                "nodeName": node(pod),
                "containers": [{
                    "name": "serve",
                    "ports": PORTS.iter().map(|p| port(p.protocol, p.number)).collect::<Vec<_>>(),
                }],
            },
        });
        if let Some(ip) = ip {
            object["status"] = json!({"phase": "Running", "podIP": ip.to_string()});
        }
        object
    }

    /// Every Namespace and Pod object (Pods with their lab address when `with_ips`).
    pub fn objects(&self, with_ips: bool) -> Vec<Value> {
        let namespaces = NAMESPACES.iter().map(|ns| self.namespace_object(ns));
        let pods = pods()
            .into_iter()
            .map(|p| self.pod_object(p, with_ips.then(|| ip(p))));
        namespaces.chain(pods).collect()
    }
}

/// A `v1` `List` of `items`, the form the cluster directory reads many objects in.
pub fn list(items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_follow_the_order_pods_are_added_in() {
        assert_eq!(ip(("x", "a")), Ipv4Addr::new(10, 244, 1, 2));
        assert_eq!(ip(("y", "c")), Ipv4Addr::new(10, 244, 1, 7));
        assert_eq!(ip(("z", "a")), Ipv4Addr::new(10, 244, 2, 2));
        assert_eq!(ip(("z", "c")), Ipv4Addr::new(10, 244, 2, 4));
    }

    #[test]
    fn label_changes_set_and_remove() {
        let cluster = Cluster::new(&[
            LabelChange::Pod(("x", "b"), "pod", Some("c")),
            LabelChange::Pod(("x", "b"), "role", Some("db")),
            LabelChange::Namespace("z", "ns", None),
        ]);
        assert_eq!(
            cluster.pod_object(("x", "b"), None)["metadata"]["labels"],
            json!({"pod": "c", "role": "db"})
        );
        assert_eq!(
            cluster.namespace_object("z")["metadata"]["labels"],
            json!({})
        );
        assert_eq!(
            cluster.namespace_object("y")["metadata"]["labels"],
            json!({"ns": "y"})
        );
    }
}
