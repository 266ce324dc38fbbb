//! [`Snapshot`]: the fake's HNS state and host as plain serde data, so the state can outlive a
//! process the way HNS's does (the `computenetwork.dll` shim of `crates/hcnshim` keeps one in
//! its state file). Documents are stored as HNS writes them ([`HnsDocument`]) and read back
//! with the schema's decoders, so a snapshot read back gives the same state.

use ipnet::Ipv4Net;
use model::MacAddr;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::host::{AdapterRoute, HostModel};
use super::output::HnsDocument;
use super::rules::{Binding, Network, State};
use crate::Guid;
use crate::schema::{HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork};

/// What HNS keeps between calls: networks, endpoints, namespaces, the host's adapters as HNS
/// left them, and the counters for new IDs and compartments. The fake's call log and pending
/// injected failures belong to one process and are not part of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    host: HostModel,
    networks: Vec<StoredNetwork>,
    endpoints: Vec<Stored<HostComputeEndpoint>>,
    namespaces: Vec<Stored<HostComputeNamespace>>,
    next_id: Guid,
    next_compartment: u32,
}

/// A network with what the fake remembers beside its document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StoredNetwork {
    document: Stored<HostComputeNetwork>,
    /// The NIC a Transparent network took over, with the addresses and routes it had then.
    binding: Option<StoredBinding>,
    /// The inclusive MAC ranges endpoint MACs come from.
    mac_ranges: Vec<(MacAddr, MacAddr)>,
    /// The IPAM subnets.
    subnets: Vec<Ipv4Net>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StoredBinding {
    nic: String,
    ipv4: Vec<Ipv4Net>,
    routes: Vec<AdapterRoute>,
}

/// A document in HNS's form.
#[derive(Debug, Clone, PartialEq)]
struct Stored<T>(T);

impl<T: HnsDocument> Serialize for Stored<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        self.0
            .to_hns_json()
            .map_err(S::Error::custom)?
            .serialize(serializer)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Stored<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Stored)
    }
}

impl State {
    pub(super) fn snapshot(&self) -> Snapshot {
        Snapshot {
            host: self.host.clone(),
            networks: self
                .networks
                .values()
                .map(|network| StoredNetwork {
                    document: Stored(network.doc.clone()),
                    binding: network.binding.as_ref().map(|b| StoredBinding {
                        nic: b.nic.clone(),
                        ipv4: b.ipv4.clone(),
                        routes: b.routes.clone(),
                    }),
                    mac_ranges: network
                        .mac_ranges
                        .iter()
                        .map(|&(start, end)| (MacAddr::from_u64(start), MacAddr::from_u64(end)))
                        .collect(),
                    subnets: network.subnets.clone(),
                })
                .collect(),
            endpoints: self.endpoints.values().cloned().map(Stored).collect(),
            namespaces: self.namespaces.values().cloned().map(Stored).collect(),
            next_id: Guid(self.next_id),
            next_compartment: self.next_compartment,
        }
    }

    pub(super) fn restore(snapshot: Snapshot) -> State {
        State {
            host: snapshot.host,
            networks: snapshot
                .networks
                .into_iter()
                .map(|network| {
                    let doc = network.document.0;
                    let stored = Network {
                        binding: network.binding.map(|b| Binding {
                            nic: b.nic,
                            ipv4: b.ipv4,
                            routes: b.routes,
                        }),
                        mac_ranges: network
                            .mac_ranges
                            .into_iter()
                            .map(|(start, end)| (start.to_u64(), end.to_u64()))
                            .collect(),
                        subnets: network.subnets,
                        doc,
                    };
                    (stored.doc.id, stored)
                })
                .collect(),
            endpoints: snapshot
                .endpoints
                .into_iter()
                .map(|Stored(e)| (e.id, e))
                .collect(),
            namespaces: snapshot
                .namespaces
                .into_iter()
                .map(|Stored(n)| (n.id, n))
                .collect(),
            next_id: snapshot.next_id.0,
            next_compartment: snapshot.next_compartment,
            injected: Vec::new(),
            calls: Vec::new(),
        }
    }
}
