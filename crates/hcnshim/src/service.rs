//! [`Service`]: the HCN calls of `computenetwork.dll` as safe Rust, in the DLL's terms: JSON text
//! in and out, GUIDs, handle numbers, and on failure an HRESULT with the `ErrorRecord` HNS
//! writes. Every rule is the fake's (`hcn::fake::FakeHcn` through [`HcnApi`]); this module only
//! decodes the input with the schema's types, keeps the handles, and writes the output as HNS
//! does ([`HnsDocument`]). [`Service::global`] is the one the exports use.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use hcn::fake::{FakeHcn, HnsDocument};
use hcn::schema::{
    ErrorRecord, HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork, HostComputeQuery,
    ModifyNamespaceSettingRequest, ModifyNetworkSettingRequest,
};
use hcn::{Guid, HcnApi, HcnError, Hresult};
use serde::de::DeserializeOwned;

use crate::store::Store;
use crate::trace::Trace;

/// E_HANDLE (HRESULT_FROM_WIN32(ERROR_INVALID_HANDLE)): a handle that is not open, or is of
/// another kind.
pub const E_HANDLE: Hresult = Hresult(0x8007_0006);
/// E_POINTER: a required pointer argument is null.
pub const E_POINTER: Hresult = Hresult(0x8000_4003);
/// E_FAIL: the shim's own state file could not be used.
pub const E_FAIL: Hresult = Hresult(0x8000_4005);

/// The three kinds of HCN objects, each with its own handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `HCN_NETWORK`.
    Network,
    /// `HCN_ENDPOINT`.
    Endpoint,
    /// `HCN_NAMESPACE`.
    Namespace,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Network => "Network",
            Kind::Endpoint => "Endpoint",
            Kind::Namespace => "Namespace",
        }
    }

    /// The export named `<verb><Kind><suffix>`, e.g. `HcnOpenNetwork`, `HcnEnumerateEndpoints`.
    fn export(self, verb: &str, suffix: &str) -> String {
        format!("Hcn{verb}{}{suffix}", self.noun())
    }
}

/// A failed call: its HRESULT and the error record HNS writes with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The HRESULT the export returns.
    pub hresult: Hresult,
    /// The record written to the ErrorRecord output.
    pub record: ErrorRecord,
}

impl Failure {
    /// A failure with `hresult` and a record saying `message` (with HNS's trailing space).
    pub fn new(hresult: Hresult, message: impl std::fmt::Display) -> Self {
        Failure {
            hresult,
            record: ErrorRecord::failure(hresult, format!("{message} ")),
        }
    }

    /// The record as the JSON text the ErrorRecord output receives.
    pub fn record_json(&self) -> String {
        serde_json::to_string(&self.record).unwrap_or_default()
    }
}

impl From<HcnError> for Failure {
    fn from(error: HcnError) -> Self {
        match error {
            HcnError::Hns {
                hresult,
                record: Some(record),
                ..
            } => Failure { hresult, record },
            other => Failure::new(other.hresult().unwrap_or(E_FAIL), other),
        }
    }
}

/// The outcome of a call.
pub type Reply<T> = Result<T, Failure>;

/// The open handles of this process: each number names one object of one kind.
#[derive(Debug, Default)]
struct Handles {
    last: usize,
    open: HashMap<usize, (Kind, Guid)>,
}

/// The DLL's state: the HNS store, this process's handles, the trace.
#[derive(Debug)]
pub struct Service {
    store: Store,
    handles: Mutex<Handles>,
    trace: Trace,
}

impl Service {
    /// A service over `store`, tracing to `trace`.
    pub fn new(store: Store, trace: Trace) -> Self {
        Service {
            store,
            handles: Mutex::default(),
            trace,
        }
    }

    /// The service of this process, configured from the environment at its first call
    /// ([`Store::from_env`], [`Trace::from_env`]).
    pub fn global() -> &'static Service {
        static SERVICE: OnceLock<Service> = OnceLock::new();
        SERVICE.get_or_init(|| Service::new(Store::from_env(), Trace::from_env()))
    }

    /// `HcnEnumerate*`: the IDs the query selects, as a JSON list.
    pub fn enumerate(&self, kind: Kind, query: &str) -> Reply<String> {
        let reply = decode_query(query).and_then(|query| {
            let ids = self.hns(|hns| match kind {
                Kind::Network => hns.enumerate_networks(&query),
                Kind::Endpoint => hns.enumerate_endpoints(&query),
                Kind::Namespace => hns.enumerate_namespaces(&query),
            })?;
            json(&ids)
        });
        self.traced(kind.export("Enumerate", "s"), None, reply)
    }

    /// `HcnOpen*`: a handle on object `id`, which must exist.
    pub fn open(&self, kind: Kind, id: Guid) -> Reply<usize> {
        let reply = self
            .hns(|hns| match kind {
                Kind::Network => hns.query_network(id).map(drop),
                Kind::Endpoint => hns.query_endpoint(id).map(drop),
                Kind::Namespace => hns.query_namespace(id).map(drop),
            })
            .map(|()| self.new_handle(kind, id));
        self.traced_handle(kind.export("Open", ""), reply)
    }

    /// `HcnQuery*Properties`: the object's document as HNS writes it.
    pub fn query(&self, kind: Kind, handle: usize, query: &str) -> Reply<String> {
        let reply = self.handle(kind, handle).and_then(|id| {
            decode_query(query)?;
            match kind {
                Kind::Network => hns_json(&self.hns(|hns| hns.query_network(id))?),
                Kind::Endpoint => hns_json(&self.hns(|hns| hns.query_endpoint(id))?),
                Kind::Namespace => hns_json(&self.hns(|hns| hns.query_namespace(id))?),
            }
        });
        self.traced(kind.export("Query", "Properties"), Some(handle), reply)
    }

    /// `HcnDelete*`.
    pub fn delete(&self, kind: Kind, id: Guid) -> Reply<()> {
        let reply = self.hns(|hns| match kind {
            Kind::Network => hns.delete_network(id),
            Kind::Endpoint => hns.delete_endpoint(id),
            Kind::Namespace => hns.delete_namespace(id),
        });
        self.traced(kind.export("Delete", ""), None, reply)
    }

    /// `HcnClose*`: the handle must be open and of this kind.
    pub fn close(&self, kind: Kind, handle: usize) -> Reply<()> {
        let reply = {
            let mut handles = self.lock_handles();
            match handles.open.get(&handle) {
                Some((open_kind, _)) if *open_kind == kind => {
                    handles.open.remove(&handle);
                    Ok(())
                }
                _ => Err(bad_handle(kind, handle)),
            }
        };
        self.traced(kind.export("Close", ""), Some(handle), reply)
    }

    /// `HcnCreateNetwork(Id, Settings)`: a handle on the new network.
    pub fn create_network(&self, id: Guid, settings: &str) -> Reply<usize> {
        let reply = decode::<HostComputeNetwork>(settings).and_then(|mut document| {
            document.id = requested_id(id, document.id)?;
            let created = self.hns(|hns| hns.create_network(&document))?;
            Ok(self.new_handle(Kind::Network, created.id))
        });
        self.traced_handle("HcnCreateNetwork".to_owned(), reply)
    }

    /// `HcnCreateEndpoint(Network, Id, Settings)`: a handle on the new endpoint of the network
    /// `network` is open on.
    pub fn create_endpoint(&self, network: usize, id: Guid, settings: &str) -> Reply<usize> {
        let reply = self.handle(Kind::Network, network).and_then(|network| {
            let mut document = decode::<HostComputeEndpoint>(settings)?;
            document.id = requested_id(id, document.id)?;
            let created = self.hns(|hns| hns.create_endpoint(network, &document))?;
            Ok(self.new_handle(Kind::Endpoint, created.id))
        });
        self.traced_handle("HcnCreateEndpoint".to_owned(), reply)
    }

    /// `HcnCreateNamespace(Id, Settings)`: a handle on the new namespace.
    pub fn create_namespace(&self, id: Guid, settings: &str) -> Reply<usize> {
        let reply = decode::<HostComputeNamespace>(settings).and_then(|mut document| {
            document.id = requested_id(id, document.id)?;
            let created = self.hns(|hns| hns.create_namespace(&document))?;
            Ok(self.new_handle(Kind::Namespace, created.id))
        });
        self.traced_handle("HcnCreateNamespace".to_owned(), reply)
    }

    /// `HcnModifyNetwork(Network, Settings)`.
    pub fn modify_network(&self, handle: usize, settings: &str) -> Reply<()> {
        let reply = self.handle(Kind::Network, handle).and_then(|id| {
            let request = decode::<ModifyNetworkSettingRequest>(settings)?;
            self.hns(|hns| hns.modify_network(id, &request))
        });
        self.traced("HcnModifyNetwork".to_owned(), Some(handle), reply)
    }

    /// `HcnModifyNamespace(Namespace, Settings)`.
    pub fn modify_namespace(&self, handle: usize, settings: &str) -> Reply<()> {
        let reply = self.handle(Kind::Namespace, handle).and_then(|id| {
            let request = decode::<ModifyNamespaceSettingRequest>(settings)?;
            self.hns(|hns| hns.modify_namespace(id, &request))
        });
        self.traced("HcnModifyNamespace".to_owned(), Some(handle), reply)
    }

    /// Runs `call` on the HNS state; a state file that cannot be used is E_FAIL.
    fn hns<T>(&self, call: impl FnOnce(&FakeHcn) -> hcn::Result<T>) -> Reply<T> {
        self.store
            .with(call)
            .map_err(|e| Failure::new(E_FAIL, format!("computenetwork shim state: {e}")))?
            .map_err(Failure::from)
    }

    fn lock_handles(&self) -> MutexGuard<'_, Handles> {
        // The handle table is plain data; a panic elsewhere leaves it usable.
        self.handles
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn new_handle(&self, kind: Kind, id: Guid) -> usize {
        let mut handles = self.lock_handles();
        handles.last += 1;
        let handle = handles.last;
        handles.open.insert(handle, (kind, id));
        handle
    }

    /// The object open handle `handle` names, which must be of `kind`.
    fn handle(&self, kind: Kind, handle: usize) -> Reply<Guid> {
        match self.lock_handles().open.get(&handle) {
            Some((open_kind, id)) if *open_kind == kind => Ok(*id),
            _ => Err(bad_handle(kind, handle)),
        }
    }

    fn traced<T>(&self, export: String, handle: Option<usize>, reply: Reply<T>) -> Reply<T> {
        self.trace.record(&export, handle, hresult_of(&reply));
        reply
    }

    fn traced_handle(&self, export: String, reply: Reply<usize>) -> Reply<usize> {
        self.trace
            .record(&export, reply.as_ref().ok().copied(), hresult_of(&reply));
        reply
    }
}

fn hresult_of<T>(reply: &Reply<T>) -> u32 {
    reply.as_ref().map_or_else(|f| f.hresult.0, |_| 0)
}

fn bad_handle(kind: Kind, handle: usize) -> Failure {
    Failure::new(
        E_HANDLE,
        format!(
            "{handle} is not an open {} handle",
            kind.noun().to_lowercase()
        ),
    )
}

/// The ID to create with: the `Id` argument, unless it is nil, else the document's `ID`; both
/// set must agree.
fn requested_id(argument: Guid, document: Guid) -> Reply<Guid> {
    if argument.is_nil() || document.is_nil() || argument == document {
        Ok(if argument.is_nil() {
            document
        } else {
            argument
        })
    } else {
        Err(Failure::new(
            Hresult::INVALID_ARG,
            format!("the Id argument {argument} and the document's ID {document} differ"),
        ))
    }
}

/// A document the client sent; one the schema cannot read is HCN_E_INVALID_JSON.
fn decode<T: DeserializeOwned>(text: &str) -> Reply<T> {
    hcn::schema::decode(text).map_err(|e| Failure::new(Hresult::INVALID_JSON, e))
}

/// A query; none (null or empty) is the default schema 2.0 query. The shim writes schema 2
/// documents only, so a query for another major version is HCN_E_REQUEST_UNSUPPORTED.
fn decode_query(text: &str) -> Reply<HostComputeQuery> {
    if text.trim().is_empty() {
        return Ok(HostComputeQuery::default());
    }
    let query: HostComputeQuery = decode(text)?;
    if query.schema_version.major != 2 {
        return Err(Failure::new(
            Hresult::REQUEST_UNSUPPORTED,
            format!(
                "the shim answers schema 2 queries only, not {}.{}",
                query.schema_version.major, query.schema_version.minor
            ),
        ));
    }
    Ok(query)
}

fn json<T: serde::Serialize>(value: &T) -> Reply<String> {
    serde_json::to_string(value).map_err(|e| Failure::new(E_FAIL, e))
}

fn hns_json<T: HnsDocument>(document: &T) -> Reply<String> {
    document
        .to_hns_json()
        .map(|value| value.to_string())
        .map_err(|e| Failure::new(E_FAIL, e))
}

#[cfg(test)]
mod tests {
    use hcn::fake::{AdapterRoute, HostAdapter, HostModel};
    use hcn::schema::{NetworkPolicy, NetworkType, OVS_EXTENSION_ID};

    use super::*;

    fn service() -> Service {
        let nic = HostAdapter::physical(
            "Ethernet0",
            "00-15-5D-AA-BB-CC".parse().unwrap(),
            vec!["192.168.1.10/24".parse().unwrap()],
            vec![AdapterRoute {
                destination: "0.0.0.0/0".parse().unwrap(),
                next_hop: "192.168.1.1".parse().unwrap(),
                metric: 0,
            }],
        );
        Service::new(
            Store::Process(FakeHcn::new(HostModel::with_nic(nic))),
            Trace::from_env(),
        )
    }

    fn transparent() -> String {
        serde_json::to_string(&HostComputeNetwork {
            name: "antrea-hnsnetwork".into(),
            kind: NetworkType::Transparent,
            policies: vec![
                NetworkPolicy::NetAdapterName {
                    network_adapter_name: "Ethernet0".into(),
                },
                NetworkPolicy::VSwitchExtension {
                    extension_id: OVS_EXTENSION_ID,
                    enable: true,
                },
            ],
            ..HostComputeNetwork::default()
        })
        .unwrap()
    }

    #[test]
    fn a_query_writes_the_read_only_members_hns_writes() {
        let service = service();
        let handle = service.create_network(Guid::NIL, &transparent()).unwrap();
        let text = service.query(Kind::Network, handle, "").unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["Extensions"][0]["IsEnabled"], true, "{text}");
        assert_eq!(value["SchemaVersion"]["Major"], 2, "{text}");
        let network: HostComputeNetwork = hcn::schema::decode(&text).unwrap();
        assert_eq!(network.extension_enabled(OVS_EXTENSION_ID), Some(true));
        service.close(Kind::Network, handle).unwrap();
    }

    #[test]
    fn handles_are_per_kind_and_closed_once() {
        let service = service();
        let handle = service.create_network(Guid::NIL, &transparent()).unwrap();
        assert_eq!(
            service
                .query(Kind::Endpoint, handle, "")
                .unwrap_err()
                .hresult,
            E_HANDLE
        );
        assert_eq!(
            service.close(Kind::Namespace, handle).unwrap_err().hresult,
            E_HANDLE
        );
        service.close(Kind::Network, handle).unwrap();
        assert_eq!(
            service.close(Kind::Network, handle).unwrap_err().hresult,
            E_HANDLE
        );
        assert_eq!(
            service
                .query(Kind::Network, handle, "")
                .unwrap_err()
                .hresult,
            E_HANDLE
        );
    }

    #[test]
    fn failures_carry_the_fakes_code_and_record() {
        let service = service();
        let unknown: Guid = "6B3C7D1A-0000-4000-8000-000000000001".parse().unwrap();
        let failure = service.open(Kind::Network, unknown).unwrap_err();
        assert_eq!(failure.hresult, Hresult::NETWORK_NOT_FOUND);
        let record: serde_json::Value = serde_json::from_str(&failure.record_json()).unwrap();
        assert_eq!(record["Success"], false);
        assert_eq!(record["ErrorCode"], Hresult::NETWORK_NOT_FOUND.0);
        assert_eq!(
            service.open(Kind::Namespace, unknown).unwrap_err().hresult,
            Hresult::ELEMENT_NOT_FOUND
        );
        assert_eq!(
            service.create_network(Guid::NIL, "{").unwrap_err().hresult,
            Hresult::INVALID_JSON
        );
        assert_eq!(
            service
                .enumerate(Kind::Network, r#"{"SchemaVersion":{"Major":1,"Minor":0}}"#)
                .unwrap_err()
                .hresult,
            Hresult::REQUEST_UNSUPPORTED
        );
        let other: Guid = "6B3C7D1A-0000-4000-8000-000000000002".parse().unwrap();
        let document = serde_json::to_string(&HostComputeNamespace {
            id: other,
            ..HostComputeNamespace::default()
        })
        .unwrap();
        assert_eq!(
            service
                .create_namespace(unknown, &document)
                .unwrap_err()
                .hresult,
            Hresult::INVALID_ARG
        );
    }

    #[test]
    fn the_id_argument_names_the_new_object() {
        let service = service();
        let id: Guid = "6B3C7D1A-0000-4000-8000-000000000003".parse().unwrap();
        let handle = service
            .create_namespace(id, r#"{"SchemaVersion":{"Major":2,"Minor":0}}"#)
            .unwrap();
        assert_eq!(
            service.enumerate(Kind::Namespace, "").unwrap(),
            format!(r#"["{id}"]"#)
        );
        service.close(Kind::Namespace, handle).unwrap();
    }
}
