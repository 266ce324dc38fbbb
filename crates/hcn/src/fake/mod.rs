//! [`FakeHcn`]: a stateful, in-memory HNS for tests on every platform.
//!
//! It keeps networks, endpoints and namespaces like HNS does, answers with HNS's error codes,
//! and models what HNS does to the host's adapters ([`HostModel`]): a Transparent network bound
//! to a NIC moves the NIC's addresses and routes to a new virtual adapter
//! `vEthernet (<network name>)` with the NIC's MAC, and an endpoint attached to a namespace gets
//! its own `vEthernet (<endpoint name>)`. Tests can make the next call of a kind fail
//! ([`FakeHcn::fail_next`]), read every call made ([`FakeHcn::calls`]), and lose all HNS state as
//! a reboot does ([`FakeHcn::reboot`]). Its state can be kept beyond the process as a
//! [`Snapshot`] ([`FakeHcn::snapshot`], [`FakeHcn::from_snapshot`]), in which documents are
//! written as HNS writes them ([`HnsDocument`]). docs/hcn.md lists what it does not model.

mod host;
mod output;
mod rules;
mod snapshot;

use std::sync::{Mutex, MutexGuard};

pub use host::{
    AdapterChange, AdapterChangeError, AdapterRoute, HostAdapter, HostModel, SwitchExtension,
};
pub use output::HnsDocument;
pub use snapshot::Snapshot;

use crate::api::HcnApi;
use crate::error::{Operation, Result};
use crate::schema::{
    HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork, HostComputeQuery,
    ModifyNamespaceSettingRequest, ModifyNetworkSettingRequest,
};
use crate::{Guid, Hresult};

pub use crate::vnic_name;

/// One call made to the fake, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// What was called.
    pub operation: Operation,
    /// What it was about: the document's name, or the ID (upper-case GUID), or the query filter.
    pub subject: String,
    /// The outcome: the failure code when it failed.
    pub result: std::result::Result<(), Hresult>,
}

/// An in-memory HNS. Cheap to create; `Send + Sync`, so it can sit behind an `Arc<dyn HcnApi>`.
#[derive(Debug)]
pub struct FakeHcn {
    state: Mutex<rules::State>,
}

impl Default for FakeHcn {
    /// A host without adapters, the Open vSwitch extension installed.
    fn default() -> Self {
        FakeHcn::new(HostModel::default())
    }
}

impl FakeHcn {
    /// A fake HNS on a host with `host`'s adapters and extensions, holding no HNS object.
    pub fn new(host: HostModel) -> Self {
        FakeHcn {
            state: Mutex::new(rules::State::new(host)),
        }
    }

    /// A fake holding the state `snapshot` was taken of, with no call logged and no failure
    /// injected.
    pub fn from_snapshot(snapshot: Snapshot) -> Self {
        FakeHcn {
            state: Mutex::new(rules::State::restore(snapshot)),
        }
    }

    /// The HNS state and the host as they are now, to keep beyond this process.
    pub fn snapshot(&self) -> Snapshot {
        self.lock().snapshot()
    }

    /// A snapshot of the host's adapters and extensions.
    pub fn host(&self) -> HostModel {
        self.lock().host.clone()
    }

    /// Changes the host's adapters as something other than HNS would (the agent renaming the
    /// management vNIC, moving an address, ...).
    pub fn apply(&self, change: AdapterChange) -> std::result::Result<(), AdapterChangeError> {
        self.lock().host.apply(change)
    }

    /// Makes the next call of `operation` fail with `hresult` (and an error record), without
    /// changing any state. Several injections for the same operation apply in order.
    pub fn fail_next(&self, operation: Operation, hresult: Hresult) {
        self.lock().injected.push((operation, hresult));
    }

    /// Every call made so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// Loses all HNS state, as a reboot does: networks, endpoints and namespaces vanish with the
    /// virtual adapters HNS created, and every NIC a Transparent network held gets back the
    /// addresses and routes it had when the network was created. Calls and pending injected
    /// failures are kept.
    pub fn reboot(&self) {
        self.lock().reboot();
    }

    fn lock(&self) -> MutexGuard<'_, rules::State> {
        // A panic while holding the lock (a failed assertion in a test thread) leaves plain
        // data behind; the state is still usable.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs one call: an injected failure if one is pending, else `body`; logs the outcome.
    fn call<T>(
        &self,
        operation: Operation,
        subject: String,
        body: impl FnOnce(&mut rules::State) -> Result<T, Hresult>,
    ) -> Result<T> {
        let mut state = self.lock();
        let outcome = match state.injected.iter().position(|(op, _)| *op == operation) {
            Some(index) => Err(state.injected.remove(index).1),
            None => body(&mut state),
        };
        state.calls.push(Call {
            operation,
            subject: subject.clone(),
            result: outcome.as_ref().map(|_| ()).map_err(|h| *h),
        });
        drop(state);
        match outcome {
            Ok(value) => {
                tracing::debug!(%operation, %subject, "fake HNS call succeeded");
                Ok(value)
            }
            Err(hresult) => {
                tracing::debug!(%operation, %subject, %hresult, "fake HNS call failed");
                Err(rules::error(operation, subject, hresult))
            }
        }
    }
}

fn query_subject(query: &HostComputeQuery) -> String {
    if query.filter.is_empty() {
        "(all)".to_owned()
    } else {
        query.filter.clone()
    }
}

impl HcnApi for FakeHcn {
    fn create_network(&self, network: &HostComputeNetwork) -> Result<HostComputeNetwork> {
        self.call(Operation::CreateNetwork, network.name.clone(), |s| {
            s.create_network(network)
        })
    }

    fn query_network(&self, id: Guid) -> Result<HostComputeNetwork> {
        self.call(Operation::QueryNetwork, id.to_string(), |s| s.network(id))
    }

    fn enumerate_networks(&self, query: &HostComputeQuery) -> Result<Vec<Guid>> {
        self.call(Operation::EnumerateNetworks, query_subject(query), |s| {
            s.enumerate_networks(query)
        })
    }

    fn delete_network(&self, id: Guid) -> Result<()> {
        self.call(Operation::DeleteNetwork, id.to_string(), |s| {
            s.delete_network(id)
        })
    }

    fn modify_network(&self, id: Guid, request: &ModifyNetworkSettingRequest) -> Result<()> {
        self.call(Operation::ModifyNetwork, id.to_string(), |s| {
            s.modify_network(id, request)
        })
    }

    fn create_endpoint(
        &self,
        network: Guid,
        endpoint: &HostComputeEndpoint,
    ) -> Result<HostComputeEndpoint> {
        self.call(Operation::CreateEndpoint, endpoint.name.clone(), |s| {
            s.create_endpoint(network, endpoint)
        })
    }

    fn query_endpoint(&self, id: Guid) -> Result<HostComputeEndpoint> {
        self.call(Operation::QueryEndpoint, id.to_string(), |s| s.endpoint(id))
    }

    fn enumerate_endpoints(&self, query: &HostComputeQuery) -> Result<Vec<Guid>> {
        self.call(Operation::EnumerateEndpoints, query_subject(query), |s| {
            s.enumerate_endpoints(query)
        })
    }

    fn delete_endpoint(&self, id: Guid) -> Result<()> {
        self.call(Operation::DeleteEndpoint, id.to_string(), |s| {
            s.delete_endpoint(id)
        })
    }

    fn create_namespace(&self, namespace: &HostComputeNamespace) -> Result<HostComputeNamespace> {
        let subject = if namespace.id.is_nil() {
            format!("{:?}", namespace.kind)
        } else {
            namespace.id.to_string()
        };
        self.call(Operation::CreateNamespace, subject, |s| {
            s.create_namespace(namespace)
        })
    }

    fn query_namespace(&self, id: Guid) -> Result<HostComputeNamespace> {
        self.call(Operation::QueryNamespace, id.to_string(), |s| {
            s.namespace(id)
        })
    }

    fn enumerate_namespaces(&self, query: &HostComputeQuery) -> Result<Vec<Guid>> {
        self.call(Operation::EnumerateNamespaces, query_subject(query), |s| {
            s.enumerate_namespaces(query)
        })
    }

    fn delete_namespace(&self, id: Guid) -> Result<()> {
        self.call(Operation::DeleteNamespace, id.to_string(), |s| {
            s.delete_namespace(id)
        })
    }

    fn modify_namespace(&self, id: Guid, request: &ModifyNamespaceSettingRequest) -> Result<()> {
        self.call(Operation::ModifyNamespace, id.to_string(), |s| {
            s.modify_namespace(id, request)
        })
    }
}
