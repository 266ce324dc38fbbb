//! The connectivity check: which probes a lab needs ([`probe`], and through its Services
//! [`service_probe`]), how results are judged and shown ([`report`]), and, on Linux, waiting
//! until the Services are installed ([`programmed`]) and running the probes in the lab's
//! namespaces ([`run`]).

pub mod probe;
#[cfg(target_os = "linux")]
pub mod programmed;
pub mod report;
#[cfg(target_os = "linux")]
pub mod run;
pub mod service_probe;
