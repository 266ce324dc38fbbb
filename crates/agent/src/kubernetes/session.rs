//! [`KubernetesSession`]: what the agent does with the API server, in order: connect, wait for
//! this Node, list the cluster into the store ([`KubernetesSource`]), publish this Node's
//! annotations after bring-up, then run the shared reflectors and report Pod Events.

use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::{Api, Client};
use model::NodeNetwork;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::connection::{ApiAccess, connect};
use super::error::KubernetesError;
use super::events::report_pod_events;
use super::node::{NodeWait, publish_annotations, wait_for_node, wanted_annotations};
use super::reflectors::{Keep, Kinds, SharedReflectors};
use super::source::KubernetesSource;
use crate::cluster::Store;
use crate::cniserver::AddOutcome;
use crate::config::AgentConfig;
use crate::node::NodeInfo;

/// How long the first list of Nodes and of this Node's Pods may take.
pub const SYNC_WAIT: Duration = Duration::from_secs(60);

/// A connection to the API server on behalf of one Node.
#[derive(Clone)]
pub struct KubernetesSession {
    client: Client,
    node_name: String,
    address: Option<String>,
}

impl std::fmt::Debug for KubernetesSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubernetesSession")
            .field("node_name", &self.node_name)
            .finish_non_exhaustive()
    }
}

/// The API-backed services running beside the controllers; they stop when this is dropped.
#[derive(Debug)]
pub struct ApiServices {
    /// The shared reflectors (readiness can wait for [`SharedReflectors::all_synced`]).
    pub reflectors: SharedReflectors,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for ApiServices {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl KubernetesSession {
    /// Connects with `kubeconfig` (else the configuration's `clientConnection.kubeconfig`, else
    /// in-cluster) and the configuration's `kubeAPIServerOverride`.
    pub async fn connect(
        config: &AgentConfig,
        kubeconfig: Option<PathBuf>,
        node_name: &str,
    ) -> Result<KubernetesSession, KubernetesError> {
        let access = ApiAccess {
            kubeconfig: kubeconfig.or_else(|| config.kubeconfig.clone()),
            server_override: config.kube_api_server_override.clone(),
        };
        let (client, address) = connect(&access).await?;
        Ok(KubernetesSession {
            address: Some(address),
            ..KubernetesSession::with_client(client, node_name)
        })
    }

    /// A session over an existing client (its server's address unknown).
    pub fn with_client(client: Client, node_name: &str) -> KubernetesSession {
        KubernetesSession {
            client,
            node_name: node_name.to_owned(),
            address: None,
        }
    }

    /// The API server's `host:port` as this session reaches it (the takeover watchdog probes
    /// it); `None` for a session made [`with_client`](Self::with_client).
    pub fn address(&self) -> Option<&str> {
        self.address.as_deref()
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Waits for this Node's Pod CIDR and InternalIP.
    pub async fn wait_for_node(&self, wait: NodeWait) -> Result<NodeInfo, KubernetesError> {
        wait_for_node(
            &Api::<Node>::all(self.client.clone()),
            &self.node_name,
            wait,
        )
        .await
    }

    /// The cluster source, listed once (for at most `wait`): its store holds every Node and
    /// this Node's Pods.
    pub async fn listed_source(&self, wait: Duration) -> Result<KubernetesSource, KubernetesError> {
        let mut source = KubernetesSource::new(self.client.clone(), &self.node_name);
        source.wait_synced(wait).await?;
        Ok(source)
    }

    /// Publishes the annotations peers need about this Node (see [`super::node`]).
    pub async fn publish_annotations(
        &self,
        config: &AgentConfig,
        network: &NodeNetwork,
    ) -> Result<bool, KubernetesError> {
        let wanted = wanted_annotations(config, network.node_mac, network.node_ip.addr());
        publish_annotations(
            &Api::<Node>::all(self.client.clone()),
            &self.node_name,
            &wanted,
        )
        .await
    }

    /// Starts the shared reflectors of `kinds` and the Pod Event reporter (fed by the returned
    /// sender, with Pod UIDs from `store`).
    pub fn start_services(
        &self,
        store: Store,
        kinds: Kinds,
    ) -> (ApiServices, mpsc::UnboundedSender<AddOutcome>) {
        let reflectors = SharedReflectors::start(&self.client, Keep::WhatControllersUse, kinds);
        let (adds_tx, adds_rx) = mpsc::unbounded_channel();
        let events = tokio::spawn(report_pod_events(
            self.client.clone(),
            self.node_name.clone(),
            store,
            adds_rx,
        ));
        (
            ApiServices {
                reflectors,
                tasks: vec![events],
            },
            adds_tx,
        )
    }
}
