//! The agent's CNI server: Antrea's `Cni` gRPC service (and the STATUS/GC extension) on the
//! CNI socket, backed by the [`PodConfigurator`], which wires a Pod into the Node: IPAM
//! (host-local layout, in-process), the Pod's interface, its OVS port and its flows, confirmed
//! in the switch before ADD returns. [`CniMetrics`] times each ADD and DEL by outcome.

mod configurator;
mod ipam_conf;
mod locks;
mod metrics;
mod result;
mod service;

pub use configurator::{PodConfigurator, ReconcileReport};
pub use ipam_conf::ipam_config;
pub use metrics::CniMetrics;
pub use service::{AddOutcome, CniService};
