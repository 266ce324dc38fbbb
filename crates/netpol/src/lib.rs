//! Kubernetes NetworkPolicy (`networking.k8s.io/v1`) for one Node, without I/O.
//!
//! - [`selector`]: label selectors (`matchLabels`, `matchExpressions`).
//! - [`input`]: what the computation reads from Pods, Namespaces and NetworkPolicies.
//! - the result is the model crate's [`model::policy`]: rules as applied-to Pods × peer
//!   addresses × ports, and the Pods isolated per direction (default deny).
//! - [`group`]: selector groups as values — members with their IPs, the policies using them —
//!   and the member changes a Pod or Namespace change makes.
//! - [`membership`]: [`Membership`], the Pods and Namespaces and the groups kept up to date over
//!   them; each member change is reported with the Nodes the Pod ran on, which is what both
//!   one Node's engine and a cluster's controller need.
//! - [`engine`]: [`PolicyEngine`], which keeps the result up to date incrementally: a member
//!   change patches only the rules that read the group, by that member.
//! - [`delta`]: [`PolicyDelta`], what a sync changed (rules added, changed, removed; isolation
//!   gained and lost), for datapaths that apply changes rather than whole results; with
//!   [`edit`]'s [`RuleEdit`] per changed rule, the entries it gained and lost.
//!
//! `docs/netpol.md` states the semantics and how the pipeline renders them.

mod counted;
pub mod delta;
pub mod edit;
pub mod engine;
pub mod error;
pub mod group;
pub mod input;
pub mod membership;
mod policy_state;
pub mod selector;

pub use delta::PolicyDelta;
pub use edit::{RuleEdit, SetEdit};
pub use engine::{PolicyEngine, SyncReport};
pub use error::PolicyError;
pub use membership::{Membership, OnMemberChange, Placement};
pub use model::policy::{
    AddressSet, Direction, Isolation, Peers, PodKey, PolicyKey, PortMatch, Ports, Protocol, Rule,
    RuleId, RulePart, Snapshot,
};
