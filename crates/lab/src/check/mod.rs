//! The connectivity check: which probes a lab needs ([`probe`]), how results are judged and
//! shown ([`report`]), and, on Linux, running them in the lab's namespaces ([`run`]).

pub mod probe;
pub mod report;
#[cfg(target_os = "linux")]
pub mod run;
