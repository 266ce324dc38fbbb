//! Reading the YAML document key by key into an [`AgentConfig`], then the rules that involve
//! several keys or the platform.

use std::time::Duration;

use serde_json::Value;

use super::choices::Choice;
use super::policy_source::{check_address, check_server_name, parse_config_map};
use super::section::Section;
use super::tls::parse_cipher_suites;
use super::{
    AgentConfig, ConfigError, ConfigWarning, DatapathType, Feature, LoadedConfig, Platform,
    PolicyComputation, TlsVersion, TrafficEncapMode, TunnelType,
};

/// Top-level Antrea keys antrea-rs accepts and ignores (a warning when set).
const NOT_IMPLEMENTED: &[&str] = &[
    "antreaClientConnection",
    "podCIDRs",
    "snatFullyRandomPorts",
    "hostProcPathPrefix",
    "serviceCIDRv6",
    "enableIPSecTunnel",
    "wireGuard",
    "enableBridgingMode",
    "disableTXChecksumOffload",
    "clusterPort",
    "memberlist",
    "flowCollectorAddr",
    "flowPollInterval",
    "activeFlowExportTimeout",
    "idleFlowExportTimeout",
    "nplPortRange",
    "nodePortLocal",
    "flowExporter",
    "dnsServerOverride",
    "fqdnCacheMinTTL",
    "multicastInterfaces",
    "multicast",
    "egress",
    "ipsec",
    "multicluster",
    "nodeType",
    "externalNode",
    "auditLogging",
    "secondaryNetwork",
    "packetInRate",
    "hostNetworkAcceleration",
    "hostNetworkMode",
    "agentRole",
];

/// `antreaProxy` keys antrea-rs accepts and ignores.
const PROXY_NOT_IMPLEMENTED: &[&str] = &[
    "skipServices",
    "proxyLoadBalancerIPs",
    "serviceProxyName",
    "defaultLoadBalancerMode",
    "disableServiceHealthCheckServer",
    "serviceHealthCheckServerBindAddress",
];

/// `clientConnection` keys (Kubernetes' client connection settings) antrea-rs ignores.
const CLIENT_NOT_IMPLEMENTED: &[&str] = &["acceptContentTypes", "contentType", "qps", "burst"];

pub(super) fn parse(text: &str, platform: Platform) -> Result<LoadedConfig, ConfigError> {
    read(text, platform, &mut Vec::new())
}

/// Every key antrea-rs implements, as dotted paths (sections too: `antreaProxy` and
/// `antreaProxy.enable`): what reading an empty document asks for, so a key added to the
/// parser is in this list without being listed a second time.
pub(super) fn implemented_keys() -> Vec<String> {
    let mut keys = Vec::new();
    read("", Platform::Linux, &mut keys).expect("an empty configuration is valid");
    keys
}

/// Reads `text`; `keys` receives the path of every implemented key the parser asks for.
fn read(
    text: &str,
    platform: Platform,
    keys: &mut Vec<String>,
) -> Result<LoadedConfig, ConfigError> {
    // Comments are not read, so not buffered: with comment events on, a run of more than 32
    // comment lines after a key with nothing after it (`featureGates:` followed by commented
    // gates, as in Antrea's and our ConfigMaps) is refused as "too many buffered comments".
    let mut options = serde_saphyr::Options::default();
    options.emit_comments = false;
    let document: Value =
        serde_saphyr::from_str_with_options(text, options).map_err(|e| ConfigError::Yaml {
            message: e.to_string(),
        })?;
    let mut root = Section::root(&document)?;
    let mut warnings = Vec::new();
    let mut config = AgentConfig::defaults(platform);

    for (name, enabled) in root.bool_map("featureGates")? {
        match Feature::from_name(name) {
            Some(feature) => config.feature_gates.set(feature, enabled),
            None => warnings.push(ConfigWarning::UnknownFeatureGate {
                name: name.to_owned(),
            }),
        }
    }
    if let Some(socket) = root.string("cniSocket")? {
        config.cni_socket = socket.parse().map_err(|_| ConfigError::InvalidValue {
            key: "cniSocket".to_owned(),
            value: format!("{socket:?}"),
            allowed: r"an absolute Unix socket path or a \\.\pipe\NAME named pipe".to_owned(),
        })?;
    }
    let mut client = root.section("clientConnection")?;
    config.kubeconfig = client.string("kubeconfig")?.map(Into::into);
    keys.extend(client.keys_read());
    client.not_implemented(CLIENT_NOT_IMPLEMENTED, &mut warnings);
    client.finish(&mut warnings);
    config.kube_api_server_override = root.string("kubeAPIServerOverride")?.map(str::to_owned);

    if let Some(bridge) = root.string("ovsBridge")? {
        config.ovs_bridge = bridge.to_owned();
    }
    if let Some(datapath) = root.string("ovsDatapathType")? {
        config.ovs_datapath_type = DatapathType::parse("ovsDatapathType", datapath)?;
    }
    if let Some(run_dir) = root.string("ovsRunDir")? {
        config.ovs_run_dir = run_dir.to_owned();
    }
    if let Some(gateway) = root.string("hostGateway")? {
        config.host_gateway = gateway.to_owned();
    }
    if let Some(mode) = root.string("trafficEncapMode")? {
        config.traffic_encap_mode = TrafficEncapMode::parse("trafficEncapMode", mode)?;
    }
    config.no_snat = root.bool("noSNAT")?.unwrap_or(false);
    if let Some(tunnel) = root.string("tunnelType")? {
        config.tunnel_type = TunnelType::parse("tunnelType", tunnel)?;
    }
    config.tunnel_port = port(root.integer("tunnelPort", 0, 65535)?).unwrap_or(0);
    config.tunnel_csum = root.bool("tunnelCsum")?.unwrap_or(false);
    if let Some(encryption) = root.string("trafficEncryptionMode")? {
        check_encryption_mode(encryption)?;
    }
    config.default_mtu = port(root.integer("defaultMTU", 0, 65535)?).unwrap_or(0);
    if let Some(cidr) = root.string("serviceCIDR")? {
        match parse_cidr("serviceCIDR".to_owned(), cidr)? {
            ipnet::IpNet::V4(v4) => config.service_cidr = Some(v4.trunc()),
            ipnet::IpNet::V6(_) => {
                return Err(ConfigError::InvalidValue {
                    key: "serviceCIDR".to_owned(),
                    value: format!("{cidr:?}"),
                    allowed: "an IPv4 CIDR such as 10.96.0.0/12 (IPv6 is serviceCIDRv6)".to_owned(),
                });
            }
        }
    }
    config.transport_interface = root.string("transportInterface")?.map(str::to_owned);
    config.transport_interface_cidrs = root
        .strings("transportInterfaceCIDRs")?
        .into_iter()
        .enumerate()
        .map(|(i, cidr)| parse_cidr(format!("transportInterfaceCIDRs[{i}]"), cidr))
        .collect::<Result<_, _>>()?;
    if let Some(api_port) = port(root.integer("apiPort", 0, 65535)?).filter(|p| *p != 0) {
        config.api_port = api_port;
    }
    if let Some(address) = root.string("apiBindAddress")? {
        config.api.bind_address = address.parse().map_err(|_| ConfigError::InvalidValue {
            key: "apiBindAddress".to_owned(),
            value: format!("{address:?}"),
            allowed: "an IP address such as 0.0.0.0, 127.0.0.1 or ::".to_owned(),
        })?;
    }
    config.api.tls_cert_file = root.string("apiTLSCertFile")?.map(Into::into);
    config.api.tls_private_key_file = root.string("apiTLSPrivateKeyFile")?.map(Into::into);
    if let Some(version) = root.string("tlsMinVersion")? {
        config.api.tls.min_version = TlsVersion::parse("tlsMinVersion", version)?;
    }
    if let Some(suites) = root.string("tlsCipherSuites")? {
        config.api.tls.cipher_suites = parse_cipher_suites("tlsCipherSuites", suites)?;
    }
    if let Some(dir) = root.string("apiLocalAccessDir")? {
        config.api.local_access_dir = dir.into();
    }
    if let Some(metrics) = root.bool("enablePrometheusMetrics")? {
        config.enable_prometheus_metrics = metrics;
    }
    let mut proxy = root.section("antreaProxy")?;
    if let Some(enable) = proxy.bool("enable")? {
        config.antrea_proxy.enable = enable;
    }
    config.antrea_proxy.proxy_all = proxy.bool("proxyAll")?.unwrap_or(false);
    for (i, cidr) in proxy.strings("nodePortAddresses")?.into_iter().enumerate() {
        let key = format!("antreaProxy.nodePortAddresses[{i}]");
        match parse_cidr(key.clone(), cidr)? {
            ipnet::IpNet::V4(v4) => config.antrea_proxy.node_port_addresses.push(v4.trunc()),
            ipnet::IpNet::V6(_) => {
                return Err(ConfigError::InvalidValue {
                    key,
                    value: format!("{cidr:?}"),
                    allowed: "an IPv4 CIDR such as 192.168.1.0/24 (IPv6 NodePorts are not served)"
                        .to_owned(),
                });
            }
        }
    }
    keys.extend(proxy.keys_read());
    proxy.not_implemented(PROXY_NOT_IMPLEMENTED, &mut warnings);
    proxy.finish(&mut warnings);

    if let Some(interval) = root.duration("hnsReconcileInterval", MIN_INTERVAL)? {
        config.hns_reconcile_interval = interval;
    }
    let mut watchdog = root.section("takeoverWatchdog")?;
    if let Some(duration) = watchdog.duration("duration", Duration::ZERO)? {
        config.takeover_watchdog.duration = duration;
    }
    if let Some(interval) = watchdog.duration("probeInterval", MIN_INTERVAL)? {
        config.takeover_watchdog.probe_interval = interval;
    }
    if let Some(lost) = watchdog.integer("lostProbes", 1, 1000)? {
        config.takeover_watchdog.lost_probes = u32::try_from(lost).unwrap_or(u32::MAX);
    }
    keys.extend(watchdog.keys_read());
    watchdog.finish(&mut warnings);

    if let Some(computation) = root.string("policyComputation")? {
        config.policy_computation = PolicyComputation::parse("policyComputation", computation)?;
    }
    config.controller.addresses = root
        .strings("controllerAddresses")?
        .into_iter()
        .enumerate()
        .map(|(i, address)| check_address(format!("controllerAddresses[{i}]"), address))
        .collect::<Result<_, _>>()?;
    if let Some(config_map) = root.string("controllerCAConfigMap")? {
        config.controller.ca_config_map = parse_config_map("controllerCAConfigMap", config_map)?;
    }
    if let Some(name) = root.string("controllerServerName")? {
        config.controller.server_name = check_server_name("controllerServerName", name)?;
    }
    if let Some(file) = root.string("controllerTokenFile")? {
        config.controller.token_file = file.into();
    }
    if let Some(file) = root.string("policyStateFile")? {
        config.policy_state_file = file.into();
    }

    keys.extend(root.keys_read());
    root.not_implemented(NOT_IMPLEMENTED, &mut warnings);
    root.finish(&mut warnings);
    validate(&config)?;
    Ok(LoadedConfig { config, warnings })
}

/// The shortest interval of a periodic check: one second.
const MIN_INTERVAL: Duration = Duration::from_secs(1);

/// A value already checked to lie in `0..=65535`.
fn port(value: Option<i64>) -> Option<u16> {
    value.and_then(|v| u16::try_from(v).ok())
}

fn parse_cidr(key: String, text: &str) -> Result<ipnet::IpNet, ConfigError> {
    text.parse().map_err(|_| ConfigError::InvalidValue {
        key,
        value: format!("{text:?}"),
        allowed: "a CIDR such as 10.96.0.0/12".to_owned(),
    })
}

/// Only `none` is implemented: no IPsec, no WireGuard.
fn check_encryption_mode(mode: &str) -> Result<(), ConfigError> {
    const KEY: &str = "trafficEncryptionMode";
    if mode.eq_ignore_ascii_case("none") {
        Ok(())
    } else if mode.eq_ignore_ascii_case("ipsec") || mode.eq_ignore_ascii_case("wireguard") {
        Err(ConfigError::NotSupported {
            key: KEY.to_owned(),
            value: format!("{mode:?}"),
            reason: "antrea-rs does not encrypt traffic between Nodes; use none".to_owned(),
        })
    } else {
        Err(ConfigError::InvalidValue {
            key: KEY.to_owned(),
            value: format!("{mode:?}"),
            allowed: "one of none, ipsec, wireGuard".to_owned(),
        })
    }
}

/// The rules that involve several keys or the platform (Antrea's, kept where they apply).
fn validate(config: &AgentConfig) -> Result<(), ConfigError> {
    if config.no_snat && config.traffic_encap_mode != TrafficEncapMode::NoEncap {
        return Err(ConfigError::Conflict {
            key: "noSNAT".to_owned(),
            message: format!(
                "true is only allowed with trafficEncapMode noEncap, not {}",
                config.traffic_encap_mode
            ),
        });
    }
    if config.traffic_encap_mode != TrafficEncapMode::Encap && !config.antrea_proxy.enable {
        return Err(ConfigError::Conflict {
            key: "antreaProxy.enable".to_owned(),
            message: format!(
                "false is not allowed with trafficEncapMode {}: Service traffic would bypass NetworkPolicy",
                config.traffic_encap_mode
            ),
        });
    }
    if config.api.tls_cert_file.is_some() != config.api.tls_private_key_file.is_some() {
        return Err(ConfigError::Conflict {
            key: "apiTLSCertFile".to_owned(),
            message: "apiTLSCertFile and apiTLSPrivateKeyFile go together: set both or neither"
                .to_owned(),
        });
    }
    if config.default_mtu != 0 && config.default_mtu < 68 {
        return Err(ConfigError::InvalidValue {
            key: "defaultMTU".to_owned(),
            value: config.default_mtu.to_string(),
            allowed: "0 (derived from the transport interface) or a whole number in 68..65535"
                .to_owned(),
        });
    }
    if config.platform == Platform::Windows {
        if config.ovs_datapath_type != DatapathType::System {
            return Err(ConfigError::NotSupported {
                key: "ovsDatapathType".to_owned(),
                value: format!("{:?}", config.ovs_datapath_type.to_string()),
                reason: "Open vSwitch on Windows has only the system datapath".to_owned(),
            });
        }
        let unsupported: Vec<&str> = config
            .feature_gates
            .explicit()
            .filter(|(feature, on)| *on && !feature.supported_on_windows())
            .map(|(feature, _)| feature.name())
            .collect();
        if !unsupported.is_empty() {
            return Err(ConfigError::NotSupported {
                key: "featureGates".to_owned(),
                value: unsupported.join(", "),
                reason: "these features are not available on Windows Nodes".to_owned(),
            });
        }
    }
    Ok(())
}
