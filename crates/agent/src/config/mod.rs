//! `antrea-agent.conf`: Antrea's agent configuration keys where antrea-rs gives them the same
//! meaning, Antrea's defaults per platform, validation with one clear error, warnings for keys
//! that are ignored, and the values derived from the configuration (tunnel port, MTU, OVS
//! endpoints).

mod agent_api;
mod choices;
mod derived;
mod duration;
mod error;
mod features;
mod node_name;
mod parse;
mod platform;
mod policy_source;
mod section;
mod tls;

use std::path::{Path, PathBuf};
use std::time::Duration;

use ipnet::{IpNet, Ipv4Net};
use localipc::Endpoint;

pub use agent_api::AgentApiConfig;
pub use choices::{DatapathType, PolicyComputation, TrafficEncapMode, TunnelType};
pub use derived::{OVS_TUNNEL_MAX_MTU, mtu_deduction};
pub use error::{ConfigError, ConfigWarning};
pub use features::{Feature, FeatureGates};
pub use node_name::{node_name, node_name_from_environment};
pub use platform::Platform;
pub use policy_source::ControllerConnection;
pub use tls::{TlsCipherSuite, TlsSettings, TlsVersion};

/// The agent's configuration with every default applied.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// The platform whose defaults and rules were applied.
    pub platform: Platform,
    /// `featureGates`.
    pub feature_gates: FeatureGates,
    /// `cniSocket`: where the CNI gRPC server listens.
    pub cni_socket: Endpoint,
    /// `clientConnection.kubeconfig`: the kubeconfig file; `None` means in-cluster configuration.
    pub kubeconfig: Option<PathBuf>,
    /// `kubeAPIServerOverride`: the API server address to use instead of the kubeconfig's.
    pub kube_api_server_override: Option<String>,
    /// `ovsBridge` (default `br-int`).
    pub ovs_bridge: String,
    /// `ovsDatapathType` (default `system`).
    pub ovs_datapath_type: DatapathType,
    /// `ovsRunDir`: the directory of Open vSwitch's sockets.
    pub ovs_run_dir: String,
    /// `hostGateway`: the gateway interface's name (default `antrea-gw0`).
    pub host_gateway: String,
    /// `trafficEncapMode` (default `encap`).
    pub traffic_encap_mode: TrafficEncapMode,
    /// `noSNAT`: no SNAT of Pod traffic leaving the cluster (noEncap only).
    pub no_snat: bool,
    /// `tunnelType` (default `geneve`).
    pub tunnel_type: TunnelType,
    /// `tunnelPort`: the tunnel's UDP destination port; 0 means the protocol's IANA port.
    pub tunnel_port: u16,
    /// `tunnelCsum`: compute UDP checksums on tunnel packets.
    pub tunnel_csum: bool,
    /// `defaultMTU`: the Pod and gateway MTU; 0 means derived from the transport interface.
    pub default_mtu: u16,
    /// `serviceCIDR`: the IPv4 Service CIDR the Node routes into the datapath with
    /// `antreaProxy.proxyAll`. Unset (or `""`): discovered from the Services' cluster IPs.
    pub service_cidr: Option<Ipv4Net>,
    /// `transportInterface`: the interface carrying traffic between Nodes.
    pub transport_interface: Option<String>,
    /// `transportInterfaceCIDRs`: find the transport interface by its network.
    pub transport_interface_cidrs: Vec<IpNet>,
    /// `apiPort`: the agent API's port (default 10350).
    pub api_port: u16,
    /// The agent API's bind address, certificate, TLS version and local access directory.
    pub api: AgentApiConfig,
    /// `enablePrometheusMetrics` (default true).
    pub enable_prometheus_metrics: bool,
    /// `antreaProxy`.
    pub antrea_proxy: AntreaProxyConfig,
    /// `hnsReconcileInterval` (antrea-rs, Windows): time between two passes of the HNS
    /// reconciler (default 60 s).
    pub hns_reconcile_interval: Duration,
    /// `takeoverWatchdog` (antrea-rs, Windows).
    pub takeover_watchdog: TakeoverWatchdogConfig,
    /// `policyComputation` (antrea-rs): where NetworkPolicy comes from (default `local`).
    pub policy_computation: PolicyComputation,
    /// `controllerAddresses`, `controllerCAConfigMap`, `controllerServerName`,
    /// `controllerTokenFile` (antrea-rs): how to reach antrea-controller in controller mode.
    pub controller: ControllerConnection,
    /// `policyStateFile` (antrea-rs): where the last NetworkPolicy view received from the
    /// controller is kept, to be enforced at the next start before the controller answers.
    pub policy_state_file: PathBuf,
}

/// The `takeoverWatchdog` section: after a NIC takeover, how long and how often the agent
/// checks that the Node still reaches its default gateway or the API server, and how many
/// probes in a row both may miss before the takeover is rolled back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TakeoverWatchdogConfig {
    /// `takeoverWatchdog.duration`: how long the watch lasts after the takeover (default 5 m;
    /// 0 turns it off).
    pub duration: Duration,
    /// `takeoverWatchdog.probeInterval`: time between two probes of each target, and the longest
    /// one probe may wait for an answer (default 5 s).
    pub probe_interval: Duration,
    /// `takeoverWatchdog.lostProbes`: probes in a row both targets must miss for a rollback
    /// (default 6).
    pub lost_probes: u32,
}

/// The `antreaProxy` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AntreaProxyConfig {
    /// `antreaProxy.enable` (default true).
    pub enable: bool,
    /// `antreaProxy.proxyAll`: also serve NodePort/LoadBalancer and host traffic (default false).
    pub proxy_all: bool,
    /// `antreaProxy.nodePortAddresses`: the IPv4 prefixes whose Node addresses serve
    /// NodePorts (default empty: every address of the Node).
    pub node_port_addresses: Vec<Ipv4Net>,
}

/// A configuration that was accepted, with what was ignored on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedConfig {
    /// The configuration.
    pub config: AgentConfig,
    /// Keys that were ignored, in document order per section.
    pub warnings: Vec<ConfigWarning>,
}

impl AgentConfig {
    /// Antrea's defaults on `platform` (what an empty configuration file gives).
    pub fn defaults(platform: Platform) -> AgentConfig {
        AgentConfig {
            platform,
            feature_gates: FeatureGates::defaults(platform),
            cni_socket: platform
                .default_cni_socket()
                .parse()
                .expect("the default CNI socket is a valid endpoint"),
            kubeconfig: None,
            kube_api_server_override: None,
            ovs_bridge: "br-int".to_owned(),
            ovs_datapath_type: DatapathType::System,
            ovs_run_dir: platform.default_ovs_run_dir().to_owned(),
            host_gateway: "antrea-gw0".to_owned(),
            traffic_encap_mode: TrafficEncapMode::Encap,
            no_snat: false,
            tunnel_type: TunnelType::Geneve,
            tunnel_port: 0,
            tunnel_csum: false,
            default_mtu: 0,
            service_cidr: None,
            transport_interface: None,
            transport_interface_cidrs: Vec::new(),
            api_port: 10350,
            api: AgentApiConfig::defaults(platform),
            enable_prometheus_metrics: true,
            antrea_proxy: AntreaProxyConfig {
                enable: true,
                proxy_all: false,
                node_port_addresses: Vec::new(),
            },
            hns_reconcile_interval: Duration::from_secs(60),
            takeover_watchdog: TakeoverWatchdogConfig {
                duration: Duration::from_secs(5 * 60),
                probe_interval: Duration::from_secs(5),
                lost_probes: 6,
            },
            policy_computation: PolicyComputation::Local,
            controller: ControllerConnection::defaults(),
            policy_state_file: platform.default_policy_state_file().into(),
        }
    }

    /// Parses the text of `antrea-agent.conf` for `platform`. This is also the fuzzing entry
    /// point: any text gives a configuration or an error, never a panic.
    pub fn parse(text: &str, platform: Platform) -> Result<LoadedConfig, ConfigError> {
        parse::parse(text, platform)
    }

    /// Every key antrea-rs implements, as dotted paths (`antreaProxy.proxyAll`), sections
    /// included (`antreaProxy`). Taken from the parser itself, so it cannot miss a key the
    /// parser reads; Antrea keys that are accepted and ignored are not in it.
    pub fn implemented_keys() -> Vec<String> {
        parse::implemented_keys()
    }

    /// Reads and parses the configuration file at `path`.
    pub fn load(path: &Path, platform: Platform) -> Result<LoadedConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        AgentConfig::parse(&text, platform)
    }
}
