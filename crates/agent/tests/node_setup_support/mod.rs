//! What the node setup tests share: a stateful fake service manager, fake Windows features, a
//! fake Windows Node (one NIC, HNS + IP Helper + NetNat + firewall fakes) with the host network
//! backend over it, the agent's host bring-up on it, and a snapshot of everything the lifecycle
//! may touch.
#![allow(dead_code)] // each test binary uses a different part

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent::node_setup::{FeatureState, Features, ServiceManager, SetupError};
use agent::service::{
    InstallPlan, Installed, InstalledService, ServiceSpec, Uninstalled, command_line,
};
use hcn::HcnApi;
use hcn::fake::AdapterRoute;
use hcn::schema::HostComputeNamespace;
use hostnet::windows::{FakeWindows, HNS_NETWORK, WindowsHost, WindowsSettings};
use hostnet::{
    GatewayConfig, HostNetwork, PeerRoute, PodInterfaceSpec, PodSnat, TransportSelector,
};
use model::MacAddr;
use winos::firewall::FakeFirewall;
use winos::model::{Adapter, InterfaceType, Luid, OperStatus};
use winos::netnat::FakeNetNat;
use winos::{FakeIpHelper, IpHelper};

/// One call to [`FakeServices`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceCall {
    Create(ServiceSpec),
    Update(ServiceSpec),
    Stop(String),
    Delete(String),
}

/// A stateful service control manager: services by name (case-insensitively, as the SCM),
/// each running or not, and a log of the writes.
#[derive(Debug, Default)]
pub struct FakeServices {
    state: Mutex<ServicesState>,
}

/// The services by lowercase name, each with whether it runs, and the writes.
#[derive(Debug, Default)]
struct ServicesState {
    services: BTreeMap<String, (ServiceSpec, bool)>,
    calls: Vec<ServiceCall>,
}

impl FakeServices {
    /// A service registered by someone else (containerd, the OVS driver).
    pub fn register(&self, name: &str) {
        let spec = ServiceSpec {
            name: name.to_owned(),
            display_name: name.to_owned(),
            description: String::new(),
            program: format!(r"C:\Windows\{name}.exe").into(),
            arguments: Vec::new(),
            start: agent::service::StartType::Auto,
            dependencies: Vec::new(),
            failure_actions: agent::service::FailureActions::none(),
        };
        self.state
            .lock()
            .unwrap()
            .services
            .insert(name.to_lowercase(), (spec, false));
    }

    /// Marks every registered service running (as the SCM starts them at boot).
    pub fn start_all(&self) {
        for (_, running) in self.state.lock().unwrap().services.values_mut() {
            *running = true;
        }
    }

    /// The registered services' names.
    pub fn names(&self) -> Vec<String> {
        self.state
            .lock()
            .unwrap()
            .services
            .values()
            .map(|(spec, _)| spec.name.clone())
            .collect()
    }

    /// The writes so far, and forgets them.
    pub fn take_calls(&self) -> Vec<ServiceCall> {
        std::mem::take(&mut self.state.lock().unwrap().calls)
    }
}

fn installed_of(spec: &ServiceSpec) -> InstalledService {
    InstalledService {
        display_name: spec.display_name.clone(),
        start: spec.start,
        command_line: command_line::join(&spec.command_line()),
        dependencies: spec.dependencies.clone(),
        failure_actions: Some(spec.failure_actions.clone()),
    }
}

impl ServiceManager for FakeServices {
    fn installed(&self, name: &str) -> Result<Option<InstalledService>, SetupError> {
        Ok(self
            .state
            .lock()
            .unwrap()
            .services
            .get(&name.to_lowercase())
            .map(|(spec, _)| installed_of(spec)))
    }

    fn install(&self, spec: &ServiceSpec) -> Result<Installed, SetupError> {
        let installed = self.installed(&spec.name)?;
        let mut state = self.state.lock().unwrap();
        let key = spec.name.to_lowercase();
        Ok(match InstallPlan::new(spec, installed.as_ref()) {
            InstallPlan::Create => {
                state.services.insert(key, (spec.clone(), false));
                state.calls.push(ServiceCall::Create(spec.clone()));
                Installed::Created
            }
            InstallPlan::Update(differences) => {
                state.services.get_mut(&key).unwrap().0 = spec.clone();
                state.calls.push(ServiceCall::Update(spec.clone()));
                Installed::Updated(differences)
            }
            InstallPlan::Unchanged => Installed::Unchanged,
        })
    }

    fn uninstall(&self, name: &str) -> Result<Uninstalled, SetupError> {
        let mut state = self.state.lock().unwrap();
        let Some((_, running)) = state.services.remove(&name.to_lowercase()) else {
            return Ok(Uninstalled::Missing);
        };
        if running {
            state.calls.push(ServiceCall::Stop(name.to_owned()));
        }
        state.calls.push(ServiceCall::Delete(name.to_owned()));
        Ok(Uninstalled::Deleted { stopped: running })
    }
}

/// Windows features by name; a name not set is unknown.
#[derive(Debug, Default)]
pub struct FakeFeatures {
    pub states: BTreeMap<String, FeatureState>,
}

impl FakeFeatures {
    /// Hyper-V and Containers enabled.
    pub fn ready() -> FakeFeatures {
        FakeFeatures {
            states: ["Microsoft-Hyper-V", "Containers"]
                .map(|name| (name.to_owned(), FeatureState::Enabled))
                .into(),
        }
    }
}

impl Features for FakeFeatures {
    fn state(&self, name: &str) -> Result<FeatureState, SetupError> {
        Ok(self
            .states
            .get(name)
            .copied()
            .unwrap_or(FeatureState::Unknown))
    }
}

pub const NIC: &str = "Ethernet0";
pub const GATEWAY: &str = "antrea-gw0";
/// The Pod interface (HNS endpoint) the bring-up makes.
pub fn pod_interface() -> String {
    hostnet::naming::endpoint_name("web-7975b6c8d-x2x9q", "4f3c2b1a")
}
pub const GATEWAY_MAC: MacAddr = MacAddr([0x00, 0x15, 0x5d, 0x01, 0x02, 0x03]);

pub type Host = WindowsHost<FakeWindows, FakeIpHelper, FakeNetNat, FakeFirewall>;

/// A fake Windows Node with one physical NIC, `10.10.0.11/24`, and the backend over it.
pub struct Node {
    pub fake: Arc<FakeWindows>,
    pub ip: Arc<FakeIpHelper>,
    pub nat: Arc<FakeNetNat>,
    pub firewall: Arc<FakeFirewall>,
    pub host: Host,
}

impl Node {
    pub fn new() -> Node {
        let fake = Arc::new(FakeWindows::new());
        let nic = Adapter {
            name: "{00000000-0000-0000-0000-000000000004}".into(),
            alias: NIC.into(),
            description: "Intel(R) 82574L Gigabit Network Connection".into(),
            index: 4,
            luid: Luid(4),
            mac: Some(MacAddr([0x00, 0x15, 0x5d, 0xaa, 0xbb, 0xcc])),
            mtu: 1500,
            ipv4: vec!["10.10.0.11/24".parse().unwrap()],
            dns_servers: vec!["10.10.0.2".parse().unwrap()],
            dns_suffix: String::new(),
            oper_status: OperStatus::Up,
            if_type: InterfaceType::Ethernet,
        };
        let route = |destination: &str, next_hop: &str| AdapterRoute {
            destination: destination.parse().unwrap(),
            next_hop: next_hop.parse().unwrap(),
            metric: 256,
        };
        fake.add_nic(
            nic,
            &[
                route("0.0.0.0/0", "10.10.0.1"),
                route("192.168.50.0/24", "10.10.0.1"),
            ],
        )
        .unwrap();
        let ip = fake.ip_helper();
        let (nat, firewall) = (Arc::new(FakeNetNat::new()), Arc::new(FakeFirewall::new()));
        let settings = WindowsSettings {
            settle_wait: Duration::from_millis(100),
            poll_interval: Duration::from_millis(5),
            ..WindowsSettings::new("10.244.1.0/24".parse().unwrap())
        };
        let host = WindowsHost::new(
            fake.clone(),
            ip.clone(),
            nat.clone(),
            firewall.clone(),
            settings,
        );
        Node {
            fake,
            ip,
            nat,
            firewall,
            host,
        }
    }

    /// The agent's host bring-up through the backend: the NIC taken over for `br-int`, the
    /// gateway (its vNIC made as OVS makes an internal port's), a peer route, the Pod SNAT and
    /// one Pod's endpoint (in a namespace containerd made).
    pub async fn bring_up(&self) {
        let nic = self
            .host
            .find_transport_interface(&TransportSelector::NodeIp("10.10.0.11".parse().unwrap()))
            .await
            .unwrap();
        self.host.prepare_bridge(&nic, "br-int").await.unwrap();
        self.host.take_over_uplink(&nic, "br-int").await.unwrap();
        self.fake.add_internal_port(GATEWAY, GATEWAY_MAC).unwrap();
        self.host
            .configure_gateway(&GatewayConfig {
                name: GATEWAY.into(),
                address: "10.244.1.1/24".parse().unwrap(),
                mac: None,
                mtu: 1450,
            })
            .await
            .unwrap();
        self.host
            .reconcile_peer_routes(&[PeerRoute {
                destination: "10.244.2.0/24".parse().unwrap(),
                gateway: "10.244.2.1".parse().unwrap(),
                interface: GATEWAY.into(),
                onlink: true,
            }])
            .await
            .unwrap();
        self.host
            .ensure_pod_snat(&PodSnat {
                pod_cidr: "10.244.1.0/24".parse().unwrap(),
                cluster_cidrs: vec!["10.244.0.0/16".parse().unwrap()],
                egress_interface: "br-int".into(),
            })
            .await
            .unwrap();
        let namespace = self
            .fake
            .create_namespace(&HostComputeNamespace::default())
            .unwrap();
        self.host
            .create_pod_interface(&PodInterfaceSpec {
                netns: namespace.id.to_string(),
                ifname: "eth0".into(),
                host_ifname: pod_interface(),
                address: "10.244.1.10/24".parse().unwrap(),
                gateway: "10.244.1.1".parse().unwrap(),
                mtu: 1450,
                dns: None,
            })
            .await
            .unwrap();
    }

    /// What stopping Open vSwitch does to the host: the vSwitch's internal port `antrea-gw0`
    /// goes with it (the HNS fake does not know OVS's ports).
    pub fn ovs_stopped(&self) {
        if let Some(gateway) = self.ip.adapter_by_alias(GATEWAY).unwrap() {
            self.ip.remove_adapter(gateway.index).unwrap();
        }
    }

    /// Everything the lifecycle may change on the host.
    pub fn snapshot(&self) -> HostSnapshot {
        let adapters = self.ip.adapters().unwrap();
        let alias = |index: u32| {
            adapters
                .iter()
                .find(|adapter| adapter.index == index)
                .map_or_else(|| format!("#{index}"), |adapter| adapter.alias.clone())
        };
        let mut routes: Vec<_> = self
            .ip
            .routes()
            .unwrap()
            .into_iter()
            .map(|route| {
                (
                    alias(route.interface_index),
                    route.destination.to_string(),
                    route.next_hop.to_string(),
                    route.metric,
                )
            })
            .collect();
        routes.sort();
        let mut adapter_state: Vec<_> = adapters
            .iter()
            .map(|adapter| {
                (
                    adapter.alias.clone(),
                    adapter.ipv4.iter().map(ToString::to_string).collect(),
                    adapter.dns_servers.clone(),
                )
            })
            .collect();
        adapter_state.sort();
        HostSnapshot {
            adapters: adapter_state,
            routes,
            has_antrea_network: self
                .fake
                .find_network_by_name(HNS_NETWORK)
                .unwrap()
                .is_some(),
            nats: self.nat.instances().len(),
            firewall_rules: self
                .firewall
                .rules()
                .iter()
                .map(|r| r.name.clone())
                .collect(),
        }
    }
}

/// The host as the lifecycle sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSnapshot {
    pub adapters: Vec<(String, Vec<String>, Vec<IpAddr>)>,
    pub routes: Vec<(String, String, String, u32)>,
    pub has_antrea_network: bool,
    pub nats: usize,
    pub firewall_rules: Vec<String>,
}

/// Every file under `root` with its content, and every directory (content `None`).
pub fn files_under(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut files = BTreeMap::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(root).unwrap().display().to_string();
            if path.is_dir() {
                files.insert(name, None);
                dirs.push(path);
            } else {
                files.insert(name, Some(std::fs::read(&path).unwrap()));
            }
        }
    }
    files
}

/// The OVS install as the zip leaves it: the schema in `usr\share\openvswitch` (the one this
/// repository's tests use) and a program file.
pub fn install_ovs_files(root: &Path) {
    let share = root
        .join("openvswitch")
        .join("usr")
        .join("share")
        .join("openvswitch");
    std::fs::create_dir_all(&share).unwrap();
    std::fs::write(share.join("vswitch.ovsschema"), vswitch_schema()).unwrap();
    let sbin = root.join("openvswitch").join("usr").join("sbin");
    std::fs::create_dir_all(&sbin).unwrap();
    std::fs::write(sbin.join("ovsdb-server.exe"), b"MZ").unwrap();
}

/// Open vSwitch's database schema as Debian's `openvswitch-common` installs it (scripts/setup.sh
/// installs the package; under Wine the Linux file system is drive `Z:`).
pub fn vswitch_schema() -> String {
    let path = if cfg!(windows) {
        r"Z:\usr\share\openvswitch\vswitch.ovsschema"
    } else {
        "/usr/share/openvswitch/vswitch.ovsschema"
    };
    std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!("{path}: {e} (Open vSwitch's schema; scripts/setup.sh installs openvswitch-switch)")
    })
}
