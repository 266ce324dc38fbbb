//! The agent as a Windows service: what is registered with the service control manager (SCM) and
//! how the service reports its life to it.
//!
//! The logic is plain Rust, built and tested on every platform:
//! - [`spec`]: a service's name, display name, start type, dependencies, command line and
//!   failure actions, and how a registered service differs from it (one type for the agent's
//!   service and the Open vSwitch services `install-ovs` registers, see [`crate::node_setup`]);
//! - [`command_line`]: splitting a registered command line back into arguments;
//! - [`plan`]: what `install-service` and `uninstall-service` do given what is registered;
//! - [`lifecycle`]: the statuses reported to the SCM (StartPending → Running → StopPending →
//!   Stopped) and the exit codes.
//!
//! The SCM-facing part exists only on Windows: `scm` (install, uninstall, read back, through
//! `windows-service`'s service manager) and `dispatcher` (the service main run by the SCM).

pub mod command_line;
pub mod lifecycle;
pub mod plan;
pub mod spec;

#[cfg(windows)]
pub mod dispatcher;
#[cfg(windows)]
pub mod scm;

pub use lifecycle::{Control, Lifecycle, Reaction, ServiceExit, State, Status};
pub use plan::{InstallPlan, Installed, UninstallStep, Uninstalled};
pub use spec::{
    Difference, FailureAction, FailureActions, InstalledService, ServiceSpec, StartType,
};

/// The service's name, as Antrea registers its agent.
pub const SERVICE_NAME: &str = "antrea-agent";
/// The name shown by the Services console.
pub const DISPLAY_NAME: &str = "antrea-rs agent";
/// The description shown by the Services console.
pub const DESCRIPTION: &str =
    "antrea-rs Kubernetes node agent: Open vSwitch bridge, Pod networking and the CNI server";
/// The Open vSwitch services the agent needs (Antrea's service mode registers both with
/// `sc.exe`; the agent cannot bring the Node up without them).
pub const OVS_SERVICES: [&str; 2] = ["ovsdb-server", "ovs-vswitchd"];
/// The sub-command the SCM runs.
pub const RUN_SERVICE: &str = "run-service";
