//! Controllers: they watch the cluster store and keep the datapath and the host in line with it.

mod netpol;
mod peers;
mod policy_report;
pub mod policy_state_file;
pub mod policy_view;
mod proxy;

pub use netpol::{NetworkPolicyController, PolicyInput, PolicyQuery, forward_deliveries};
pub use peers::{PeerController, log_changes, peers_of};
pub use policy_report::{PodPolicy, PolicyReport, RuleReport};
pub use policy_state_file::{PolicyStateFile, StateWriteError};
pub use policy_view::PolicyView;
pub use proxy::{FromOutside, ProxyController, ProxySync, ServiceCidr, ServiceSyncMetrics};
pub use proxy::{incremental, translate};
