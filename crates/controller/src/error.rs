//! [`ControllerError`]: why antrea-controller stopped.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error("cannot read kubeconfig {path}: {source}")]
    Kubeconfig {
        path: PathBuf,
        source: kube::config::KubeconfigError,
    },
    #[error("no kubeconfig given and not in a cluster: {0}")]
    InCluster(#[source] kube::config::InClusterError),
    #[error("cannot make a Kubernetes client: {0}")]
    Client(#[source] kube::Error),
    #[error("lost the Lease {lease}: {holder:?} holds it")]
    LostLease { lease: String, holder: String },
    #[error("the Lease {lease} could not be renewed for {after:?} (its duration): {last_error}")]
    RenewalFailed {
        lease: String,
        after: Duration,
        last_error: String,
    },
    #[error("no serving identity: {0}")]
    Tls(#[from] crate::tls::TlsError),
    #[error("cannot listen on {address}: {source}")]
    Bind {
        address: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Serve(controlplane::server::ServeError),
}
