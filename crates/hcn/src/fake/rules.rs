//! The fake's state and the HNS rules it enforces, one method per call. Every failure is the
//! code HNS returns for it (docs/hcn.md, "Errors"); nothing changes when a call fails.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use model::MacAddr;

use super::host::{AdapterRoute, HostAdapter, HostModel};
use super::{Call, vnic_name};
use crate::error::{HcnError, Operation};
use crate::schema::{
    ErrorRecord, HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork, HostComputeQuery,
    ModifyNamespaceSettingRequest, ModifyNetworkSettingRequest, ModifyRequestType,
    NamespaceResource, NamespaceResourceData, NamespaceResourceType, NamespaceType, NetworkPolicy,
    NetworkResourceType, NetworkType, ResourceId, SchemaVersion, SwitchExtensionState,
};
use crate::{Guid, Hresult};

/// The range endpoint MACs come from when the network has no `MacPool`: the Hyper-V OUI
/// 00-15-5D, as HNS uses.
const DEFAULT_MAC_POOL: (u64, u64) = (0x0015_5D00_0000, 0x0015_5DFF_FFFF);

/// The first GUID the fake hands out; later ones count up from it.
const FIRST_ID: u128 = 0xFA4E0000_0000_0000_0000_000000000001;

#[derive(Debug)]
pub(super) struct Network {
    pub(super) doc: HostComputeNetwork,
    /// The NIC a Transparent network took over and the addresses and routes it had then.
    pub(super) binding: Option<Binding>,
    /// Endpoint MACs are taken from these inclusive ranges.
    pub(super) mac_ranges: Vec<(u64, u64)>,
    /// The subnets of the IPAMs (endpoint addresses must fall in one, when there are any).
    pub(super) subnets: Vec<Ipv4Net>,
}

#[derive(Debug)]
pub(super) struct Binding {
    pub(super) nic: String,
    pub(super) ipv4: Vec<Ipv4Net>,
    pub(super) routes: Vec<AdapterRoute>,
}

/// Everything the fake holds.
#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) host: HostModel,
    pub(super) networks: BTreeMap<Guid, Network>,
    pub(super) endpoints: BTreeMap<Guid, HostComputeEndpoint>,
    pub(super) namespaces: BTreeMap<Guid, HostComputeNamespace>,
    pub(super) next_id: u128,
    pub(super) next_compartment: u32,
    pub(super) injected: Vec<(Operation, Hresult)>,
    pub(super) calls: Vec<Call>,
}

/// The error a call returns for `hresult`, with a record like the one HNS writes (message with
/// a trailing space, decimal code).
pub(super) fn error(operation: Operation, subject: String, hresult: Hresult) -> HcnError {
    let message = format!("{} ", message(hresult));
    HcnError::Hns {
        operation,
        subject,
        hresult,
        record: Some(ErrorRecord::failure(hresult, message)),
    }
}

/// An English message for the codes the fake returns (HNS's own may be localized).
fn message(hresult: Hresult) -> &'static str {
    match hresult {
        Hresult::NETWORK_NOT_FOUND => "The network was not found.",
        Hresult::ENDPOINT_NOT_FOUND => "The endpoint was not found.",
        Hresult::ELEMENT_NOT_FOUND => "Element not found.",
        Hresult::ADAPTER_NOT_FOUND => "The network adapter was not found.",
        Hresult::NETWORK_ALREADY_EXISTS => "A network with this name already exists.",
        Hresult::OBJECT_ALREADY_EXISTS => "The object already exists.",
        Hresult::ENTITY_HAS_REFERENCES => {
            "The object cannot be removed while it is still referenced."
        }
        Hresult::ENDPOINT_NAMESPACE_ALREADY_EXISTS => {
            "The endpoint already belongs to a namespace."
        }
        Hresult::ENDPOINT_NOT_ATTACHED => "The endpoint is not attached.",
        Hresult::INVALID_IP => "The IP address is invalid or outside the network's subnets.",
        Hresult::INVALID_ARG => "The parameter is incorrect.",
        _ => "The operation failed.",
    }
}

type Rule<T> = Result<T, Hresult>;

impl State {
    pub(super) fn new(host: HostModel) -> Self {
        State {
            host,
            next_id: FIRST_ID,
            next_compartment: 2,
            ..State::default()
        }
    }

    /// The document's own ID when set (it must be unused), else a fresh one.
    fn assign_id(&mut self, requested: Guid, taken: bool, exists: Hresult) -> Rule<Guid> {
        if !requested.is_nil() {
            return if taken { Err(exists) } else { Ok(requested) };
        }
        loop {
            let id = Guid(self.next_id);
            self.next_id += 1;
            if !self.networks.contains_key(&id)
                && !self.endpoints.contains_key(&id)
                && !self.namespaces.contains_key(&id)
            {
                return Ok(id);
            }
        }
    }

    // ---- networks ----

    pub(super) fn create_network(&mut self, doc: &HostComputeNetwork) -> Rule<HostComputeNetwork> {
        if doc.name.is_empty() {
            return Err(Hresult::INVALID_NETWORK);
        }
        if self.networks.values().any(|n| n.doc.name == doc.name) {
            return Err(Hresult::NETWORK_ALREADY_EXISTS);
        }
        if let NetworkType::Other(_) = doc.kind {
            return Err(Hresult::INVALID_NETWORK_TYPE);
        }
        let subnets = doc
            .ipams
            .iter()
            .flat_map(|ipam| &ipam.subnets)
            .map(|s| {
                s.ip_address_prefix
                    .parse::<Ipv4Net>()
                    .map_err(|_| Hresult::INVALID_PREFIX)
            })
            .collect::<Rule<Vec<_>>>()?;
        let mac_ranges = doc
            .mac_pool
            .ranges
            .iter()
            .map(|r| {
                let start: MacAddr = r
                    .start_mac_address
                    .parse()
                    .map_err(|_| Hresult::INVALID_NETWORK)?;
                let end: MacAddr = r
                    .end_mac_address
                    .parse()
                    .map_err(|_| Hresult::INVALID_NETWORK)?;
                if start > end {
                    Err(Hresult::INVALID_NETWORK)
                } else {
                    Ok((start.to_u64(), end.to_u64()))
                }
            })
            .collect::<Rule<Vec<_>>>()?;
        for policy in &doc.policies {
            if let NetworkPolicy::VSwitchExtension { extension_id, .. } = policy
                && !self.host.has_extension(*extension_id)
            {
                return Err(Hresult::SWITCH_EXTENSION_NOT_FOUND);
            }
        }
        let nic = match doc.kind {
            NetworkType::Transparent => Some(self.bindable_nic(doc)?),
            _ => None,
        };
        let vnic = vnic_name(&doc.name);
        if nic.is_some() && self.host.adapter(&vnic).is_some() {
            return Err(Hresult::OBJECT_ALREADY_EXISTS);
        }
        let id = self.assign_id(
            doc.id,
            self.networks.contains_key(&doc.id),
            Hresult::NETWORK_ALREADY_EXISTS,
        )?;

        let binding = nic
            .map(|nic_name| self.take_over_nic(&nic_name, vnic, id))
            .transpose()?;
        let mut stored = HostComputeNetwork {
            id,
            extensions: self.host.extension_states(),
            schema_version: SchemaVersion::V2,
            ..doc.clone()
        };
        for policy in &doc.policies {
            apply_extension_policy(&mut stored, policy);
        }
        self.networks.insert(
            id,
            Network {
                doc: stored.clone(),
                binding,
                mac_ranges,
                subnets,
            },
        );
        Ok(stored)
    }

    /// The NIC a Transparent network binds: named by `NetAdapterName`, physical, not bound yet.
    fn bindable_nic(&self, doc: &HostComputeNetwork) -> Rule<String> {
        let name = doc.adapter_name().ok_or(Hresult::INVALID_NETWORK)?;
        let nic = self.host.adapter(name).ok_or(Hresult::ADAPTER_NOT_FOUND)?;
        let bound = self
            .networks
            .values()
            .any(|n| n.binding.as_ref().is_some_and(|b| b.nic == name));
        if nic.is_virtual || bound {
            return Err(Hresult::INVALID_ARG);
        }
        Ok(name.to_owned())
    }

    /// Moves the NIC's addresses and routes to a new vNIC with its MAC, owned by `network`.
    fn take_over_nic(&mut self, nic_name: &str, vnic: String, network: Guid) -> Rule<Binding> {
        let nic = self
            .host
            .adapter_mut(nic_name)
            .ok_or(Hresult::ADAPTER_NOT_FOUND)?;
        let ipv4 = std::mem::take(&mut nic.ipv4);
        let routes = std::mem::take(&mut nic.routes);
        let mac = nic.mac;
        self.host.adapters.push(HostAdapter {
            name: vnic,
            mac,
            ipv4: ipv4.clone(),
            routes: routes.clone(),
            is_virtual: true,
            owner: Some(network),
        });
        Ok(Binding {
            nic: nic_name.to_owned(),
            ipv4,
            routes,
        })
    }

    /// Undoes `take_over_nic`: the vNIC goes, the NIC gets back what it had.
    fn release(&mut self, id: Guid, binding: Option<Binding>) {
        self.host.remove_owned_by(id);
        if let Some(binding) = binding
            && let Some(nic) = self.host.adapter_mut(&binding.nic)
        {
            nic.ipv4 = binding.ipv4;
            nic.routes = binding.routes;
        }
    }

    pub(super) fn network(&self, id: Guid) -> Rule<HostComputeNetwork> {
        self.networks
            .get(&id)
            .map(|n| n.doc.clone())
            .ok_or(Hresult::NETWORK_NOT_FOUND)
    }

    pub(super) fn enumerate_networks(&self, query: &HostComputeQuery) -> Rule<Vec<Guid>> {
        select(
            query,
            self.networks
                .values()
                .map(|n| (n.doc.id, &n.doc.name, None)),
        )
    }

    pub(super) fn delete_network(&mut self, id: Guid) -> Rule<()> {
        if !self.networks.contains_key(&id) {
            return Err(Hresult::NETWORK_NOT_FOUND);
        }
        if self
            .endpoints
            .values()
            .any(|e| e.host_compute_network == id)
        {
            return Err(Hresult::ENTITY_HAS_REFERENCES);
        }
        if let Some(network) = self.networks.remove(&id) {
            self.release(id, network.binding);
        }
        Ok(())
    }

    /// Extension updates set the extension's state in the network's `Extensions` list, the form
    /// HNS reports it in (docs/hcn.md); policy additions append the policies (a
    /// `VSwitchExtension` policy replaces the one for the same extension and applies its state
    /// to the list, as at creation). Both check installed extensions like creation does.
    pub(super) fn modify_network(
        &mut self,
        id: Guid,
        request: &ModifyNetworkSettingRequest,
    ) -> Rule<()> {
        if !self.networks.contains_key(&id) {
            return Err(Hresult::NETWORK_NOT_FOUND);
        }
        match (request.resource_type, request.request_type) {
            (NetworkResourceType::Extension, ModifyRequestType::Update) => {
                let (extension_id, enable) =
                    request.extension_setting().ok_or(Hresult::INVALID_JSON)?;
                if !self.host.has_extension(extension_id) {
                    return Err(Hresult::SWITCH_EXTENSION_NOT_FOUND);
                }
                let network = self
                    .networks
                    .get_mut(&id)
                    .ok_or(Hresult::NETWORK_NOT_FOUND)?;
                set_extension_state(&mut network.doc, extension_id, enable);
                Ok(())
            }
            (NetworkResourceType::Policy, ModifyRequestType::Add) => {
                let added = request.policies().ok_or(Hresult::INVALID_JSON)?;
                for policy in &added {
                    match policy {
                        NetworkPolicy::VSwitchExtension { extension_id, .. }
                            if !self.host.has_extension(*extension_id) =>
                        {
                            return Err(Hresult::SWITCH_EXTENSION_NOT_FOUND);
                        }
                        NetworkPolicy::NetAdapterName { .. } => {
                            return Err(Hresult::INVALID_POLICY);
                        }
                        _ => {}
                    }
                }
                let network = self
                    .networks
                    .get_mut(&id)
                    .ok_or(Hresult::NETWORK_NOT_FOUND)?;
                for policy in added {
                    apply_extension_policy(&mut network.doc, &policy);
                    add_policy(&mut network.doc, policy);
                }
                Ok(())
            }
            _ => Err(Hresult::REQUEST_UNSUPPORTED),
        }
    }

    // ---- endpoints ----

    pub(super) fn create_endpoint(
        &mut self,
        network_id: Guid,
        doc: &HostComputeEndpoint,
    ) -> Rule<HostComputeEndpoint> {
        let network = self
            .networks
            .get(&network_id)
            .ok_or(Hresult::NETWORK_NOT_FOUND)?;
        if doc.name.is_empty()
            || !(doc.host_compute_network.is_nil() || doc.host_compute_network == network_id)
        {
            return Err(Hresult::INVALID_ENDPOINT);
        }
        if self.endpoints.values().any(|e| e.name == doc.name) {
            return Err(Hresult::OBJECT_ALREADY_EXISTS);
        }
        for config in &doc.ip_configurations {
            let ip: Ipv4Addr = config.ip_address.parse().map_err(|_| Hresult::INVALID_IP)?;
            if !network.subnets.is_empty() && !network.subnets.iter().any(|s| s.contains(&ip)) {
                return Err(Hresult::INVALID_IP);
            }
        }
        let mac = if doc.mac_address.is_empty() {
            self.free_mac(network)?
        } else {
            doc.mac_address
                .parse::<MacAddr>()
                .map_err(|_| Hresult::INVALID_ENDPOINT)?
        };
        let id = self.assign_id(
            doc.id,
            self.endpoints.contains_key(&doc.id),
            Hresult::OBJECT_ALREADY_EXISTS,
        )?;
        let stored = HostComputeEndpoint {
            id,
            host_compute_network: network_id,
            host_compute_namespace: None,
            mac_address: mac.windows().to_string(),
            schema_version: SchemaVersion::V2,
            ..doc.clone()
        };
        self.endpoints.insert(id, stored.clone());
        Ok(stored)
    }

    /// The lowest MAC of the network's pool (or the default pool) no endpoint uses.
    fn free_mac(&self, network: &Network) -> Rule<MacAddr> {
        let used: Vec<u64> = self
            .endpoints
            .values()
            .filter_map(|e| e.mac_address.parse::<MacAddr>().ok())
            .map(MacAddr::to_u64)
            .collect();
        let default = [DEFAULT_MAC_POOL];
        let ranges = if network.mac_ranges.is_empty() {
            &default[..]
        } else {
            &network.mac_ranges[..]
        };
        ranges
            .iter()
            .flat_map(|&(start, end)| start..=end)
            .find(|mac| !used.contains(mac))
            .map(MacAddr::from_u64)
            .ok_or(Hresult::ADDR_INVALID_OR_RESERVED)
    }

    pub(super) fn endpoint(&self, id: Guid) -> Rule<HostComputeEndpoint> {
        self.endpoints
            .get(&id)
            .cloned()
            .ok_or(Hresult::ENDPOINT_NOT_FOUND)
    }

    pub(super) fn enumerate_endpoints(&self, query: &HostComputeQuery) -> Rule<Vec<Guid>> {
        select(
            query,
            self.endpoints
                .values()
                .map(|e| (e.id, &e.name, Some(e.host_compute_network))),
        )
    }

    pub(super) fn delete_endpoint(&mut self, id: Guid) -> Rule<()> {
        let endpoint = self.endpoints.get(&id).ok_or(Hresult::ENDPOINT_NOT_FOUND)?;
        if let Some(namespace) = endpoint.host_compute_namespace {
            self.detach(namespace, id);
        }
        self.endpoints.remove(&id);
        Ok(())
    }

    // ---- namespaces ----

    pub(super) fn create_namespace(
        &mut self,
        doc: &HostComputeNamespace,
    ) -> Rule<HostComputeNamespace> {
        let id = self.assign_id(
            doc.id,
            self.namespaces.contains_key(&doc.id),
            Hresult::OBJECT_ALREADY_EXISTS,
        )?;
        let namespace_id = match doc.kind {
            NamespaceType::HostDefault | NamespaceType::GuestDefault => 1,
            NamespaceType::Unknown => return Err(Hresult::INVALID_JSON),
            NamespaceType::Host | NamespaceType::Guest => {
                self.next_compartment += 1;
                self.next_compartment - 1
            }
        };
        let stored = HostComputeNamespace {
            id,
            namespace_id,
            kind: doc.kind,
            ready_on_create: doc.ready_on_create,
            resources: Vec::new(),
            schema_version: SchemaVersion::V2,
        };
        self.namespaces.insert(id, stored.clone());
        Ok(stored)
    }

    pub(super) fn namespace(&self, id: Guid) -> Rule<HostComputeNamespace> {
        self.namespaces
            .get(&id)
            .cloned()
            .ok_or(Hresult::ELEMENT_NOT_FOUND)
    }

    pub(super) fn enumerate_namespaces(&self, query: &HostComputeQuery) -> Rule<Vec<Guid>> {
        let empty = String::new();
        select(query, self.namespaces.keys().map(|id| (*id, &empty, None)))
    }

    pub(super) fn delete_namespace(&mut self, id: Guid) -> Rule<()> {
        let namespace = self.namespaces.get(&id).ok_or(Hresult::ELEMENT_NOT_FOUND)?;
        for endpoint in namespace.endpoint_ids() {
            self.detach(id, endpoint);
        }
        self.namespaces.remove(&id);
        Ok(())
    }

    pub(super) fn modify_namespace(
        &mut self,
        id: Guid,
        request: &ModifyNamespaceSettingRequest,
    ) -> Rule<()> {
        if !self.namespaces.contains_key(&id) {
            return Err(Hresult::ELEMENT_NOT_FOUND);
        }
        if request.resource_type != NamespaceResourceType::Endpoint {
            return Err(Hresult::REQUEST_UNSUPPORTED);
        }
        let endpoint_id = request.endpoint_id().ok_or(Hresult::INVALID_JSON)?;
        let endpoint = self
            .endpoints
            .get(&endpoint_id)
            .ok_or(Hresult::ENDPOINT_NOT_FOUND)?;
        match request.request_type {
            ModifyRequestType::Add => {
                if endpoint.host_compute_namespace.is_some() {
                    return Err(Hresult::ENDPOINT_NAMESPACE_ALREADY_EXISTS);
                }
                self.attach(id, endpoint_id)
            }
            ModifyRequestType::Remove => {
                if endpoint.host_compute_namespace != Some(id) {
                    return Err(Hresult::ENDPOINT_NOT_ATTACHED);
                }
                self.detach(id, endpoint_id);
                Ok(())
            }
            ModifyRequestType::Update | ModifyRequestType::Refresh => {
                Err(Hresult::REQUEST_UNSUPPORTED)
            }
        }
    }

    /// Puts the endpoint in the namespace and creates its vNIC with its MAC, addresses and
    /// routes.
    fn attach(&mut self, namespace: Guid, endpoint_id: Guid) -> Rule<()> {
        let endpoint = self
            .endpoints
            .get(&endpoint_id)
            .ok_or(Hresult::ENDPOINT_NOT_FOUND)?;
        let vnic = vnic_for_endpoint(endpoint, self.networks.get(&endpoint.host_compute_network))?;
        if self.host.adapter(&vnic.name).is_some() {
            return Err(Hresult::OBJECT_ALREADY_EXISTS);
        }
        self.host.adapters.push(vnic);
        if let Some(endpoint) = self.endpoints.get_mut(&endpoint_id) {
            endpoint.host_compute_namespace = Some(namespace);
        }
        if let Some(ns) = self.namespaces.get_mut(&namespace) {
            ns.resources.push(NamespaceResource {
                kind: NamespaceResourceType::Endpoint,
                data: NamespaceResourceData {
                    id: Some(ResourceId::Guid(endpoint_id)),
                },
            });
        }
        Ok(())
    }

    /// Takes the endpoint out of the namespace and removes its vNIC.
    fn detach(&mut self, namespace: Guid, endpoint_id: Guid) {
        if let Some(ns) = self.namespaces.get_mut(&namespace) {
            ns.resources.retain(|r| {
                !(r.kind == NamespaceResourceType::Endpoint
                    && r.data.id.as_ref().and_then(ResourceId::guid) == Some(endpoint_id))
            });
        }
        if let Some(endpoint) = self.endpoints.get_mut(&endpoint_id) {
            endpoint.host_compute_namespace = None;
        }
        self.host.remove_owned_by(endpoint_id);
    }

    // ---- reboot ----

    pub(super) fn reboot(&mut self) {
        for id in self.endpoints.keys().copied().collect::<Vec<_>>() {
            self.host.remove_owned_by(id);
        }
        for (id, network) in std::mem::take(&mut self.networks) {
            self.release(id, network.binding);
        }
        self.endpoints.clear();
        self.namespaces.clear();
    }
}

/// Sets extension `extension_id`'s state in the network's `Extensions` list, adding the entry
/// when the list lacks it.
fn set_extension_state(network: &mut HostComputeNetwork, extension_id: Guid, enabled: bool) {
    match network.extensions.iter_mut().find(|e| e.id == extension_id) {
        Some(entry) => entry.is_enabled = enabled,
        None => network.extensions.push(SwitchExtensionState {
            id: extension_id,
            is_enabled: enabled,
            name: String::new(),
        }),
    }
}

/// What a `VSwitchExtension` policy does to the network's `Extensions` list; other policies do
/// nothing to it.
fn apply_extension_policy(network: &mut HostComputeNetwork, policy: &NetworkPolicy) {
    if let NetworkPolicy::VSwitchExtension {
        extension_id,
        enable,
    } = policy
    {
        set_extension_state(network, *extension_id, *enable);
    }
}

/// Appends `policy`; a `VSwitchExtension` policy replaces the one naming the same extension.
fn add_policy(network: &mut HostComputeNetwork, policy: NetworkPolicy) {
    let extension_of = |p: &NetworkPolicy| match p {
        NetworkPolicy::VSwitchExtension { extension_id, .. } => Some(*extension_id),
        _ => None,
    };
    let replaced = extension_of(&policy).and_then(|id| {
        network
            .policies
            .iter_mut()
            .find(|p| extension_of(p) == Some(id))
    });
    match replaced {
        Some(existing) => *existing = policy,
        None => network.policies.push(policy),
    }
}

/// The vNIC of an attached endpoint. An address without a prefix length takes its subnet's.
fn vnic_for_endpoint(
    endpoint: &HostComputeEndpoint,
    network: Option<&Network>,
) -> Rule<HostAdapter> {
    let mac: MacAddr = endpoint
        .mac_address
        .parse()
        .map_err(|_| Hresult::INVALID_ENDPOINT)?;
    let ipv4 = endpoint
        .ip_configurations
        .iter()
        .map(|config| {
            let ip: Ipv4Addr = config.ip_address.parse().map_err(|_| Hresult::INVALID_IP)?;
            let prefix = match config.prefix_length {
                0 => network
                    .and_then(|n| n.subnets.iter().find(|s| s.contains(&ip)))
                    .map_or(32, Ipv4Net::prefix_len),
                len => len,
            };
            Ipv4Net::new(ip, prefix).map_err(|_| Hresult::INVALID_PREFIX)
        })
        .collect::<Rule<Vec<_>>>()?;
    let routes = endpoint
        .routes
        .iter()
        .map(|route| {
            let destination: Ipv4Net = route
                .destination_prefix
                .parse()
                .map_err(|_| Hresult::INVALID_PREFIX)?;
            let next_hop = if route.next_hop.is_empty() {
                Ipv4Addr::UNSPECIFIED
            } else {
                route.next_hop.parse().map_err(|_| Hresult::INVALID_IP)?
            };
            Ok(AdapterRoute {
                destination,
                next_hop,
                metric: u32::from(route.metric),
            })
        })
        .collect::<Rule<Vec<_>>>()?;
    Ok(HostAdapter {
        name: vnic_name(&endpoint.name),
        mac,
        ipv4,
        routes,
        is_virtual: true,
        owner: Some(endpoint.id),
    })
}

/// The IDs of `objects` (id, name, network) the query's filter selects. Filter keys: `ID`,
/// `Name`, and `VirtualNetwork` (the network of an endpoint); any other key is refused with
/// HCN_E_INVALID_JSON so a test notices a filter the fake does not understand.
fn select<'a>(
    query: &HostComputeQuery,
    objects: impl Iterator<Item = (Guid, &'a String, Option<Guid>)>,
) -> Rule<Vec<Guid>> {
    let pairs = query
        .filter_pairs()
        .map_err(|_| Hresult::INVALID_JSON)?
        .unwrap_or_default();
    let mut wanted = Vec::new();
    for (key, value) in pairs {
        let key = key.to_ascii_lowercase();
        let id_value = || value.parse::<Guid>().map_err(|_| Hresult::INVALID_JSON);
        wanted.push(match key.as_str() {
            "id" => Wanted::Id(id_value()?),
            "name" => Wanted::Name(value.clone()),
            "virtualnetwork" => Wanted::Network(id_value()?),
            _ => return Err(Hresult::INVALID_JSON),
        });
    }
    Ok(objects
        .filter(|(id, name, network)| {
            wanted.iter().all(|w| match w {
                Wanted::Id(want) => want == id,
                Wanted::Name(want) => want == *name,
                Wanted::Network(want) => Some(*want) == *network,
            })
        })
        .map(|(id, _, _)| id)
        .collect())
}

enum Wanted {
    Id(Guid),
    Name(String),
    Network(Guid),
}
