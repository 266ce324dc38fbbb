//! [`KubernetesError`]: what went wrong talking to the Kubernetes API, naming the object and the
//! step so an operator can act on the message alone.

use std::path::PathBuf;
use std::time::Duration;

/// A failure of the Kubernetes layer.
#[derive(Debug, thiserror::Error)]
pub enum KubernetesError {
    #[error("kubeconfig {path}: {source}")]
    Kubeconfig {
        path: PathBuf,
        #[source]
        source: kube::config::KubeconfigError,
    },
    #[error("in-cluster configuration (service account token and CA): {0}")]
    InCluster(#[source] kube::config::InClusterError),
    #[error(
        "kubeAPIServerOverride {value:?} is not an API server address (https://host:port or host:port): {reason}"
    )]
    BadOverride { value: String, reason: String },
    #[error("Kubernetes client: {0}")]
    Client(#[source] kube::Error),
    #[error("Node {node:?} did not get a Pod CIDR and an InternalIP within {waited:?}: {reason}")]
    NodeNotReady {
        node: String,
        waited: Duration,
        reason: String,
    },
    #[error("Node {node:?} vanished while its annotations were published")]
    NodeGone { node: String },
    #[error("patching the annotations of Node {node:?}: {source}")]
    Annotate {
        node: String,
        #[source]
        source: kube::Error,
    },
    #[error("the cluster's Nodes and this Node's Pods were not listed within {waited:?}: {reason}")]
    NotSynced { waited: Duration, reason: String },
}
