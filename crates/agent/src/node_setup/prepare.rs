//! `prepare-node`: checks the Node's prerequisites, each reported `ok` or `missing` with its fix,
//! then writes what the agent needs from the host: the CNI configuration list (Antrea's Windows
//! conflist, `build/cni/windows/10-antrea.conflist`), the CNI plugin, and the firewall rules
//! for the Pod CIDR (`antrea-pod-cidr-in`/`-out`, the agent's own) and the tunnel port
//! (`antrea-tunnel-in`).
//!
//! The prerequisites: the Windows features `Microsoft-Hyper-V` and `Containers` enabled; the
//! `containerd` service registered; the Open vSwitch kernel driver, whose service `ovsext`
//! holds the Hyper-V switch extension, registered; the Open vSwitch services registered
//! (`install-ovs`). Every one is checked (not only up to the first missing one), and the files
//! and rules are written either way; the caller fails when any is missing.

use std::path::PathBuf;

use ipnet::{IpNet, Ipv4Net};
use winos::Firewall;
use winos::firewall::{pod_cidr_rules, tunnel_rule};

use super::host::{FeatureState, Features, ServiceManager, SetupError};
use super::report::{Report, Step};
use super::{HostFiles, NodePaths};
use crate::service::OVS_SERVICES;

/// Antrea's Windows CNI configuration list, installed as `10-antrea.conflist`.
pub const CONFLIST: &str = include_str!("../../../../build/cni/windows/10-antrea.conflist");

/// The name of containerd's service.
pub const CONTAINERD_SERVICE: &str = "containerd";
/// The service of the Open vSwitch kernel driver (the Hyper-V switch extension `OVSExt`).
pub const OVS_EXTENSION_SERVICE: &str = "ovsext";
/// The Windows features a Node needs.
pub const FEATURES: [&str; 2] = ["Microsoft-Hyper-V", "Containers"];

/// What `prepare-node` writes besides the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrepareSettings {
    /// The Node's Pod CIDR, for its firewall rules (none: the agent makes them at bring-up).
    pub pod_cidr: Option<Ipv4Net>,
    /// The tunnel's UDP port (6081 Geneve, 4789 VXLAN); none in noEncap mode.
    pub tunnel_port: Option<u16>,
    /// The CNI plugin binary to install.
    pub cni_plugin: PathBuf,
}

/// The host interfaces `prepare-node` acts through.
pub struct PrepareHost<'a> {
    /// The service control manager.
    pub services: &'a dyn ServiceManager,
    /// The optional features.
    pub features: &'a dyn Features,
    /// The Windows Firewall.
    pub firewall: &'a dyn Firewall,
    /// The files.
    pub files: &'a HostFiles,
}

impl std::fmt::Debug for PrepareHost<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrepareHost")
            .field("firewall", &self.firewall)
            .field("files", &self.files)
            .finish_non_exhaustive()
    }
}

/// `prepare-node`: every check, then the CNI files and the firewall rules. Returns an error
/// only when something could not be read or written; missing prerequisites are in the report.
pub fn prepare_node(
    host: &PrepareHost<'_>,
    paths: &NodePaths,
    settings: &PrepareSettings,
    report: &mut Report,
) -> Result<(), SetupError> {
    check_prerequisites(host, paths, report)?;
    install_cni(host.files, paths, &settings.cni_plugin, report)?;
    open_firewall(host.firewall, settings, report)
}

/// Checks every prerequisite, reporting each.
pub fn check_prerequisites(
    host: &PrepareHost<'_>,
    paths: &NodePaths,
    report: &mut Report,
) -> Result<(), SetupError> {
    for feature in FEATURES {
        let step = match host.features.state(feature)? {
            FeatureState::Enabled => Step::Ok(format!("Windows feature {feature} is enabled")),
            state => Step::Missing {
                what: format!(
                    "Windows feature {feature} is {}",
                    if state == FeatureState::Unknown {
                        "unknown to this Windows"
                    } else {
                        "not enabled"
                    }
                ),
                fix: format!(
                    "run `dism /online /enable-feature /featurename:{feature} /all` \
                     (PowerShell: `Enable-WindowsOptionalFeature -Online -FeatureName {feature} -All`), then reboot"
                ),
            },
        };
        report.push(step);
    }
    let ovs_dir = &paths.ovs_dir;
    let services: [(&str, &str, String); 4] = [
        (
            CONTAINERD_SERVICE,
            "containerd",
            "install containerd (1.7 or later) and register its service with \
             `containerd.exe --register-service`, then start it"
                .to_owned(),
        ),
        (
            OVS_EXTENSION_SERVICE,
            "the Open vSwitch kernel driver (Hyper-V switch extension OVSExt)",
            format!(
                "install the driver with `netcfg -l {ovs_dir}\\driver\\ovsext.inf -c s -i OVSExt` \
                 (its certificate trusted, or test signing on); the agent enables the extension \
                 on antrea-hnsnetwork"
            ),
        ),
        (
            OVS_SERVICES[0],
            "the ovsdb-server service",
            "run `antrea-agent install-ovs`".to_owned(),
        ),
        (
            OVS_SERVICES[1],
            "the ovs-vswitchd service",
            "run `antrea-agent install-ovs`".to_owned(),
        ),
    ];
    for (name, what, fix) in services {
        let step = match host.services.installed(name)? {
            Some(_) => Step::Ok(format!("{what} is registered (service {name})")),
            None => Step::Missing {
                what: format!("{what} is not registered (no service {name})"),
                fix,
            },
        };
        report.push(step);
    }
    Ok(())
}

/// Writes the conflist and copies the plugin.
pub fn install_cni(
    files: &HostFiles,
    paths: &NodePaths,
    plugin: &std::path::Path,
    report: &mut Report,
) -> Result<(), SetupError> {
    let conflist = paths.conflist();
    ensure_file(files, &conflist, CONFLIST.as_bytes(), report)?;
    let binary = std::fs::read(plugin).map_err(SetupError::of(format!(
        "read the CNI plugin {}",
        plugin.display()
    )))?;
    ensure_file(files, &paths.cni_plugin(), &binary, report)
}

fn ensure_file(
    files: &HostFiles,
    path: &str,
    content: &[u8],
    report: &mut Report,
) -> Result<(), SetupError> {
    if files
        .ensure(path, content)
        .map_err(SetupError::of(format!("write {path}")))?
    {
        report.changed(format!("wrote {path}"));
    } else {
        report.unchanged(format!("file {path}"));
    }
    Ok(())
}

/// Makes the Pod CIDR and tunnel port rules present.
pub fn open_firewall(
    firewall: &dyn Firewall,
    settings: &PrepareSettings,
    report: &mut Report,
) -> Result<(), SetupError> {
    let mut rules = Vec::new();
    if let Some(pod_cidr) = settings.pod_cidr {
        rules.extend(pod_cidr_rules(&[IpNet::V4(pod_cidr)]));
    }
    if let Some(port) = settings.tunnel_port {
        rules.push(tunnel_rule(port));
    }
    for rule in rules {
        let outcome = firewall
            .ensure_rule(&rule)
            .map_err(SetupError::of(format!("firewall rule {}", rule.name)))?;
        match outcome {
            winos::Ensured::Unchanged => report.unchanged(format!("firewall rule {}", rule.name)),
            winos::Ensured::Created => {
                report.changed(format!("created firewall rule {}", rule.name))
            }
            winos::Ensured::Replaced => {
                report.changed(format!("replaced firewall rule {}", rule.name))
            }
        }
    }
    Ok(())
}
