//! [`NetworkPolicyController`]: feeds Pods, Namespaces and NetworkPolicies into the `netpol`
//! engine and keeps the [`Datapath`]'s NetworkPolicy equal to its result. A burst of changes
//! becomes one recomputation and one datapath update, which carries only what changed (a
//! [`PolicyDelta`]). Where the objects come from — the cluster directory, the Kubernetes API —
//! is the caller's business: it sends [`PolicyInput`]s.
//!
//! In controller mode ([`NetworkPolicyController::given`]) the inputs are antrea-controller's
//! [`Delivery`]s instead, taken into a given-mode engine through a [`PolicyView`]; the same
//! install follows. The view is kept in a [`PolicyStateFile`] after each burst, and read back
//! at the next start, so the first flows enforce it before the controller answers. An update
//! out of order changes nothing and asks the transport for a fresh snapshot (the
//! `resync` [`Notify`] given to [`NetworkPolicyController::given`]).

use std::sync::Arc;

use controlplane::Delivery;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use netpol::{PolicyDelta, PolicyEngine, PolicyKey, Snapshot};
use tokio::sync::{Notify, mpsc, oneshot};

use super::policy_report::PolicyReport;
use super::policy_state_file::PolicyStateFile;
use super::policy_view::PolicyView;

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
    /// Controller mode: what antrea-controller sent.
    Delivery(Arc<Delivery>),
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

/// Controller mode: the view received, where it is kept, and the wish for a fresh one.
#[derive(Debug)]
struct Received {
    view: PolicyView,
    state: PolicyStateFile,
    /// Whether the view changed since it was last written.
    unsaved: bool,
    resync: Arc<Notify>,
}

/// NetworkPolicy for this Node's Pods, from cluster objects to the datapath.
#[derive(Debug)]
pub struct NetworkPolicyController {
    engine: PolicyEngine,
    /// Changes the datapath has not taken yet: a failed install's delta, followed by the newer
    /// ones, until an install succeeds.
    pending: PolicyDelta,
    /// Controller mode's state; `None` when policy is computed here.
    received: Option<Received>,
}

impl NetworkPolicyController {
    /// A controller for the Pods of Node `node_name`, computing from cluster objects.
    pub fn new(node_name: &str) -> NetworkPolicyController {
        NetworkPolicyController {
            engine: PolicyEngine::new(node_name),
            pending: PolicyDelta::default(),
            received: None,
        }
    }

    /// A controller for the Pods of Node `node_name` enforcing what antrea-controller sends
    /// ([`PolicyInput::Delivery`]), starting from the view kept in `state` if there is one;
    /// `resync` is notified when an update comes out of order (the transport then asks for a
    /// fresh snapshot).
    pub fn given(
        node_name: &str,
        state: PolicyStateFile,
        resync: Arc<Notify>,
    ) -> NetworkPolicyController {
        let mut engine = PolicyEngine::given(node_name);
        let mut view = PolicyView::new();
        if let Some(kept) = state.load()
            && let Err(error) = view.receive(&mut engine, &Delivery::Snapshot(kept))
        {
            tracing::error!(
                "NetworkPolicy state {} refused: {error}",
                state.path().display()
            );
        }
        NetworkPolicyController {
            engine,
            pending: PolicyDelta::default(),
            received: Some(Received {
                view,
                state,
                unsaved: false,
                resync,
            }),
        }
    }

    /// Controller mode: whether a view was ever received (now or kept from before); until
    /// then no policy is enforced.
    pub fn has_view(&self) -> bool {
        self.received.as_ref().is_some_and(|r| r.view.received())
    }

    /// Takes one change into the engine (nothing is installed yet). An object the engine
    /// refuses is logged and ignored; for a policy, its previous version stays in force.
    pub fn apply(&mut self, input: &PolicyInput) {
        if let PolicyInput::Delivery(delivery) = input {
            self.receive(delivery);
            return;
        }
        if self.received.is_some() {
            tracing::warn!(
                "NetworkPolicy input ignored: policyComputation is controller ({input:?})"
            );
            return;
        }
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
            // Received above.
            PolicyInput::Delivery(_) => Ok(()),
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

    /// Controller mode: takes a delivery into the view and the engine; one out of order
    /// changes nothing and notifies `resync`.
    fn receive(&mut self, delivery: &Delivery) {
        let Some(received) = &mut self.received else {
            tracing::warn!("NetworkPolicy from a controller ignored: policyComputation is local");
            return;
        };
        match received.view.receive(&mut self.engine, delivery) {
            Ok(()) => received.unsaved = true,
            Err(error) => {
                tracing::warn!(
                    "NetworkPolicy update from the controller out of order ({error}): keeping \
                     the last view, asking for a fresh snapshot"
                );
                received.resync.notify_one();
            }
        }
    }

    /// Controller mode: writes the view received if it changed since it was last written (off
    /// the runtime's workers, and done when this returns, so writes never overtake each other).
    /// A failed write is logged; the next burst writes again.
    pub async fn keep_view(&mut self) {
        let Some(received) = &mut self.received else {
            return;
        };
        if !received.unsaved {
            return;
        }
        match received.state.save(received.view.view()).await {
            Ok(()) => received.unsaved = false,
            Err(error) => tracing::error!("{error}"),
        }
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
        crate::heap::after_change(changes.changed);
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
            self.keep_view().await;
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

/// Passes the controller transport's deliveries on as inputs of the NetworkPolicy controller,
/// until either end closes. When the transport's end closes, the controller keeps enforcing
/// the last view it received.
pub async fn forward_deliveries(
    mut deliveries: mpsc::Receiver<Delivery>,
    inputs: mpsc::Sender<PolicyInput>,
) {
    while let Some(delivery) = deliveries.recv().await {
        if inputs
            .send(PolicyInput::Delivery(Arc::new(delivery)))
            .await
            .is_err()
        {
            return;
        }
    }
    tracing::warn!(
        "the controller's deliveries ended: enforcing the last NetworkPolicy view received"
    );
}

/// A question to a running controller: its report for the Node or one Pod.
#[derive(Debug)]
pub struct PolicyQuery {
    /// The Pod; `None` for every rule.
    pub pod: Option<ObjectKey>,
    /// Where the report (or why there is none) goes.
    pub reply: oneshot::Sender<Result<PolicyReport, String>>,
}
