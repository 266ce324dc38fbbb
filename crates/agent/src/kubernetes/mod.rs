//! The agent's Kubernetes layer (kube-rs): the connection ([`connection`]: kubeconfig or
//! in-cluster service account, `kubeAPIServerOverride`, rustls), this Node's object ([`node`]:
//! waiting for its Pod CIDR, publishing the annotations peers need), the cluster source
//! ([`source`]: Nodes and this Node's Pods into the same store the cluster directory fills),
//! the shared reflectors of the policy and Service kinds ([`reflectors`]) and the
//! NetworkPolicy controller's inputs from them ([`policy_feed`]), which objects a store changed
//! for its reader ([`store_changes`]), Pod Events
//! ([`events`]), the session tying them to the agent's life ([`session`]) and, in controller
//! mode, the watch of this Node's span at antrea-controller ([`controller_link`]).

pub mod connection;
pub mod controller_link;
pub mod error;
pub mod events;
pub mod node;
pub mod policy_feed;
pub mod reflectors;
pub mod session;
pub mod source;
pub mod store_changes;

pub use connection::ApiAccess;
pub use controller_link::link_to_controller;
pub use error::KubernetesError;
pub use node::{NodeWait, TRANSPORT_ADDRESSES_ANNOTATION};
pub use policy_feed::PolicyFeed;
pub use reflectors::{Keep, Kinds, PolicyReflectors, SharedReflectors};
pub use session::{ApiServices, KubernetesSession, SYNC_WAIT};
pub use source::{KubernetesSource, WatchApplier, Watched};
