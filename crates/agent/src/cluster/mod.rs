//! The cluster source: the Nodes, Pods, Namespaces and NetworkPolicies the agent acts on, whether they come from the
//! Kubernetes API or, in the lab, from a directory of YAML files.
//!
//! Every source feeds a [`StoreWriter`], which keeps the objects keyed by name (Nodes,
//! Namespaces) or namespace/name (Pods, NetworkPolicies) and turns each change into a [`ClusterEvent`]; applying the same
//! object twice changes nothing and emits nothing, so a source may re-list at will. Readers use
//! the shared [`Store`] (`get`, `list`, `is_synced`), in the manner of kube-runtime's reflector
//! stores, so controllers can reconcile from the store whenever an event wakes them.

mod decode;
mod directory;
mod event;
mod source;
mod store;

pub use decode::{ClusterObject, DecodeProblem, DecodedFile, Position, decode_documents};
pub use directory::{DirectorySource, PollOutcome, SourceProblem};
pub use event::{ClusterEvent, ObjectKey};
pub use source::{ClusterSource, POLL_INTERVAL};
pub use store::{Store, StoreWriter};
pub(crate) use store::{namespace_key, pod_key, policy_key};

pub use k8s_openapi::api::core::v1::{Node, Pod};
