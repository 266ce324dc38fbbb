//! [`ClusterSource`]: where the cluster's Nodes and Pods come from — the Kubernetes API or the
//! lab's directory. Both fill a [`Store`] through the same [`StoreWriter`](super::StoreWriter)
//! and send the same [`ClusterEvent`]s, so everything downstream is one mechanism.

use std::time::Duration;

use tokio::sync::mpsc;

use super::directory::DirectorySource;
use super::event::ClusterEvent;
use super::store::Store;
use crate::kubernetes::KubernetesSource;

/// How often the cluster directory is read.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// A running agent's cluster source.
#[derive(Debug)]
pub enum ClusterSource {
    /// The lab's directory of YAML files, read every [`POLL_INTERVAL`].
    Directory(DirectorySource),
    /// The API server's Nodes and this Node's Pods.
    Kubernetes(Box<KubernetesSource>),
}

impl ClusterSource {
    /// The store the source fills.
    pub fn store(&self) -> Store {
        match self {
            ClusterSource::Directory(source) => source.store(),
            ClusterSource::Kubernetes(source) => source.store(),
        }
    }

    /// Sends every change until the receiver is dropped.
    pub async fn run(self, events: mpsc::Sender<ClusterEvent>) {
        match self {
            ClusterSource::Directory(source) => source.run(POLL_INTERVAL, events).await,
            ClusterSource::Kubernetes(source) => source.run(events).await,
        }
    }
}
