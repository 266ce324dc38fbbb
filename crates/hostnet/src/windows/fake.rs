//! [`FakeWindows`]: one fake Windows host for tests, joining `hcn`'s [`FakeHcn`] and `winos`'s
//! [`FakeIpHelper`], which each keep adapters of their own.
//!
//! The one source of truth is the [`FakeIpHelper`]: it holds the adapters, addresses, routes,
//! DNS servers and interface settings the backend reads and writes. [`FakeHcn`]'s host model is
//! HNS's private view; after every HNS call that can change adapters, `FakeWindows` compares
//! that model with its state before the call and replays the difference onto the IP Helper:
//! a new vNIC (network or endpoint) is added with a fresh interface index, a vanished one is
//! removed, and addresses and routes HNS moved are moved. Adapters are matched by their HNS
//! owner (so a vNIC the agent renamed through IP Helper stays the same adapter) or, for NICs,
//! by name. Changes the backend makes through IP Helper never flow back into the HNS model,
//! which HNS would not see either. Replayed route writes go through the IP Helper trait, so
//! they appear in [`FakeIpHelper::calls`].

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use hcn::fake::{AdapterRoute, FakeHcn, HostAdapter, HostModel};
use hcn::schema::{
    HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork, HostComputeQuery,
    ModifyNamespaceSettingRequest, ModifyNetworkSettingRequest,
};
use hcn::{Guid, HcnApi};
use ipnet::IpNet;
use model::MacAddr;
use winos::model::{Adapter, InterfaceType, Luid, OperStatus, Route};
use winos::{FakeIpHelper, IpHelper};

/// How a replayed adapter is recognised across HNS calls.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum AdapterId {
    /// A vNIC HNS made for this network or endpoint.
    Owner(Guid),
    /// A NIC, by name.
    Name(String),
}

fn id_of(adapter: &HostAdapter) -> AdapterId {
    adapter
        .owner
        .map_or_else(|| AdapterId::Name(adapter.name.clone()), AdapterId::Owner)
}

/// What a NIC had when it was added, for the vNIC a network makes of it.
#[derive(Debug, Clone)]
struct NicTraits {
    mtu: u32,
    dns: Vec<IpAddr>,
}

#[derive(Debug)]
struct Replay {
    /// HNS's host model after the last replayed call.
    seen: HostModel,
    /// IP Helper interface index of each replayed adapter.
    indexes: BTreeMap<AdapterId, u32>,
    next_index: u32,
    nics: BTreeMap<MacAddr, NicTraits>,
    /// Windows does not move the NIC's configuration to a new network's vNIC (DHCP failure).
    ip_move_fails: bool,
}

/// A fake Windows host: HNS ([`HcnApi`]) and IP Helper over one set of adapters. See the module
/// documentation for how the two stay in step.
#[derive(Debug)]
pub struct FakeWindows {
    hcn: FakeHcn,
    ip: Arc<FakeIpHelper>,
    replay: Mutex<Replay>,
}

impl Default for FakeWindows {
    fn default() -> Self {
        FakeWindows::new()
    }
}

fn route_of(route: &AdapterRoute, index: u32) -> Route {
    Route::new(
        IpNet::V4(route.destination),
        IpAddr::V4(route.next_hop),
        index,
        route.metric,
    )
}

impl FakeWindows {
    /// A host without adapters; the Open vSwitch extension is installed.
    pub fn new() -> Self {
        let hcn = FakeHcn::new(HostModel::default());
        let seen = hcn.host();
        FakeWindows {
            hcn,
            ip: Arc::new(FakeIpHelper::new()),
            replay: Mutex::new(Replay {
                seen,
                indexes: BTreeMap::new(),
                next_index: 10,
                nics: BTreeMap::new(),
                ip_move_fails: false,
            }),
        }
    }

    fn replay(&self) -> MutexGuard<'_, Replay> {
        self.replay
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The IP Helper side, to hand to the backend and to inspect.
    pub fn ip_helper(&self) -> Arc<FakeIpHelper> {
        self.ip.clone()
    }

    /// The HNS side, to inject failures, read calls and HNS's host model.
    pub fn hcn(&self) -> &FakeHcn {
        &self.hcn
    }

    /// Adds a NIC (physical unless its description or alias says virtual) with its IPv4 routes
    /// to both fakes. Its interface index is the adapter's.
    pub fn add_nic(&self, adapter: Adapter, routes: &[AdapterRoute]) -> winos::Result<()> {
        let mac = adapter.mac.unwrap_or(MacAddr([0; 6]));
        let hns_view = HostAdapter {
            name: adapter.alias.clone(),
            mac,
            ipv4: adapter.ipv4.clone(),
            routes: routes.to_vec(),
            is_virtual: adapter.is_virtual(),
            owner: None,
        };
        let index = adapter.index;
        let traits = NicTraits {
            mtu: adapter.mtu,
            dns: adapter.dns_servers.clone(),
        };
        self.ip.add_adapter(adapter)?;
        for route in routes {
            self.ip.create_route(&route_of(route, index))?;
        }
        self.hcn
            .apply(hcn::fake::AdapterChange::Upsert(hns_view.clone()))
            .map_err(|e| winos::WinOsError::InvalidArgument {
                function: "FakeWindows::add_nic",
                detail: e.to_string(),
            })?;
        let mut replay = self.replay();
        replay.seen = self.hcn.host();
        replay.indexes.insert(id_of(&hns_view), index);
        replay.next_index = replay.next_index.max(index + 1);
        replay.nics.insert(mac, traits);
        Ok(())
    }

    /// Adds the vNIC of an OVS internal port (such as `antrea-gw0`), as OVS makes it on Windows:
    /// a Hyper-V virtual adapter HNS does not know. Returns it.
    pub fn add_internal_port(&self, alias: &str, mac: MacAddr) -> winos::Result<Adapter> {
        let index = {
            let mut replay = self.replay();
            replay.next_index += 1;
            replay.next_index - 1
        };
        let adapter = vnic(alias, index, Some(mac), 1500, Vec::new(), Vec::new());
        self.ip.add_adapter(adapter.clone())?;
        Ok(adapter)
    }

    /// Makes Windows leave a new network's vNIC without the NIC's addresses, routes and DNS
    /// servers (what a DHCP failure looks like), or behave normally again.
    pub fn set_ip_move_fails(&self, fails: bool) {
        self.replay().ip_move_fails = fails;
    }

    /// A reboot: HNS loses every network, endpoint and namespace, and the adapters follow.
    pub fn reboot(&self) {
        self.hcn.reboot();
        self.sync();
    }

    /// Runs an HNS call, then replays what it did to the adapters.
    fn changing<T>(&self, call: impl FnOnce(&FakeHcn) -> hcn::Result<T>) -> hcn::Result<T> {
        let result = call(&self.hcn);
        self.sync();
        result
    }

    fn sync(&self) {
        let now = self.hcn.host();
        let mut replay = self.replay();
        let before = std::mem::take(&mut replay.seen.adapters);
        for old in &before {
            let id = id_of(old);
            if !now.adapters.iter().any(|a| id_of(a) == id)
                && let Some(index) = replay.indexes.remove(&id)
                && let Err(e) = self.ip.remove_adapter(index)
            {
                tracing::warn!("fake host: removing adapter {}: {e}", old.name);
            }
        }
        for adapter in &now.adapters {
            let id = id_of(adapter);
            let outcome = match before.iter().find(|a| id_of(a) == id).cloned() {
                None => self.add_replayed(&mut replay, adapter),
                Some(before) if before != *adapter => {
                    self.update_replayed(&replay, &before, adapter)
                }
                Some(_) => Ok(()),
            };
            if let Err(e) = outcome {
                tracing::warn!("fake host: replaying adapter {}: {e}", adapter.name);
            }
        }
        replay.seen = now;
    }

    fn add_replayed(&self, replay: &mut Replay, adapter: &HostAdapter) -> winos::Result<()> {
        let index = replay.next_index;
        replay.next_index += 1;
        replay.indexes.insert(id_of(adapter), index);
        let nic = replay.nics.get(&adapter.mac).cloned();
        let moves = !(replay.ip_move_fails && nic.is_some());
        let (mtu, dns) = nic.map_or((1500, Vec::new()), |n| (n.mtu, n.dns));
        let (ipv4, dns) = if moves {
            (adapter.ipv4.clone(), dns)
        } else {
            (Vec::new(), Vec::new())
        };
        self.ip.add_adapter(vnic(
            &adapter.name,
            index,
            Some(adapter.mac),
            mtu,
            ipv4,
            dns,
        ))?;
        if moves {
            for route in &adapter.routes {
                self.ip.create_route(&route_of(route, index))?;
            }
        }
        Ok(())
    }

    fn update_replayed(
        &self,
        replay: &Replay,
        before: &HostAdapter,
        after: &HostAdapter,
    ) -> winos::Result<()> {
        let Some(&index) = replay.indexes.get(&id_of(after)) else {
            return Ok(());
        };
        self.ip
            .update_adapter(index, |a| a.ipv4 = after.ipv4.clone())?;
        for route in before.routes.iter().filter(|r| !after.routes.contains(r)) {
            self.ip.remove_route(&route_of(route, index).key())?;
        }
        for route in after.routes.iter().filter(|r| !before.routes.contains(r)) {
            self.ip.ensure_route(&route_of(route, index))?;
        }
        Ok(())
    }
}

/// A Hyper-V virtual adapter as IP Helper lists it.
fn vnic(
    alias: &str,
    index: u32,
    mac: Option<MacAddr>,
    mtu: u32,
    ipv4: Vec<ipnet::Ipv4Net>,
    dns: Vec<IpAddr>,
) -> Adapter {
    Adapter {
        name: format!("{{00000000-0000-0000-0000-{index:012}}}"),
        alias: alias.to_owned(),
        description: "Hyper-V Virtual Ethernet Adapter".to_owned(),
        index,
        luid: Luid(u64::from(index)),
        mac,
        mtu,
        ipv4,
        dns_servers: dns,
        dns_suffix: String::new(),
        oper_status: OperStatus::Up,
        if_type: InterfaceType::Ethernet,
    }
}

impl HcnApi for FakeWindows {
    fn create_network(&self, network: &HostComputeNetwork) -> hcn::Result<HostComputeNetwork> {
        self.changing(|h| h.create_network(network))
    }

    fn query_network(&self, id: Guid) -> hcn::Result<HostComputeNetwork> {
        self.hcn.query_network(id)
    }

    fn enumerate_networks(&self, query: &HostComputeQuery) -> hcn::Result<Vec<Guid>> {
        self.hcn.enumerate_networks(query)
    }

    fn delete_network(&self, id: Guid) -> hcn::Result<()> {
        self.changing(|h| h.delete_network(id))
    }

    fn modify_network(&self, id: Guid, request: &ModifyNetworkSettingRequest) -> hcn::Result<()> {
        self.changing(|h| h.modify_network(id, request))
    }

    fn create_endpoint(
        &self,
        network: Guid,
        endpoint: &HostComputeEndpoint,
    ) -> hcn::Result<HostComputeEndpoint> {
        self.changing(|h| h.create_endpoint(network, endpoint))
    }

    fn query_endpoint(&self, id: Guid) -> hcn::Result<HostComputeEndpoint> {
        self.hcn.query_endpoint(id)
    }

    fn enumerate_endpoints(&self, query: &HostComputeQuery) -> hcn::Result<Vec<Guid>> {
        self.hcn.enumerate_endpoints(query)
    }

    fn delete_endpoint(&self, id: Guid) -> hcn::Result<()> {
        self.changing(|h| h.delete_endpoint(id))
    }

    fn create_namespace(
        &self,
        namespace: &HostComputeNamespace,
    ) -> hcn::Result<HostComputeNamespace> {
        self.changing(|h| h.create_namespace(namespace))
    }

    fn query_namespace(&self, id: Guid) -> hcn::Result<HostComputeNamespace> {
        self.hcn.query_namespace(id)
    }

    fn enumerate_namespaces(&self, query: &HostComputeQuery) -> hcn::Result<Vec<Guid>> {
        self.hcn.enumerate_namespaces(query)
    }

    fn delete_namespace(&self, id: Guid) -> hcn::Result<()> {
        self.changing(|h| h.delete_namespace(id))
    }

    fn modify_namespace(
        &self,
        id: Guid,
        request: &ModifyNamespaceSettingRequest,
    ) -> hcn::Result<()> {
        self.changing(|h| h.modify_namespace(id, request))
    }
}
