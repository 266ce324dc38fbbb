//! What a cluster source reports: an object appeared, changed or went away, or the first full
//! view of the cluster is complete.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;

use super::store::{namespace_key, node_key, pod_key, policy_key};

/// A namespaced object's identity (a Pod's, a NetworkPolicy's): its namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// The namespace.
    pub namespace: String,
    /// The name within the namespace.
    pub name: String,
}

impl ObjectKey {
    /// The key `namespace/name`.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> ObjectKey {
        ObjectKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// One change to the cluster as the agent sees it. Updates carry the previous object so a
/// controller can tell what changed.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterEvent {
    /// A Node appeared.
    NodeAdded(Arc<Node>),
    /// A Node changed.
    NodeUpdated {
        /// The Node before the change.
        old: Arc<Node>,
        /// The Node now.
        new: Arc<Node>,
    },
    /// A Node went away (the object as last seen).
    NodeDeleted(Arc<Node>),
    /// A Pod appeared.
    PodAdded(Arc<Pod>),
    /// A Pod changed.
    PodUpdated {
        /// The Pod before the change.
        old: Arc<Pod>,
        /// The Pod now.
        new: Arc<Pod>,
    },
    /// A Pod went away (the object as last seen).
    PodDeleted(Arc<Pod>),
    /// A Namespace appeared.
    NamespaceAdded(Arc<Namespace>),
    /// A Namespace changed.
    NamespaceUpdated {
        /// The Namespace before the change.
        old: Arc<Namespace>,
        /// The Namespace now.
        new: Arc<Namespace>,
    },
    /// A Namespace went away (the object as last seen).
    NamespaceDeleted(Arc<Namespace>),
    /// A NetworkPolicy appeared.
    PolicyAdded(Arc<NetworkPolicy>),
    /// A NetworkPolicy changed.
    PolicyUpdated {
        /// The NetworkPolicy before the change.
        old: Arc<NetworkPolicy>,
        /// The NetworkPolicy now.
        new: Arc<NetworkPolicy>,
    },
    /// A NetworkPolicy went away (the object as last seen).
    PolicyDeleted(Arc<NetworkPolicy>),
    /// The source has delivered its first complete view: the store holds the whole cluster.
    Synced,
}

impl fmt::Display for ClusterEvent {
    /// A one-line summary such as `NodeAdded node1` or `PodDeleted default/web-0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterEvent::NodeAdded(n) => write!(f, "NodeAdded {}", node_key(n)),
            ClusterEvent::NodeUpdated { new, .. } => write!(f, "NodeUpdated {}", node_key(new)),
            ClusterEvent::NodeDeleted(n) => write!(f, "NodeDeleted {}", node_key(n)),
            ClusterEvent::PodAdded(p) => write!(f, "PodAdded {}", pod_key(p)),
            ClusterEvent::PodUpdated { new, .. } => write!(f, "PodUpdated {}", pod_key(new)),
            ClusterEvent::PodDeleted(p) => write!(f, "PodDeleted {}", pod_key(p)),
            ClusterEvent::NamespaceAdded(n) => write!(f, "NamespaceAdded {}", namespace_key(n)),
            ClusterEvent::NamespaceUpdated { new, .. } => {
                write!(f, "NamespaceUpdated {}", namespace_key(new))
            }
            ClusterEvent::NamespaceDeleted(n) => {
                write!(f, "NamespaceDeleted {}", namespace_key(n))
            }
            ClusterEvent::PolicyAdded(p) => write!(f, "PolicyAdded {}", policy_key(p)),
            ClusterEvent::PolicyUpdated { new, .. } => {
                write!(f, "PolicyUpdated {}", policy_key(new))
            }
            ClusterEvent::PolicyDeleted(p) => write!(f, "PolicyDeleted {}", policy_key(p)),
            ClusterEvent::Synced => f.write_str("Synced"),
        }
    }
}
