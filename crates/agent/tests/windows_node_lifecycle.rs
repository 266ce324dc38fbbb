//! The Windows Node lifecycle under a real service control manager (Wine's, under the Windows
//! test runner) with the fakes for HNS, IP Helper, NetNat, the firewall and the Windows features:
//! `install-ovs` → `prepare-node` → the agent's host bring-up → `uninstall`. The services are
//! registered in the SCM and read back (command lines, dependencies), a second `install-ovs`
//! changes nothing, and afterwards the fake host and the files equal what they were before and
//! the SCM has none of the services left.
//!
//! Service names get this run's suffix (`ovsdb-server-<pid>`...) through [`Suffixed`], so runs do
//! not collide; every service of the run is deleted on drop, also when the test fails.
#![cfg(windows)]

mod node_setup_support;

use agent::node_setup::prepare::{PrepareHost, PrepareSettings, prepare_node};
use agent::node_setup::uninstall::{UninstallHost, uninstall};
use agent::node_setup::{HostFiles, NodePaths, Report, ServiceManager, SetupError, ovs};
use agent::service::scm::Scm;
use agent::service::{
    FailureActions, Installed, InstalledService, SERVICE_NAME, ServiceSpec, StartType, Uninstalled,
    command_line,
};
use node_setup_support::{FakeFeatures, Node, files_under, install_ovs_files};

/// The real SCM with this run's suffix on every service name (and display name, which the SCM
/// also wants unique, and dependency).
struct Suffixed {
    scm: Scm,
    suffix: String,
}

impl Suffixed {
    fn name(&self, name: &str) -> String {
        format!("{name}-{}", self.suffix)
    }

    /// Every name this run may register.
    fn every_name(&self) -> Vec<String> {
        [
            "containerd",
            "ovsext",
            "ovsdb-server",
            "ovs-vswitchd",
            SERVICE_NAME,
        ]
        .map(|name| self.name(name))
        .to_vec()
    }

    /// The names of this run's services the SCM has.
    fn registered(&self) -> Vec<String> {
        self.every_name()
            .into_iter()
            .filter(|name| self.scm.installed(name).unwrap().is_some())
            .collect()
    }

    /// A service someone else registered (containerd, the OVS driver), named without the
    /// suffix: a plain program.
    fn register_other(&self, name: &str) {
        let spec = ServiceSpec {
            name: name.to_owned(),
            display_name: name.to_owned(),
            description: String::new(),
            program: r"C:\windows\system32\cmd.exe".into(),
            arguments: Vec::new(),
            start: StartType::Demand,
            dependencies: Vec::new(),
            failure_actions: FailureActions::none(),
        };
        assert_eq!(self.install(&spec).unwrap(), Installed::Created);
    }
}

impl Drop for Suffixed {
    fn drop(&mut self) {
        for name in self.every_name() {
            let result = self.scm.uninstall(&name);
            if result.is_err() && !std::thread::panicking() {
                panic!("cleanup of {name}: {result:?}");
            }
        }
    }
}

impl ServiceManager for Suffixed {
    fn installed(&self, name: &str) -> Result<Option<InstalledService>, SetupError> {
        let found = ServiceManager::installed(&self.scm, &self.name(name))?;
        Ok(found.map(|mut installed| {
            let tail = format!("-{}", self.suffix);
            for dependency in &mut installed.dependencies {
                if let Some(bare) = dependency.strip_suffix(&tail) {
                    *dependency = bare.to_owned();
                }
            }
            if let Some(bare) = installed.display_name.strip_suffix(&tail) {
                installed.display_name = bare.to_owned();
            }
            installed
        }))
    }

    fn install(&self, spec: &ServiceSpec) -> Result<Installed, SetupError> {
        let renamed = ServiceSpec {
            name: self.name(&spec.name),
            display_name: self.name(&spec.display_name),
            dependencies: spec.dependencies.iter().map(|d| self.name(d)).collect(),
            ..spec.clone()
        };
        ServiceManager::install(&self.scm, &renamed)
    }

    fn uninstall(&self, name: &str) -> Result<Uninstalled, SetupError> {
        ServiceManager::uninstall(&self.scm, &self.name(name))
    }
}

#[tokio::test]
async fn install_prepare_bring_up_uninstall_leaves_the_host_and_the_scm_as_they_were() {
    let services = Suffixed {
        scm: Scm::connect().unwrap(),
        suffix: format!("lifecycle-{}", std::process::id()),
    };
    services.register_other("containerd");
    services.register_other("ovsext");
    let root = tempfile::tempdir().unwrap();
    install_ovs_files(root.path());
    let plugin = root.path().join("antrea-cni.exe");
    std::fs::write(&plugin, b"MZ antrea cni").unwrap();
    let files = HostFiles::under(root.path());
    let paths = NodePaths::default();
    let node = Node::new();

    let host_before = node.snapshot();
    let files_before = files_under(root.path());
    let scm_before = services.registered();
    assert_eq!(scm_before.len(), 2, "{scm_before:?}");

    // install-ovs, through the SCM, read back.
    let mut report = Report::default();
    ovs::install_ovs(&services, &files, &paths, &mut report).unwrap();
    assert_eq!(
        report.lines()[3..],
        [
            "created service ovsdb-server",
            "created service ovs-vswitchd"
        ]
    );
    for spec in ovs::services(&paths) {
        let registered = services.installed(&spec.name).unwrap().unwrap();
        assert_eq!(
            command_line::split(&registered.command_line),
            spec.command_line(),
            "{}",
            registered.command_line
        );
        assert_eq!(registered.start, StartType::Auto);
        assert_eq!(registered.dependencies, spec.dependencies);
        // Wine's QueryServiceConfig2W refuses SERVICE_CONFIG_FAILURE_ACTIONS (the set call
        // succeeds); Windows reports what was set.
        if winos::under_wine() {
            assert_eq!(
                registered.failure_actions, None,
                "Wine reports failure actions now"
            );
        } else {
            assert_eq!(
                registered.failure_actions,
                Some(FailureActions::restart_at_once())
            );
        }
    }
    let mut again = Report::default();
    ovs::install_ovs(&services, &files, &paths, &mut again).unwrap();
    assert!(!again.changed_anything(), "{again}");

    // prepare-node.
    let mut report = Report::default();
    let host = PrepareHost {
        services: &services,
        features: &FakeFeatures::ready(),
        firewall: node.firewall.as_ref(),
        files: &files,
    };
    let settings = PrepareSettings {
        pod_cidr: Some("10.244.1.0/24".parse().unwrap()),
        tunnel_port: Some(6081),
        cni_plugin: plugin.clone(),
    };
    prepare_node(&host, &paths, &settings, &mut report).unwrap();
    assert_eq!(report.missing().count(), 0, "{report}");

    // The agent: its service and its host bring-up.
    let agent = ServiceSpec::agent(
        SERVICE_NAME,
        r"C:\Program Files\antrea\antrea-agent.exe".into(),
        vec!["--config".into(), r"C:\etc\antrea\antrea-agent.conf".into()],
    );
    assert_eq!(services.install(&agent).unwrap(), Installed::Created);
    node.bring_up().await;
    assert_ne!(node.snapshot(), host_before);

    // uninstall.
    let mut report = Report::default();
    let host = UninstallHost {
        services: &services,
        network: &node.host,
        firewall: node.firewall.as_ref(),
        files: &files,
    };
    uninstall(&host, &paths, &mut report).await.unwrap();
    node.ovs_stopped();
    assert_eq!(
        report.lines()[..3],
        [
            "deleted service antrea-agent",
            "deleted service ovs-vswitchd",
            "deleted service ovsdb-server",
        ]
    );
    assert_eq!(node.snapshot(), host_before);
    assert_eq!(files_under(root.path()), files_before);
    assert_eq!(services.registered(), scm_before);
    for name in ["ovsdb-server", "ovs-vswitchd", SERVICE_NAME] {
        assert_eq!(services.scm.state(&services.name(name)).unwrap(), None);
    }

    let mut again = Report::default();
    uninstall(&host, &paths, &mut again).await.unwrap();
    assert!(!again.changed_anything(), "{again}");
}
