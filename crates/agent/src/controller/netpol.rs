//! [`NetworkPolicyController`]: feeds Pods, Namespaces and NetworkPolicies into the `netpol`
//! engine and keeps the [`Datapath`]'s NetworkPolicy equal to its result. A burst of changes
//! becomes one recomputation and one datapath update, which carries only what changed (a
//! [`PolicyDelta`]). Where the objects come from — the cluster directory, the Kubernetes API —
//! is the caller's business: it sends [`PolicyInput`]s.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use netpol::{PolicyDelta, PolicyEngine, PolicyKey, Snapshot};
use tokio::sync::{mpsc, oneshot};

use super::policy_report::PolicyReport;

use crate::cluster::{ClusterEvent, ObjectKey, Store};
use crate::cluster::{namespace_key, pod_key, policy_key};
use crate::datapath::{Datapath, PolicyChanges};
use crate::error::AgentError;
use crate::tasks::Requeue;

/// A change the controller reacts to.
#[derive(Debug, Clone)]
pub enum PolicyInput {
    Pod(Arc<Pod>),
    PodDeleted(ObjectKey),
    Namespace(Arc<Namespace>),
    NamespaceDeleted(String),
    Policy(Arc<NetworkPolicy>),
    PolicyDeleted(ObjectKey),
}

impl PolicyInput {
    /// The input a cluster event amounts to (Pods, Namespaces and NetworkPolicies; Nodes do
    /// not matter to policy).
    pub fn of_event(event: &ClusterEvent) -> Option<PolicyInput> {
        match event {
            ClusterEvent::PodAdded(pod) | ClusterEvent::PodUpdated { new: pod, .. } => {
                Some(PolicyInput::Pod(pod.clone()))
            }
            ClusterEvent::PodDeleted(pod) => Some(PolicyInput::PodDeleted(pod_key(pod))),
            ClusterEvent::NamespaceAdded(ns) | ClusterEvent::NamespaceUpdated { new: ns, .. } => {
                Some(PolicyInput::Namespace(ns.clone()))
            }
            ClusterEvent::NamespaceDeleted(ns) => {
                Some(PolicyInput::NamespaceDeleted(namespace_key(ns)))
            }
            ClusterEvent::PolicyAdded(policy) | ClusterEvent::PolicyUpdated { new: policy, .. } => {
                Some(PolicyInput::Policy(policy.clone()))
            }
            ClusterEvent::PolicyDeleted(policy) => {
                Some(PolicyInput::PolicyDeleted(policy_key(policy)))
            }
            ClusterEvent::NodeAdded(_)
            | ClusterEvent::NodeUpdated { .. }
            | ClusterEvent::NodeDeleted(_)
            | ClusterEvent::Synced => None,
        }
    }

    /// The inputs that make a new controller see what `store` holds: Namespaces, Pods, then
    /// NetworkPolicies.
    pub fn of_store(store: &Store) -> Vec<PolicyInput> {
        let namespaces = store.namespaces().into_iter().map(PolicyInput::Namespace);
        let pods = store.pods().into_iter().map(PolicyInput::Pod);
        let policies = store.policies().into_iter().map(PolicyInput::Policy);
        namespaces.chain(pods).chain(policies).collect()
    }
}

fn key(k: &ObjectKey) -> PolicyKey {
    PolicyKey::new(k.namespace.clone(), k.name.clone())
}

/// NetworkPolicy for this Node's Pods, from cluster objects to the datapath.
#[derive(Debug)]
pub struct NetworkPolicyController {
    engine: PolicyEngine,
    /// Changes the datapath has not taken yet: a failed install's delta, followed by the newer
    /// ones, until an install succeeds.
    pending: PolicyDelta,
}

impl NetworkPolicyController {
    /// A controller for the Pods of Node `node_name`.
    pub fn new(node_name: &str) -> NetworkPolicyController {
        NetworkPolicyController {
            engine: PolicyEngine::new(node_name),
            pending: PolicyDelta::default(),
        }
    }

    /// Takes one change into the engine (nothing is installed yet). An object the engine
    /// refuses is logged and ignored; for a policy, its previous version stays in force.
    pub fn apply(&mut self, input: &PolicyInput) {
        let result = match input {
            PolicyInput::Pod(pod) => self.engine.upsert_pod(pod),
            PolicyInput::PodDeleted(k) => {
                self.engine.remove_pod(&key(k));
                Ok(())
            }
            PolicyInput::Namespace(ns) => self.engine.upsert_namespace(ns),
            PolicyInput::NamespaceDeleted(name) => {
                self.engine.remove_namespace(name);
                Ok(())
            }
            PolicyInput::Policy(policy) => self.engine.upsert_policy(policy),
            PolicyInput::PolicyDeleted(k) => {
                self.engine.remove_policy(&key(k));
                Ok(())
            }
        };
        if let Err(error) = result {
            tracing::warn!("NetworkPolicy input ignored: {error}");
        }
    }

    /// The result for the current inputs, for bring-up, which has the datapath enforce it
    /// whole from the first flow on: later installs send what changes after it.
    pub fn snapshot(&mut self) -> &Snapshot {
        self.engine.sync();
        self.pending = PolicyDelta::default();
        self.engine.snapshot()
    }

    /// Recomputes what the inputs changed and has `datapath` apply the change. A failed install
    /// keeps its delta, and the next install sends it with what changed since.
    pub async fn install<D: Datapath>(
        &mut self,
        datapath: &D,
    ) -> Result<PolicyChanges, AgentError> {
        let report = self.engine.sync();
        self.pending.then(report.delta);
        let changes = datapath.update_policy(&self.pending).await?;
        tracing::info!(
            "NetworkPolicy: {} policies recomputed, {} rules changed, {} rules rendered, {} rules, {} flow mods",
            report.policies,
            self.pending.rules(),
            changes.rendered,
            changes.rules,
            changes.changed
        );
        self.pending = PolicyDelta::default();
        Ok(changes)
    }

    /// What the controller enforces, for the whole Node or for `pod`, with the datapath's
    /// counters.
    pub async fn report<D: Datapath>(
        &mut self,
        datapath: &D,
        pod: Option<&ObjectKey>,
    ) -> Result<PolicyReport, AgentError> {
        let enforcement = datapath.policy_enforcement().await?;
        let pod = pod.map(|k| {
            let ip = self.engine.pod(&key(k)).and_then(|info| info.ip);
            (k.to_string(), ip)
        });
        Ok(PolicyReport::new(self.engine.snapshot(), &enforcement, pod))
    }

    /// Applies inputs until the input channel closes; after each burst (everything queued),
    /// installs once. A failed install is retried by `requeue` with backoff, with no new input
    /// needed; inputs arriving meanwhile are applied and folded into that retry. Between
    /// installs it answers `queries`.
    pub async fn run<D: Datapath>(
        mut self,
        datapath: Arc<D>,
        mut inputs: mpsc::Receiver<PolicyInput>,
        mut queries: mpsc::Receiver<PolicyQuery>,
        mut requeue: Requeue,
    ) {
        let mut answering = true;
        loop {
            tokio::select! {
                input = inputs.recv() => {
                    let Some(input) = input else { return };
                    self.apply(&input);
                    while let Ok(more) = inputs.try_recv() {
                        self.apply(&more);
                    }
                    if requeue.is_owed() {
                        continue;
                    }
                }
                () = requeue.due() => {
                    while let Ok(more) = inputs.try_recv() {
                        self.apply(&more);
                    }
                    tracing::info!("retrying the failed NetworkPolicy install");
                }
                query = queries.recv(), if answering => {
                    match query {
                        Some(query) => {
                            let report = self.report(&*datapath, query.pod.as_ref()).await.map_err(|e| e.to_string());
                            let _ = query.reply.send(report);
                        }
                        None => answering = false,
                    }
                    continue;
                }
            }
            match self.install(&*datapath).await {
                Ok(_) => requeue.succeeded(),
                Err(error) => {
                    let delay = requeue.failed();
                    tracing::error!(
                        "NetworkPolicy flows not installed (retried in {delay:?}): {error}"
                    );
                }
            }
        }
    }
}

/// A question to a running controller: its report for the Node or one Pod.
#[derive(Debug)]
pub struct PolicyQuery {
    /// The Pod; `None` for every rule.
    pub pod: Option<ObjectKey>,
    /// Where the report (or why there is none) goes.
    pub reply: oneshot::Sender<Result<PolicyReport, String>>,
}
