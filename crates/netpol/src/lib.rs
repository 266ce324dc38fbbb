//! Kubernetes NetworkPolicy (`networking.k8s.io/v1`) for one Node, without I/O.
//!
//! - [`selector`]: label selectors (`matchLabels`, `matchExpressions`).
//! - [`input`]: what the computation reads from Pods, Namespaces and NetworkPolicies.
//! - the result is the model crate's [`model::policy`]: rules as applied-to Pods × peer
//!   addresses × ports, and the Pods isolated per direction (default deny).
//! - [`engine`]: [`PolicyEngine`], which keeps the result up to date incrementally: a change
//!   recomputes only the policies whose selector groups it touches.
//! - [`delta`]: [`PolicyDelta`], what a sync changed (rules added, changed, removed; isolation
//!   gained and lost), for datapaths that apply changes rather than whole results.
//!
//! `docs/netpol.md` states the semantics and how the pipeline renders them.

pub mod delta;
pub mod engine;
pub mod error;
pub mod input;
pub mod selector;

pub use delta::PolicyDelta;
pub use engine::{PolicyEngine, SyncReport};
pub use error::PolicyError;
pub use model::policy::{
    AddressSet, Direction, Isolation, Peers, PodKey, PolicyKey, PortMatch, Ports, Protocol, Rule,
    RuleId, RulePart, Snapshot,
};
