//! The agent–controller protocol's content: what antrea-controller sends a Node so that the
//! Node holds the NetworkPolicies applied to its Pods and the groups they read, and nothing
//! else.
//!
//! - [`NodeUpdate`]: one change to a Node's view, in an order that is part of the contract;
//!   [`Member`]: a group member as a Node needs it.
//! - [`NodeView`]: a Node's view built from its updates, refusing any out of order; it is also
//!   what a snapshot carries and what an agent persists.
//! - [`Delivery`]: what an agent is handed, a snapshot or updates.
//! - [`auth`]: [`Authenticator`], who holds a watcher's token and so which Node it may watch;
//!   [`token_review`]: the TokenReview that tells who holds a token, for the controller's
//!   authenticator and the agent API's.
//!
//! Every type here is serde-serializable; the wire and the agent's persisted state use the same
//! encoding. The transport:
//!
//! - [`wire`]: the gRPC method, its messages ([`WatchRequest`], [`WatchEvent`]) and their JSON
//!   codec, which checks what it decodes;
//! - [`hub`]: the controller's fan-out from its computation to each Node's watchers, with
//!   versions, resume and bounded queues;
//! - [`server`]: the controller's gRPC service and TLS server; [`client`]: the agent's watch,
//!   with reconnects; [`tls`]: both ends' rustls configurations; [`certificates`]: a CA and
//!   the serving certificates it signs.
//!
//! `docs/controller.md` describes the protocol.

pub mod auth;
pub mod certificates;
pub mod client;
mod delivery;
pub mod hub;
pub mod server;
pub mod tls;
pub mod token_review;
mod update;
mod view;
pub mod wire;

pub use auth::{AuthError, Authenticator, Watcher};
pub use delivery::Delivery;
pub use update::{Member, NodeUpdate};
pub use view::{NodeView, OutOfOrder};
pub use wire::{Resume, WatchEvent, WatchRequest};
