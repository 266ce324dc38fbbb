//! The Windows Node lifecycle sub-commands over the fakes (service manager, features, HNS, IP
//! Helper, NetNat, firewall, files under a temporary root), on every platform: `install-ovs`,
//! `prepare-node` and `uninstall` each do their work once and change nothing the second time;
//! the services registered and the firewall calls made are golden; `prepare-node` names every
//! missing prerequisite with its fix; `uninstall` after a bring-up leaves the host as it was.
//! On Linux, the OVS database `install-ovs` writes is checked with Open vSwitch's own tools.

mod node_setup_support;

use std::path::PathBuf;

use agent::node_setup::prepare::{PrepareHost, PrepareSettings, prepare_node};
use agent::node_setup::uninstall::{UninstallHost, uninstall};
use agent::node_setup::{FeatureState, HostFiles, NodePaths, Report, ovs};
use agent::service::{FailureActions, ServiceSpec};
use node_setup_support::{
    FakeFeatures, FakeServices, Node, ServiceCall, files_under, install_ovs_files, pod_interface,
};
use winos::firewall::{FirewallCall, pod_cidr_rules, tunnel_rule};

struct Setup {
    root: tempfile::TempDir,
    files: HostFiles,
    services: FakeServices,
    plugin: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let root = tempfile::tempdir().unwrap();
        install_ovs_files(root.path());
        let plugin = root.path().join("antrea-cni.exe");
        std::fs::write(&plugin, b"MZ antrea cni").unwrap();
        let services = FakeServices::default();
        services.register("containerd");
        services.register("ovsext");
        Setup {
            files: HostFiles::under(root.path()),
            root,
            services,
            plugin,
        }
    }

    fn install_ovs(&self) -> Report {
        let mut report = Report::default();
        ovs::install_ovs(
            &self.services,
            &self.files,
            &NodePaths::default(),
            &mut report,
        )
        .unwrap();
        report
    }

    fn prepare(&self, node: &Node, features: &FakeFeatures) -> Report {
        let mut report = Report::default();
        let host = PrepareHost {
            services: &self.services,
            features,
            firewall: node.firewall.as_ref(),
            files: &self.files,
        };
        let settings = PrepareSettings {
            pod_cidr: Some("10.244.1.0/24".parse().unwrap()),
            tunnel_port: Some(6081),
            cni_plugin: self.plugin.clone(),
        };
        prepare_node(&host, &NodePaths::default(), &settings, &mut report).unwrap();
        report
    }

    async fn uninstall(&self, node: &Node) -> Report {
        let mut report = Report::default();
        let host = UninstallHost {
            services: &self.services,
            network: &node.host,
            firewall: node.firewall.as_ref(),
            files: &self.files,
        };
        uninstall(&host, &NodePaths::default(), &mut report)
            .await
            .unwrap();
        report
    }
}

fn created(calls: &[ServiceCall]) -> Vec<&ServiceSpec> {
    calls
        .iter()
        .map(|call| match call {
            ServiceCall::Create(spec) => spec,
            other => panic!("not a creation: {other:?}"),
        })
        .collect()
}

#[test]
fn install_ovs_creates_the_database_and_both_services_once() {
    let setup = Setup::new();
    assert_eq!(
        setup.install_ovs().lines(),
        [
            r"created directory C:\openvswitch\var\run\openvswitch",
            r"created directory C:\openvswitch\var\log\openvswitch",
            r"created OVS database C:\openvswitch\etc\openvswitch\conf.db from C:\openvswitch\usr\share\openvswitch\vswitch.ovsschema",
            "created service ovsdb-server",
            "created service ovs-vswitchd",
        ]
    );
    let calls = setup.services.take_calls();
    let specs = created(&calls);
    let lines: Vec<(String, String, Vec<String>, String)> = specs
        .iter()
        .map(|spec| {
            (
                spec.name.clone(),
                agent::service::command_line::join(&spec.command_line()),
                spec.dependencies.clone(),
                spec.failure_actions.to_string(),
            )
        })
        .collect();
    assert_eq!(
        lines,
        [
            (
                "ovsdb-server".to_owned(),
                r"C:\openvswitch\usr\sbin\ovsdb-server.exe C:\openvswitch\etc\openvswitch\conf.db -vfile:info --remote=punix:db.sock --remote=ptcp:6640:127.0.0.1 --log-file=C:\openvswitch\var\log\openvswitch\ovsdb-server.log --pidfile --service".to_owned(),
                vec![],
                "reset= 0 actions= restart/0/restart/0/restart/0".to_owned(),
            ),
            (
                "ovs-vswitchd".to_owned(),
                r"C:\openvswitch\usr\sbin\ovs-vswitchd.exe --pidfile -vfile:info --log-file=C:\openvswitch\var\log\openvswitch\ovs-vswitchd.log --service".to_owned(),
                vec!["ovsdb-server".to_owned()],
                "reset= 0 actions= restart/0/restart/0/restart/0".to_owned(),
            ),
        ]
    );
    let db = setup
        .files
        .read(r"C:\openvswitch\etc\openvswitch\conf.db")
        .unwrap()
        .unwrap();
    assert!(db.starts_with(b"OVSDB JSON "), "{:?}", &db[..20]);

    let again = setup.install_ovs();
    assert!(!again.changed_anything(), "{again}");
    assert_eq!(
        again.lines(),
        [
            r"unchanged: directory C:\openvswitch\var\run\openvswitch",
            r"unchanged: directory C:\openvswitch\var\log\openvswitch",
            r"unchanged: OVS database C:\openvswitch\etc\openvswitch\conf.db",
            "unchanged: service ovsdb-server",
            "unchanged: service ovs-vswitchd",
        ]
    );
    assert_eq!(setup.services.take_calls(), []);
}

#[test]
fn install_ovs_repairs_a_service_registered_otherwise_and_keeps_an_existing_database() {
    let setup = Setup::new();
    setup.install_ovs();
    let paths = NodePaths::default();
    let changed = ServiceSpec {
        failure_actions: FailureActions::none(),
        ..ovs::ovs_vswitchd(&paths)
    };
    agent::node_setup::ServiceManager::install(&setup.services, &changed).unwrap();
    setup.services.take_calls();
    setup
        .files
        .ensure(&paths.ovs_db(), b"a database with data")
        .unwrap();
    assert_eq!(
        setup.install_ovs().lines()[2..],
        [
            r"unchanged: OVS database C:\openvswitch\etc\openvswitch\conf.db",
            "unchanged: service ovsdb-server",
            r#"updated service ovs-vswitchd: failure actions "reset= 0 actions= none" -> "reset= 0 actions= restart/0/restart/0/restart/0""#,
        ]
    );
    assert_eq!(
        setup.services.take_calls(),
        [ServiceCall::Update(ovs::ovs_vswitchd(&paths))]
    );
    assert_eq!(
        setup.files.read(&paths.ovs_db()).unwrap().unwrap(),
        b"a database with data"
    );
}

#[test]
fn install_ovs_without_the_schema_says_where_it_looked() {
    let setup = Setup::new();
    std::fs::remove_dir_all(setup.root.path().join("openvswitch")).unwrap();
    let mut report = Report::default();
    let error = ovs::install_ovs(
        &setup.services,
        &setup.files,
        &NodePaths::default(),
        &mut report,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        r"create the OVS database: no schema C:\openvswitch\usr\share\openvswitch\vswitch.ovsschema: is Open vSwitch installed in C:\openvswitch?"
    );
    assert_eq!(setup.services.names(), ["containerd", "ovsext"]);
}

#[test]
fn prepare_node_names_every_missing_prerequisite_with_its_fix() {
    let setup = Setup::new();
    let services = FakeServices::default();
    let setup = Setup { services, ..setup };
    let node = Node::new();
    let features = FakeFeatures {
        states: [("Microsoft-Hyper-V".to_owned(), FeatureState::NotEnabled)].into(),
    };
    let report = setup.prepare(&node, &features);
    let missing: Vec<String> = report.missing().map(ToString::to_string).collect();
    assert_eq!(
        missing,
        [
            "missing: Windows feature Microsoft-Hyper-V is not enabled; fix: run `dism /online /enable-feature /featurename:Microsoft-Hyper-V /all` (PowerShell: `Enable-WindowsOptionalFeature -Online -FeatureName Microsoft-Hyper-V -All`), then reboot",
            "missing: Windows feature Containers is unknown to this Windows; fix: run `dism /online /enable-feature /featurename:Containers /all` (PowerShell: `Enable-WindowsOptionalFeature -Online -FeatureName Containers -All`), then reboot",
            "missing: containerd is not registered (no service containerd); fix: install containerd (1.7 or later) and register its service with `containerd.exe --register-service`, then start it",
            r"missing: the Open vSwitch kernel driver (Hyper-V switch extension OVSExt) is not registered (no service ovsext); fix: install the driver with `netcfg -l C:\openvswitch\driver\ovsext.inf -c s -i OVSExt` (its certificate trusted, or test signing on); the agent enables the extension on antrea-hnsnetwork",
            "missing: the ovsdb-server service is not registered (no service ovsdb-server); fix: run `antrea-agent install-ovs`",
            "missing: the ovs-vswitchd service is not registered (no service ovs-vswitchd); fix: run `antrea-agent install-ovs`",
        ]
    );
    // The files and rules are written all the same.
    assert!(report.changed_anything(), "{report}");
}

#[test]
fn prepare_node_writes_the_cni_files_and_firewall_rules_once() {
    let setup = Setup::new();
    let node = Node::new();
    setup.install_ovs();
    let report = setup.prepare(&node, &FakeFeatures::ready());
    assert_eq!(report.missing().count(), 0, "{report}");
    assert_eq!(
        report.lines(),
        [
            "ok: Windows feature Microsoft-Hyper-V is enabled",
            "ok: Windows feature Containers is enabled",
            "ok: containerd is registered (service containerd)",
            "ok: the Open vSwitch kernel driver (Hyper-V switch extension OVSExt) is registered (service ovsext)",
            "ok: the ovsdb-server service is registered (service ovsdb-server)",
            "ok: the ovs-vswitchd service is registered (service ovs-vswitchd)",
            r"wrote C:\etc\cni\net.d\10-antrea.conflist",
            r"wrote C:\opt\cni\bin\antrea.exe",
            "created firewall rule antrea-pod-cidr-in",
            "created firewall rule antrea-pod-cidr-out",
            "created firewall rule antrea-tunnel-in",
        ]
    );
    let conflist = setup
        .files
        .read(r"C:\etc\cni\net.d\10-antrea.conflist")
        .unwrap()
        .unwrap();
    assert_eq!(
        conflist,
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../build/cni/windows/10-antrea.conflist"
        ))
        .unwrap()
    );
    assert_eq!(
        setup
            .files
            .read(r"C:\opt\cni\bin\antrea.exe")
            .unwrap()
            .unwrap(),
        b"MZ antrea cni"
    );
    let [pod_in, pod_out] = pod_cidr_rules(&["10.244.1.0/24".parse().unwrap()]);
    let adds: Vec<FirewallCall> = node
        .firewall
        .calls()
        .into_iter()
        .filter(|call| !matches!(call, FirewallCall::Rule(_)))
        .collect();
    assert_eq!(
        adds,
        [
            FirewallCall::Add(pod_in),
            FirewallCall::Add(pod_out),
            FirewallCall::Add(tunnel_rule(6081)),
        ]
    );

    let again = setup.prepare(&node, &FakeFeatures::ready());
    assert!(!again.changed_anything(), "{again}");
    assert_eq!(
        again.lines()[6..],
        [
            r"unchanged: file C:\etc\cni\net.d\10-antrea.conflist",
            r"unchanged: file C:\opt\cni\bin\antrea.exe",
            "unchanged: firewall rule antrea-pod-cidr-in",
            "unchanged: firewall rule antrea-pod-cidr-out",
            "unchanged: firewall rule antrea-tunnel-in",
        ]
    );
}

#[tokio::test]
async fn uninstall_after_bring_up_leaves_the_host_as_it_was_and_then_changes_nothing() {
    let setup = Setup::new();
    let node = Node::new();
    let host_before = node.snapshot();
    let files_before = files_under(setup.root.path());
    let services_before = setup.services.names();

    setup.install_ovs();
    setup.prepare(&node, &FakeFeatures::ready());
    node.bring_up().await;
    setup.services.register("antrea-agent");
    setup.services.start_all();
    assert_ne!(node.snapshot(), host_before);
    setup.services.take_calls();

    let report = setup.uninstall(&node).await;
    node.ovs_stopped();
    assert_eq!(
        report.lines(),
        [
            "stopped and deleted service antrea-agent",
            "stopped and deleted service ovs-vswitchd",
            "stopped and deleted service ovsdb-server",
            &format!("deleted Pod interface {}", pod_interface()),
            "deleted peer route to 10.244.2.0/24",
            "unchanged: no Service routes",
            "unchanged: no NodePort rules",
            "removed Pod SNAT",
            "removed the HNS network; NIC Ethernet0 has its configuration back (10.10.0.11/24)",
            "removed firewall rule antrea-pod-cidr-in",
            "removed firewall rule antrea-pod-cidr-out",
            "removed firewall rule antrea-tunnel-in",
            r"removed C:\etc\cni\net.d\10-antrea.conflist",
            r"removed C:\opt\cni\bin\antrea.exe",
            r"removed C:\openvswitch\etc\openvswitch\conf.db",
            r"removed empty directory C:\openvswitch\var\run\openvswitch",
            r"removed empty directory C:\openvswitch\var\log\openvswitch",
        ]
    );
    assert_eq!(
        setup.services.take_calls(),
        ["antrea-agent", "ovs-vswitchd", "ovsdb-server"]
            .into_iter()
            .flat_map(|name| [
                ServiceCall::Stop(name.to_owned()),
                ServiceCall::Delete(name.to_owned())
            ])
            .collect::<Vec<_>>()
    );
    assert_eq!(node.snapshot(), host_before);
    assert_eq!(files_under(setup.root.path()), files_before);
    assert_eq!(setup.services.names(), services_before);

    let again = setup.uninstall(&node).await;
    assert!(!again.changed_anything(), "{again}");
    assert_eq!(again.lines().len(), report.lines().len(), "{again}");
    assert_eq!(node.snapshot(), host_before);
}

/// The database `install-ovs` writes is one Open vSwitch reads: `ovsdb-tool` finds the schema
/// in it and runs a transaction on it, and `ovsdb-server` serves it.
#[cfg(target_os = "linux")]
#[test]
fn open_vswitch_accepts_the_database() {
    use std::process::Command;
    let test = "open_vswitch_accepts_the_database";
    if Command::new("ovsdb-tool")
        .arg("--version")
        .output()
        .is_err()
    {
        testskip::skip(
            test,
            "ovsdb-tool is not installed (Debian: openvswitch-common)",
        );
        return;
    }
    let setup = Setup::new();
    setup.install_ovs();
    let db = setup
        .files
        .locate(r"C:\openvswitch\etc\openvswitch\conf.db");
    let tool = |args: &[&str]| {
        let out = Command::new("ovsdb-tool")
            .args(args)
            .arg(&db)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "ovsdb-tool {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(tool(&["db-name"]), "Open_vSwitch\n");
    let schema: serde_json::Value =
        serde_json::from_str(&node_setup_support::vswitch_schema()).unwrap();
    assert_eq!(
        tool(&["db-version"]).trim(),
        schema["version"].as_str().unwrap()
    );
    assert_eq!(
        tool(&["db-cksum"]).trim(),
        schema["cksum"].as_str().unwrap()
    );
    let out = Command::new("ovsdb-tool")
        .arg("transact")
        .arg(&db)
        .arg(r#"["Open_vSwitch",{"op":"insert","table":"Open_vSwitch","row":{}}]"#)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sock = setup.root.path().join("db.sock");
    let out = Command::new("ovsdb-server")
        .arg(&db)
        .arg(format!("--remote=punix:{}", sock.display()))
        .arg("--unixctl")
        .arg(setup.root.path().join("ovsdb-server.ctl"))
        .arg(format!(
            "--run=ovsdb-client dump unix:{} Open_vSwitch Open_vSwitch",
            sock.display()
        ))
        .output()
        .unwrap();
    let dump = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}{dump}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dump.contains("Open_vSwitch table"), "{dump}");
    assert_eq!(
        dump.lines().filter(|l| l.contains("-----")).count(),
        1,
        "{dump}"
    );
}
