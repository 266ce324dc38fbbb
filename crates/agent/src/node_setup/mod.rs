//! The Windows Node's lifecycle without PowerShell: `install-ovs`, `prepare-node` and
//! `uninstall` (alias `reset-node`). Each one is idempotent and reports one line per thing it
//! looked at ([`report`]).
//!
//! The plans are plain Rust, built and tested on every platform; every effect goes through
//! [`host`]'s interfaces: the service control manager ([`host::ServiceManager`], the real one
//! through `service::scm` on Windows), the Windows optional features ([`host::Features`]), the
//! files under a root ([`files::HostFiles`], `C:\` on a Node, a temporary directory in tests),
//! and for `uninstall` the host network backend (`hostnet`'s Windows backend over HNS, IP Helper,
//! NetNat and the firewall).
//!
//! - [`paths`]: where Antrea's Windows install keeps Open vSwitch, the CNI configuration and
//!   plugin;
//! - [`ovs`]: the two Open vSwitch services and `install-ovs`;
//! - [`ovsdb_file`]: a new OVS database file from the schema (what `ovsdb-tool create` writes);
//! - [`prepare`]: `prepare-node`'s prerequisite checks, CNI files and firewall rules;
//! - [`uninstall`]: `uninstall`, which undoes the other two and the agent's bring-up.

pub mod files;
pub mod host;
pub mod ovs;
pub mod ovsdb_file;
pub mod paths;
pub mod prepare;
pub mod report;
pub mod uninstall;

pub use files::HostFiles;
pub use host::{FeatureState, Features, ServiceManager, SetupError};
pub use paths::NodePaths;
pub use report::{Report, Step};
