//! [`HcnApi`]: the HCN operations the agent uses, implemented by the FFI client on Windows and by
//! `fake::FakeHcn` (feature `fake`, for tests) everywhere.

use crate::Guid;
use crate::error::Result;
use crate::schema::{
    HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork, HostComputeQuery,
    ModifyNamespaceSettingRequest, ModifyNetworkSettingRequest, QueryFilter,
};

/// Networks, endpoints and namespaces of the Host Networking Service.
///
/// The methods are **blocking**, like the `computenetwork.dll` calls behind them (each is an RPC
/// to the HNS service, which can take seconds under load). Async callers run them on
/// `tokio::task::spawn_blocking`; the trait is `Send + Sync` so an `Arc<dyn HcnApi>` can move
/// there. A blocking trait keeps the FFI free of any runtime and the fake trivially synchronous.
///
/// Each "query" method opens the object, queries its properties with the default schema 2.0
/// query, and closes it, so no handle outlives a call. Create methods pass the nil GUID (HNS
/// picks the ID, unless the document's `ID` is set) and return the object as HNS reports it
/// after creation.
pub trait HcnApi: Send + Sync {
    /// `HcnCreateNetwork`.
    fn create_network(&self, network: &HostComputeNetwork) -> Result<HostComputeNetwork>;
    /// `HcnOpenNetwork` + `HcnQueryNetworkProperties` + `HcnCloseNetwork`.
    fn query_network(&self, id: Guid) -> Result<HostComputeNetwork>;
    /// `HcnEnumerateNetworks`: the IDs of the networks `query` selects.
    fn enumerate_networks(&self, query: &HostComputeQuery) -> Result<Vec<Guid>>;
    /// `HcnDeleteNetwork`.
    fn delete_network(&self, id: Guid) -> Result<()>;
    /// `HcnOpenNetwork` + `HcnModifyNetwork` + `HcnCloseNetwork`: e.g. enable a switch
    /// extension ([`ModifyNetworkSettingRequest::set_extension`]).
    fn modify_network(&self, id: Guid, request: &ModifyNetworkSettingRequest) -> Result<()>;

    /// `HcnOpenNetwork(network)` + `HcnCreateEndpoint` on it.
    fn create_endpoint(
        &self,
        network: Guid,
        endpoint: &HostComputeEndpoint,
    ) -> Result<HostComputeEndpoint>;
    /// `HcnOpenEndpoint` + `HcnQueryEndpointProperties` + `HcnCloseEndpoint`.
    fn query_endpoint(&self, id: Guid) -> Result<HostComputeEndpoint>;
    /// `HcnEnumerateEndpoints`.
    fn enumerate_endpoints(&self, query: &HostComputeQuery) -> Result<Vec<Guid>>;
    /// `HcnDeleteEndpoint`.
    fn delete_endpoint(&self, id: Guid) -> Result<()>;

    /// `HcnCreateNamespace`.
    fn create_namespace(&self, namespace: &HostComputeNamespace) -> Result<HostComputeNamespace>;
    /// `HcnOpenNamespace` + `HcnQueryNamespaceProperties` + `HcnCloseNamespace`.
    fn query_namespace(&self, id: Guid) -> Result<HostComputeNamespace>;
    /// `HcnEnumerateNamespaces`.
    fn enumerate_namespaces(&self, query: &HostComputeQuery) -> Result<Vec<Guid>>;
    /// `HcnDeleteNamespace`.
    fn delete_namespace(&self, id: Guid) -> Result<()>;
    /// `HcnOpenNamespace` + `HcnModifyNamespace` + `HcnCloseNamespace`: attach or detach an
    /// endpoint ([`ModifyNamespaceSettingRequest::add_endpoint`] / `remove_endpoint`).
    fn modify_namespace(&self, id: Guid, request: &ModifyNamespaceSettingRequest) -> Result<()>;

    /// The network named `name`, if one exists (enumerate with a name filter, then query).
    fn find_network_by_name(&self, name: &str) -> Result<Option<HostComputeNetwork>> {
        find_by_name(
            self.enumerate_networks(&HostComputeQuery::new(QueryFilter::Name(name.to_owned())))?,
            |id| self.query_network(id),
        )
    }

    /// The endpoint named `name`, if one exists.
    fn find_endpoint_by_name(&self, name: &str) -> Result<Option<HostComputeEndpoint>> {
        find_by_name(
            self.enumerate_endpoints(&HostComputeQuery::new(QueryFilter::Name(name.to_owned())))?,
            |id| self.query_endpoint(id),
        )
    }

    /// Enable or disable switch extension `extension` on network `network`.
    fn set_extension_enabled(&self, network: Guid, extension: Guid, enabled: bool) -> Result<()> {
        self.modify_network(
            network,
            &ModifyNetworkSettingRequest::set_extension(extension, enabled),
        )
    }

    /// Attach endpoint `endpoint` to namespace `namespace`.
    fn attach_endpoint(&self, namespace: Guid, endpoint: Guid) -> Result<()> {
        self.modify_namespace(
            namespace,
            &ModifyNamespaceSettingRequest::add_endpoint(endpoint),
        )
    }

    /// Detach endpoint `endpoint` from namespace `namespace`.
    fn detach_endpoint(&self, namespace: Guid, endpoint: Guid) -> Result<()> {
        self.modify_namespace(
            namespace,
            &ModifyNamespaceSettingRequest::remove_endpoint(endpoint),
        )
    }
}

/// The first of `ids` that still exists when queried (an object can vanish between the
/// enumeration and the query; that counts as absent).
fn find_by_name<T>(ids: Vec<Guid>, query: impl Fn(Guid) -> Result<T>) -> Result<Option<T>> {
    for id in ids {
        match query(id) {
            Ok(found) => return Ok(Some(found)),
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}
