//! `agent::config` against whole configuration files: every key, both platforms' defaults,
//! every rejection's message, warnings, and the derived values.

use agent::config::{
    AgentConfig, AntreaProxyConfig, ConfigError, ConfigWarning, DatapathType, Feature,
    LoadedConfig, Platform, TlsCipherSuite, TlsSettings, TlsVersion, TrafficEncapMode, TunnelType,
    mtu_deduction, node_name,
};
use std::time::Duration;

use agent::config::{ControllerConnection, PolicyComputation, TakeoverWatchdogConfig};
use localipc::Endpoint;

const LINUX_SAMPLE: &str = include_str!("data/antrea-agent-linux.conf");
const WINDOWS_SAMPLE: &str = include_str!("data/antrea-agent-windows.conf");
const LAB_SAMPLE: &str = include_str!("data/antrea-agent-lab.conf");

fn parse(text: &str, platform: Platform) -> LoadedConfig {
    AgentConfig::parse(text, platform).unwrap_or_else(|e| panic!("rejected: {e}\n{text}"))
}

fn error(text: &str, platform: Platform) -> String {
    match AgentConfig::parse(text, platform) {
        Ok(loaded) => panic!("accepted {text:?}: {loaded:?}"),
        Err(e) => e.to_string(),
    }
}

fn not_implemented(warnings: &[ConfigWarning]) -> Vec<&str> {
    warnings
        .iter()
        .map(|w| match w {
            ConfigWarning::NotImplemented { key } => key.as_str(),
            other => panic!("unexpected warning: {other}"),
        })
        .collect()
}

#[test]
fn linux_defaults_are_antreas() {
    let c = AgentConfig::defaults(Platform::Linux);
    assert_eq!(c.ovs_bridge, "br-int");
    assert_eq!(c.ovs_datapath_type, DatapathType::System);
    assert_eq!(c.ovs_run_dir, "/var/run/openvswitch");
    assert_eq!(
        c.cni_socket,
        Endpoint::Unix("/var/run/antrea/cni.sock".into())
    );
    assert_eq!(c.host_gateway, "antrea-gw0");
    assert_eq!(c.traffic_encap_mode, TrafficEncapMode::Encap);
    assert_eq!(c.tunnel_type, TunnelType::Geneve);
    assert_eq!(
        (c.tunnel_port, c.tunnel_csum, c.no_snat, c.default_mtu),
        (0, false, false, 0)
    );
    assert_eq!(c.service_cidr, None, "unset: discovered");
    assert_eq!(c.api_port, 10350);
    assert!(c.enable_prometheus_metrics);
    assert_eq!(
        c.antrea_proxy,
        AntreaProxyConfig {
            enable: true,
            proxy_all: false,
            node_port_addresses: Vec::new(),
        }
    );
    assert_eq!(
        (c.kubeconfig.as_ref(), c.kube_api_server_override.as_ref()),
        (None, None)
    );
    assert_eq!(
        (
            c.transport_interface.as_ref(),
            c.transport_interface_cidrs.len()
        ),
        (None, 0)
    );
    assert!(c.feature_gates.enabled(Feature::Egress));
    assert_eq!(
        parse("", Platform::Linux),
        LoadedConfig {
            config: c,
            warnings: vec![]
        }
    );
}

#[test]
fn windows_defaults_are_antreas() {
    let c = AgentConfig::defaults(Platform::Windows);
    assert_eq!(c.ovs_run_dir, r"C:\openvswitch\var\run\openvswitch");
    assert_eq!(
        c.cni_socket,
        Endpoint::NamedPipe(r"\\.\pipe\cnisock".into())
    );
    assert_eq!(c.ovs_datapath_type, DatapathType::System);
    assert_eq!(c.ovs_bridge, "br-int");
    assert!(!c.feature_gates.enabled(Feature::Egress));
    assert!(c.feature_gates.enabled(Feature::AntreaPolicy));
    assert_eq!(parse("# nothing set\n", Platform::Windows).config, c);
}

#[test]
fn every_implemented_key_is_read() {
    let loaded = parse(LAB_SAMPLE, Platform::Linux);
    assert_eq!(loaded.warnings, vec![]);
    let c = loaded.config;
    assert!(c.feature_gates.enabled(Feature::AntreaProxy));
    assert!(!c.feature_gates.enabled(Feature::Traceflow));
    assert_eq!(c.feature_gates.explicit().count(), 2);
    assert_eq!(
        c.kubeconfig.as_deref(),
        Some(std::path::Path::new("/etc/antrea/kubeconfig"))
    );
    assert_eq!(
        c.cni_socket,
        Endpoint::Unix("/run/lab/node1/cni.sock".into())
    );
    assert_eq!(
        c.kube_api_server_override.as_deref(),
        Some("https://10.0.0.1:6443")
    );
    assert_eq!(c.ovs_bridge, "br-lab");
    assert_eq!(c.ovs_datapath_type, DatapathType::Netdev);
    assert_eq!(c.ovs_run_dir, "/run/lab/node1/ovs");
    assert_eq!(c.host_gateway, "gw0");
    assert_eq!(c.traffic_encap_mode, TrafficEncapMode::Hybrid);
    assert!(!c.no_snat);
    assert_eq!(c.tunnel_type, TunnelType::Vxlan);
    assert_eq!(c.tunnel_port, 8472);
    assert!(c.tunnel_csum);
    assert_eq!(c.default_mtu, 1400);
    assert_eq!(
        c.service_cidr.map(|c| c.to_string()).as_deref(),
        Some("10.112.0.0/16")
    );
    assert_eq!(c.transport_interface.as_deref(), Some("eth1"));
    let cidrs: Vec<String> = c
        .transport_interface_cidrs
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(cidrs, ["192.168.77.0/24", "fd00:77::/64"]);
    assert_eq!(c.api_port, 20350);
    assert!(!c.enable_prometheus_metrics);
    assert_eq!(
        c.antrea_proxy,
        AntreaProxyConfig {
            enable: true,
            proxy_all: true,
            node_port_addresses: vec!["10.10.0.0/24".parse().unwrap()],
        }
    );
}

#[test]
fn no_snat_and_named_pipe_socket_are_read() {
    let c = parse("trafficEncapMode: noEncap\nnoSNAT: true\n", Platform::Linux).config;
    assert!(c.no_snat);
    assert_eq!(c.traffic_encap_mode, TrafficEncapMode::NoEncap);
    let c = parse("cniSocket: '\\\\.\\pipe\\antrea-lab'\n", Platform::Windows).config;
    assert_eq!(
        c.cni_socket,
        Endpoint::NamedPipe(r"\\.\pipe\antrea-lab".into())
    );
    let c = parse("ovsRunDir: 'D:\\ovs\\run'\n", Platform::Windows).config;
    assert_eq!(c.ovs_run_dir, r"D:\ovs\run");
}

#[test]
fn antreas_linux_sample_parses_to_the_defaults() {
    let loaded = parse(LINUX_SAMPLE, Platform::Linux);
    assert_eq!(loaded.config, AgentConfig::defaults(Platform::Linux));
    assert_eq!(
        not_implemented(&loaded.warnings),
        [
            "antreaProxy.proxyLoadBalancerIPs",
            "antreaProxy.defaultLoadBalancerMode",
            "wireGuard",
            "clusterPort",
            "memberlist",
            "nodePortLocal",
            "flowExporter",
            "multicast",
            "egress",
            "ipsec",
            "multicluster",
            "auditLogging",
            "packetInRate",
            "hostNetworkAcceleration",
            "hostNetworkMode",
        ]
    );
}

#[test]
fn antreas_windows_sample_parses_cleanly() {
    let loaded = parse(WINDOWS_SAMPLE, Platform::Windows);
    assert_eq!(loaded.warnings, vec![]);
    let mut expected = AgentConfig::defaults(Platform::Windows);
    expected.antrea_proxy.proxy_all = true;
    assert_eq!(loaded.config, expected);
}

#[test]
fn invalid_values_name_key_value_and_choices() {
    let cases = [
        (
            "trafficEncapMode: tunnel",
            r#"trafficEncapMode: "tunnel" is not one of encap, noEncap, hybrid"#,
        ),
        (
            "tunnelType: ipip",
            r#"tunnelType: "ipip" is not one of geneve, vxlan"#,
        ),
        (
            "ovsDatapathType: dpdk",
            r#"ovsDatapathType: "dpdk" is not one of system, netdev"#,
        ),
        (
            "trafficEncryptionMode: aes",
            r#"trafficEncryptionMode: "aes" is not one of none, ipsec, wireGuard"#,
        ),
        (
            "tunnelPort: 70000",
            "tunnelPort: 70000 is not a whole number in 0..65535",
        ),
        (
            "tunnelPort: -1",
            "tunnelPort: -1 is not a whole number in 0..65535",
        ),
        (
            "apiPort: 1.5",
            "apiPort: 1.5 is not a whole number in 0..65535",
        ),
        (
            "defaultMTU: 40",
            "defaultMTU: 40 is not 0 (derived from the transport interface) or a whole number in 68..65535",
        ),
        (
            "serviceCIDR: 10.96.0.0/33",
            r#"serviceCIDR: "10.96.0.0/33" is not a CIDR such as 10.96.0.0/12"#,
        ),
        (
            "serviceCIDR: fd00:10:96::/108",
            r#"serviceCIDR: "fd00:10:96::/108" is not an IPv4 CIDR such as 10.96.0.0/12 (IPv6 is serviceCIDRv6)"#,
        ),
        (
            "antreaProxy: {nodePortAddresses: [10.0.0.0/8, nope]}",
            r#"antreaProxy.nodePortAddresses[1]: "nope" is not a CIDR such as 10.96.0.0/12"#,
        ),
        (
            "antreaProxy: {nodePortAddresses: [\"fd00::/64\"]}",
            r#"antreaProxy.nodePortAddresses[0]: "fd00::/64" is not an IPv4 CIDR such as 192.168.1.0/24 (IPv6 NodePorts are not served)"#,
        ),
        (
            "transportInterfaceCIDRs: [10.0.0.0/8, nope]",
            r#"transportInterfaceCIDRs[1]: "nope" is not a CIDR such as 10.96.0.0/12"#,
        ),
        (
            "cniSocket: relative.sock",
            r#"cniSocket: "relative.sock" is not an absolute Unix socket path or a \\.\pipe\NAME named pipe"#,
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error(text, Platform::Linux), expected, "for {text}");
    }
}

#[test]
fn unsupported_values_say_why() {
    let cases = [
        (
            "tunnelType: stt",
            r#"tunnelType: "stt" is not supported: antrea-rs implements geneve and vxlan tunnels only"#,
        ),
        (
            "tunnelType: gre",
            r#"tunnelType: "gre" is not supported: antrea-rs implements geneve and vxlan tunnels only"#,
        ),
        (
            "trafficEncapMode: networkPolicyOnly",
            r#"trafficEncapMode: "networkPolicyOnly" is not supported: antrea-rs is the primary CNI and does not run chained behind another one"#,
        ),
        (
            "trafficEncryptionMode: wireGuard",
            r#"trafficEncryptionMode: "wireGuard" is not supported: antrea-rs does not encrypt traffic between Nodes; use none"#,
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error(text, Platform::Linux), expected, "for {text}");
    }
}

#[test]
fn conflicting_keys_are_rejected() {
    assert_eq!(
        error("noSNAT: true", Platform::Linux),
        "noSNAT: true is only allowed with trafficEncapMode noEncap, not encap"
    );
    assert_eq!(
        error(
            "trafficEncapMode: hybrid\nantreaProxy:\n  enable: false\n",
            Platform::Linux
        ),
        "antreaProxy.enable: false is not allowed with trafficEncapMode hybrid: Service traffic would bypass NetworkPolicy"
    );
    assert!(
        parse("antreaProxy:\n  enable: false\n", Platform::Linux)
            .config
            .antrea_proxy
            .enable
            .eq(&false)
    );
}

#[test]
fn windows_rejects_what_antrea_rejects_there() {
    assert_eq!(
        error("ovsDatapathType: netdev", Platform::Windows),
        r#"ovsDatapathType: "netdev" is not supported: Open vSwitch on Windows has only the system datapath"#
    );
    assert_eq!(
        error(
            "featureGates:\n  Egress: true\n  Multicast: true\n  Traceflow: true\n",
            Platform::Windows
        ),
        "featureGates: Egress, Multicast is not supported: these features are not available on Windows Nodes"
    );
    let c = parse("featureGates:\n  Egress: false\n", Platform::Windows).config;
    assert!(!c.feature_gates.enabled(Feature::Egress));
    assert_eq!(
        parse("ovsDatapathType: netdev", Platform::Linux)
            .config
            .ovs_datapath_type,
        DatapathType::Netdev
    );
}

#[test]
fn wrong_types_name_the_key() {
    let cases = [
        (
            "ovsBridge: [a]",
            "ovsBridge: expected a string, found a list",
        ),
        (
            "noSNAT: \"false\"",
            "noSNAT: expected true or false, found a string",
        ),
        (
            "tunnelPort: \"6081\"",
            "tunnelPort: expected an integer, found a string",
        ),
        (
            "antreaProxy: true",
            "antreaProxy: expected a mapping, found a boolean",
        ),
        (
            "antreaProxy:\n  proxyAll: 1\n",
            "antreaProxy.proxyAll: expected true or false, found an integer",
        ),
        (
            "featureGates:\n  Egress: maybe\n",
            "featureGates.Egress: expected true or false, found a string",
        ),
        (
            "featureGates: [Egress]",
            "featureGates: expected a mapping of names to true/false, found a list",
        ),
        (
            "transportInterfaceCIDRs: 10.0.0.0/8",
            "transportInterfaceCIDRs: expected a list of strings, found a string",
        ),
        (
            "transportInterfaceCIDRs: [1]",
            "transportInterfaceCIDRs[0]: expected a string, found an integer",
        ),
        (
            "clientConnection:\n  kubeconfig: 3\n",
            "clientConnection.kubeconfig: expected a string, found an integer",
        ),
        (
            "- a\n- b\n",
            "(document): expected a mapping of keys, found a list",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error(text, Platform::Linux), expected, "for {text}");
    }
}

#[test]
fn yaml_syntax_errors_say_where() {
    let message = error("ovsBridge: br-int\nantreaProxy: [\n", Platform::Linux);
    assert!(
        message.starts_with("agent configuration is not valid YAML: "),
        "{message}"
    );
    assert!(message.contains("line 2"), "{message}");
    let message = error("apiPort: 1\napiPort: 2\n", Platform::Linux);
    assert!(message.contains("duplicate mapping key"), "{message}");
}

#[test]
fn unknown_keys_and_gates_are_warnings_with_their_path() {
    let text = "ovsbridge: br0\nantreaProxy:\n  foo: 1\nclientConnection:\n  qps: 50\n  bar: x\nfeatureGates:\n  Warp: true\n";
    let loaded = parse(text, Platform::Linux);
    assert_eq!(loaded.config, AgentConfig::defaults(Platform::Linux));
    assert_eq!(
        loaded.warnings,
        vec![
            ConfigWarning::UnknownFeatureGate {
                name: "Warp".into()
            },
            ConfigWarning::NotImplemented {
                key: "clientConnection.qps".into()
            },
            ConfigWarning::UnknownKey {
                key: "clientConnection.bar".into()
            },
            ConfigWarning::UnknownKey {
                key: "antreaProxy.foo".into()
            },
            ConfigWarning::UnknownKey {
                key: "ovsbridge".into()
            },
        ]
    );
    let shown: Vec<String> = loaded.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(shown[0], "featureGates.Warp: unknown feature gate, ignored");
    assert_eq!(
        shown[1],
        "clientConnection.qps: Antrea option not implemented by antrea-rs, ignored"
    );
    assert_eq!(shown[4], "ovsbridge: unknown key, ignored");
}

#[test]
fn long_comment_runs_after_an_empty_key_parse() {
    // Antrea's style: a section left empty, then every option commented out.
    let mut text = String::from("featureGates:\n");
    for i in 0..200 {
        text.push_str(&format!("# comment {i}\n#  Gate{i}: true\n"));
    }
    text.push_str("clientConnection:\n");
    for i in 0..200 {
        text.push_str(&format!("  # comment {i}\n"));
    }
    text.push_str("tunnelType: vxlan\n");
    let loaded = parse(&text, Platform::Linux);
    assert_eq!(loaded.warnings, vec![]);
    assert_eq!(loaded.config.tunnel_type, TunnelType::Vxlan);
}

#[test]
fn empty_strings_and_zeroes_mean_default() {
    let text = "ovsBridge: \"\"\novsRunDir: \"\"\ncniSocket: \"\"\napiPort: 0\nserviceCIDR: \"\"\nantreaProxy:\n";
    assert_eq!(
        parse(text, Platform::Windows).config,
        AgentConfig::defaults(Platform::Windows)
    );
}

#[test]
fn tunnel_destination_port_falls_back_to_iana() {
    let mut c = AgentConfig::defaults(Platform::Linux);
    assert_eq!(c.tunnel_destination_port(), 6081);
    c.tunnel_type = TunnelType::Vxlan;
    assert_eq!(c.tunnel_destination_port(), 4789);
    c.tunnel_port = 8472;
    assert_eq!(c.tunnel_destination_port(), 8472);
}

#[test]
fn mtu_is_the_transport_mtu_less_the_encap_overhead() {
    assert_eq!(
        mtu_deduction(TrafficEncapMode::Encap, TunnelType::Geneve, false),
        50
    );
    assert_eq!(
        mtu_deduction(TrafficEncapMode::Encap, TunnelType::Vxlan, false),
        50
    );
    assert_eq!(
        mtu_deduction(TrafficEncapMode::Hybrid, TunnelType::Geneve, true),
        70
    );
    assert_eq!(
        mtu_deduction(TrafficEncapMode::NoEncap, TunnelType::Geneve, false),
        0
    );

    let mut c = AgentConfig::defaults(Platform::Linux);
    assert_eq!(c.pod_mtu(1500, false), 1450);
    assert_eq!(c.pod_mtu(1500, true), 1430);
    assert_eq!(c.pod_mtu(65535, false), 65000);
    assert_eq!(c.pod_mtu(30, false), 0);
    c.traffic_encap_mode = TrafficEncapMode::NoEncap;
    assert_eq!(c.pod_mtu(1500, false), 1500);
    assert_eq!(c.pod_mtu(65535, false), 65535);
    c.default_mtu = 9000;
    assert_eq!(c.pod_mtu(1500, false), 9000);
}

#[test]
fn ovs_endpoints_follow_the_platform() {
    let mut linux = AgentConfig::defaults(Platform::Linux);
    assert_eq!(
        linux.ovsdb_endpoint().to_string(),
        "unix:/var/run/openvswitch/db.sock"
    );
    assert_eq!(
        linux.bridge_mgmt_endpoint().to_string(),
        "unix:/var/run/openvswitch/br-int.mgmt"
    );
    linux.ovs_run_dir = "/run/lab/ovs/".into();
    linux.ovs_bridge = "br-lab".into();
    assert_eq!(
        linux.bridge_mgmt_endpoint().to_string(),
        "unix:/run/lab/ovs/br-lab.mgmt"
    );

    let windows = AgentConfig::defaults(Platform::Windows);
    assert_eq!(
        windows.ovsdb_endpoint(),
        Endpoint::NamedPipe(r"\\.\pipe\C:openvswitchvarrunopenvswitchdb.sock".into())
    );
    assert_eq!(
        windows.bridge_mgmt_endpoint(),
        Endpoint::NamedPipe(r"\\.\pipe\C:openvswitchvarrunopenvswitchbr-int.mgmt".into())
    );
}

#[test]
fn node_name_comes_from_env_then_hostname() {
    assert_eq!(
        node_name(Platform::Linux, Some("Node-A"), Some("host")).unwrap(),
        "Node-A"
    );
    assert_eq!(
        node_name(Platform::Windows, Some("WIN-NODE"), None).unwrap(),
        "win-node"
    );
    assert_eq!(
        node_name(Platform::Linux, Some(""), Some("host\n")).unwrap(),
        "host"
    );
    assert_eq!(
        node_name(Platform::Windows, None, Some("HOST")).unwrap(),
        "host"
    );
    assert!(matches!(
        node_name(Platform::Linux, None, None),
        Err(ConfigError::NodeNameUnknown)
    ));
}

#[test]
fn load_names_the_missing_file() {
    let err = AgentConfig::load(
        std::path::Path::new("/nonexistent/antrea-agent.conf"),
        Platform::Linux,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("cannot read agent configuration /nonexistent/antrea-agent.conf: "),
        "{err}"
    );
    let loaded = AgentConfig::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/antrea-agent-lab.conf"),
        Platform::Linux,
    )
    .unwrap();
    assert_eq!(loaded.config.ovs_bridge, "br-lab");
}

#[test]
fn windows_supervision_keys_are_read_with_their_defaults() {
    let defaults = parse("", Platform::Windows).config;
    assert_eq!(defaults.hns_reconcile_interval, Duration::from_secs(60));
    assert_eq!(
        defaults.takeover_watchdog,
        TakeoverWatchdogConfig {
            duration: Duration::from_secs(300),
            probe_interval: Duration::from_secs(5),
            lost_probes: 6,
        }
    );
    let loaded = parse(
        "hnsReconcileInterval: 2m\ntakeoverWatchdog:\n  duration: 1m30s\n  probeInterval: 10s\n  lostProbes: 3\n",
        Platform::Windows,
    );
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(
        loaded.config.hns_reconcile_interval,
        Duration::from_secs(120)
    );
    assert_eq!(
        loaded.config.takeover_watchdog,
        TakeoverWatchdogConfig {
            duration: Duration::from_secs(90),
            probe_interval: Duration::from_secs(10),
            lost_probes: 3,
        }
    );
    let off = parse("takeoverWatchdog: {duration: \"0\"}\n", Platform::Windows);
    assert_eq!(off.config.takeover_watchdog.duration, Duration::ZERO);
    for (text, message) in [
        (
            "hnsReconcileInterval: 60",
            "hnsReconcileInterval: expected a string, found an integer",
        ),
        (
            "hnsReconcileInterval: soon",
            r#"hnsReconcileInterval: "soon" is not a duration such as 90s, 5m or 1m30s (units h, m, s, ms), at least 1s"#,
        ),
        (
            "hnsReconcileInterval: 500ms",
            r#"hnsReconcileInterval: "500ms" is not a duration such as 90s, 5m or 1m30s (units h, m, s, ms), at least 1s"#,
        ),
        (
            "takeoverWatchdog: {probeInterval: 0s}",
            r#"takeoverWatchdog.probeInterval: "0s" is not a duration such as 90s, 5m or 1m30s (units h, m, s, ms), at least 1s"#,
        ),
        (
            "takeoverWatchdog: {lostProbes: 0}",
            "takeoverWatchdog.lostProbes: 0 is not a whole number in 1..1000",
        ),
    ] {
        assert_eq!(error(text, Platform::Windows), message, "{text}");
    }
    let unknown = parse("takeoverWatchdog: {window: 5m}\n", Platform::Windows);
    assert_eq!(unknown.warnings.len(), 1, "{:?}", unknown.warnings);
    assert!(
        unknown.warnings[0]
            .to_string()
            .contains("takeoverWatchdog.window"),
        "{}",
        unknown.warnings[0]
    );
}

#[test]
fn tls_min_version_and_cipher_suites_take_gos_names() {
    assert_eq!(
        AgentConfig::defaults(Platform::Linux).api.tls,
        TlsSettings::default()
    );
    let c = parse(
        "tlsMinVersion: VersionTLS13\ntlsCipherSuites: \" TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_AES_128_GCM_SHA256 , TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384\"\n",
        Platform::Linux,
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    assert_eq!(
        c.config.api.tls,
        TlsSettings {
            min_version: TlsVersion::Tls13,
            cipher_suites: Some(vec![
                TlsCipherSuite::EcdheRsaAes256GcmSha384,
                TlsCipherSuite::EcdheEcdsaChacha20Poly1305Sha256,
            ]),
        }
    );
    let only_tls13 = parse("tlsCipherSuites: TLS_AES_256_GCM_SHA384\n", Platform::Linux);
    assert_eq!(only_tls13.config.api.tls.cipher_suites, Some(vec![]));
    let empty = parse("tlsCipherSuites: \"\"\n", Platform::Windows);
    assert_eq!(empty.config.api.tls, TlsSettings::default());

    assert_eq!(
        error("tlsMinVersion: VersionTLS11\n", Platform::Linux),
        r#"tlsMinVersion: "VersionTLS11" is not supported: the agent API serves TLS 1.2 and 1.3 only; use VersionTLS12 or VersionTLS13"#
    );
    assert_eq!(
        error("tlsMinVersion: TLS12\n", Platform::Linux),
        r#"tlsMinVersion: "TLS12" is not one of VersionTLS12, VersionTLS13"#
    );
    let cbc = error(
        "tlsCipherSuites: TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_RSA_WITH_AES_128_CBC_SHA\n",
        Platform::Linux,
    );
    assert!(
        cbc.starts_with(r#"tlsCipherSuites: "TLS_RSA_WITH_AES_128_CBC_SHA" is not supported: the agent API serves only ECDHE AEAD suites for TLS 1.2: TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, "#),
        "{cbc}"
    );
    let unknown = error("tlsCipherSuites: TLS_FANCY\n", Platform::Linux);
    assert!(
        unknown.starts_with(r#"tlsCipherSuites: "TLS_FANCY" is not a Go cipher suite name: one of TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"#),
        "{unknown}"
    );
}

#[test]
fn policy_computation_defaults_to_local_with_the_controller_keys_defaulted() {
    for (platform, state) in [
        (Platform::Linux, "/var/lib/antrea/policy-state.json"),
        (Platform::Windows, r"C:\var\lib\antrea\policy-state.json"),
    ] {
        let c = parse("", platform).config;
        assert_eq!(c.policy_computation, PolicyComputation::Local);
        assert_eq!(
            c.controller,
            ControllerConnection {
                addresses: Vec::new(),
                ca_config_map: ("kube-system".into(), "antrea-ca".into()),
                server_name: "antrea.kube-system.svc".into(),
                token_file: "/var/run/secrets/kubernetes.io/serviceaccount/token".into(),
            }
        );
        assert_eq!(c.policy_state_file, std::path::PathBuf::from(state));
    }
}

#[test]
fn controller_mode_keys_are_read() {
    let loaded = parse(
        "policyComputation: controller\n\
         controllerAddresses: [\"10.96.0.10:443\", \"antrea.example:8443\", \"[fd00::10]:443\"]\n\
         controllerCAConfigMap: antrea/controller-ca\n\
         controllerServerName: controller.antrea.example\n\
         controllerTokenFile: /etc/antrea/token\n\
         policyStateFile: /var/lib/antrea/policy.json\n",
        Platform::Linux,
    );
    assert_eq!(loaded.warnings, vec![]);
    let c = loaded.config;
    assert_eq!(c.policy_computation, PolicyComputation::Controller);
    assert_eq!(c.policy_computation.to_string(), "controller");
    assert_eq!(
        c.controller,
        ControllerConnection {
            addresses: vec![
                "10.96.0.10:443".into(),
                "antrea.example:8443".into(),
                "[fd00::10]:443".into()
            ],
            ca_config_map: ("antrea".into(), "controller-ca".into()),
            server_name: "controller.antrea.example".into(),
            token_file: "/etc/antrea/token".into(),
        }
    );
    assert_eq!(
        c.policy_state_file,
        std::path::PathBuf::from("/var/lib/antrea/policy.json")
    );
}

#[test]
fn controller_mode_keys_are_checked() {
    let cases = [
        (
            "policyComputation: central",
            r#"policyComputation: "central" is not one of local, controller"#,
        ),
        (
            "controllerAddresses: [\"10.96.0.10\"]",
            r#"controllerAddresses[0]: "10.96.0.10" is not host:port, such as 10.96.0.10:443 or [fd00::10]:443"#,
        ),
        (
            "controllerAddresses: [\"a:443\", \"b:0\"]",
            r#"controllerAddresses[1]: "b:0" is not host:port, such as 10.96.0.10:443 or [fd00::10]:443"#,
        ),
        (
            "controllerAddresses: [\"fd00::10:443\"]",
            r#"controllerAddresses[0]: "fd00::10:443" is not host:port, such as 10.96.0.10:443 or [fd00::10]:443"#,
        ),
        (
            "controllerAddresses: \"10.96.0.10:443\"",
            "controllerAddresses: expected a list of strings, found a string",
        ),
        (
            "controllerCAConfigMap: antrea-ca",
            r#"controllerCAConfigMap: "antrea-ca" is not namespace/name, such as kube-system/antrea-ca"#,
        ),
        (
            "controllerServerName: \"not a name\"",
            r#"controllerServerName: "not a name" is not a DNS name or IP address, such as antrea.kube-system.svc"#,
        ),
        (
            "policyStateFile: 3",
            "policyStateFile: expected a string, found an integer",
        ),
    ];
    for (text, message) in cases {
        assert_eq!(error(text, Platform::Linux), message, "{text}");
    }
}
