//! antrea-controller's computation: the cluster's NetworkPolicies, their selector groups, and
//! each one's *span*, the Nodes that need it.
//!
//! - [`span`]: [`SpanComputation`], which takes Pods, Namespaces and NetworkPolicies as the
//!   agents' engine does (the same `netpol` inputs and group membership), and gives each Node the
//!   [`NodeUpdate`]s that keep its view — the policies applied to its Pods and the groups those
//!   policies read, with their members — equal to the cluster's, at the cost of what changed.
//!
//! - [`auth`]: [`auth::TokenReviewAuthenticator`], who holds an agent's token and which
//!   Node's span it may watch, asked of the API server.
//! - [`feed`]: the cluster's objects, watched through kube-rs, into the computation.
//! - [`leader`]: leader election through a Lease; [`run`]: one replica, which computes and
//!   serves only while it holds the Lease.
//! - [`serve`]: the computation driving the protocol's hub, and the gRPC server over TLS;
//!   [`tls`]: its serving identity (files, or a CA kept in a Secret and published in the
//!   `antrea-ca` ConfigMap).
//!
//! `docs/controller.md` states the model and what a Node receives.

pub mod auth;
pub mod error;
pub mod feed;
pub mod leader;
pub mod run;
pub mod serve;
pub mod span;
pub mod tls;

pub use span::{Member, NodeUpdate, NodeView, SpanComputation, Summary};
