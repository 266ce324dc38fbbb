//! AntreaProxy's agent side: Services and their EndpointSlices from the API server become
//! [`model::Service`] values ([`translate`]) that [`ProxyController`] keeps installed in the
//! datapath, with the Node's own Service traffic routed into it ([`ServiceCidr`], proxyAll) and
//! Service traffic from outside handed to it by the host ([`FromOutside`]).
//! Only the API server has Services: the cluster-directory source does not.

mod controller;
mod from_outside;
mod health_check;
pub mod incremental;
#[cfg(test)]
mod incremental_tests;
mod metrics;
mod problems;
mod service_cidr;
pub mod translate;
#[cfg(test)]
mod translate_tests;

pub use controller::{ProxyController, ProxySync};
pub use from_outside::FromOutside;
pub use metrics::ServiceSyncMetrics;
pub use service_cidr::ServiceCidr;
