//! Controllers: they watch the cluster store and keep the datapath and the host in line with it.

mod netpol;
mod peers;

pub use netpol::{NetworkPolicyController, PolicyInput};
pub use peers::{PeerChanges, PeerController, log_changes};
