//! Pod interfaces: one HNS endpoint per Pod on our network, attached to the Pod's HCN namespace
//! (the GUID containerd passes as the netns), with the Pod's IP, default route, DNS settings,
//! and the MTU set on its vNIC `vEthernet (<endpoint>)`.

use hcn::schema::{
    Dns, HostComputeEndpoint, HostComputeNetwork, HostComputeQuery, IpConfig, QueryFilter,
};
use hcn::{Guid, vnic_name};
use model::MacAddr;
use winos::model::{IpFamily, IpInterfaceChange};

use super::{Backend, HNS_NETWORK, hns, os, outcome};
use crate::error::{Error, Result};
use crate::model::{Outcome, PodInterface, PodInterfaceSpec};
use crate::naming::is_endpoint_name;

/// The HCN namespace GUID of a spec.
fn namespace_of(spec: &PodInterfaceSpec) -> Result<Guid> {
    spec.netns.parse().map_err(|_| Error::Invalid {
        what: "HCN namespace",
        value: spec.netns.clone(),
        reason: "not a GUID",
    })
}

/// The endpoint document for `spec` on `network`.
fn endpoint_document(spec: &PodInterfaceSpec, network: Guid) -> HostComputeEndpoint {
    let dns = spec
        .dns
        .as_ref()
        .map(|d| Dns {
            domain: d.domain.clone(),
            search: d.search.clone(),
            server_list: d.nameservers.clone(),
            options: Vec::new(),
        })
        .unwrap_or_default();
    HostComputeEndpoint {
        name: spec.host_ifname.clone(),
        host_compute_network: network,
        ip_configurations: vec![IpConfig {
            ip_address: spec.address.addr().to_string(),
            prefix_length: spec.address.prefix_len(),
            ip_subnet_id: None,
        }],
        routes: vec![hcn::schema::Route::default_via(spec.gateway.to_string())],
        dns,
        ..HostComputeEndpoint::default()
    }
}

/// Whether the existing endpoint is what `want` describes, attached to `namespace`.
fn matches(existing: &HostComputeEndpoint, want: &HostComputeEndpoint, namespace: Guid) -> bool {
    let ips = |e: &HostComputeEndpoint| -> Vec<(String, u8)> {
        e.ip_configurations
            .iter()
            .map(|c| (c.ip_address.clone(), c.prefix_length))
            .collect()
    };
    existing.host_compute_network == want.host_compute_network
        && existing.host_compute_namespace == Some(namespace)
        && ips(existing) == ips(want)
        && want.routes.iter().all(|r| existing.routes.contains(r))
        && existing.dns.server_list == want.dns.server_list
        && existing.dns.search == want.dns.search
}

/// The endpoint's MAC.
fn mac_of(endpoint: &HostComputeEndpoint) -> Result<MacAddr> {
    endpoint
        .mac_address
        .parse::<MacAddr>()
        .map_err(|_| Error::Invalid {
            what: "HNS endpoint MAC",
            value: endpoint.mac_address.clone(),
            reason: "not a MAC address",
        })
}

impl<H, I, N, F> Backend<H, I, N, F>
where
    H: hcn::HcnApi,
    I: winos::IpHelper,
{
    fn our_network(&self, purpose: &'static str) -> Result<HostComputeNetwork> {
        self.network()?.ok_or(Error::HnsNetworkMissing {
            name: HNS_NETWORK.to_owned(),
            purpose,
        })
    }

    /// See [`crate::HostNetwork::add_pod_interface`]. An endpoint of the name that does not
    /// match is a leftover (or an ADD cut short): it is deleted and made anew.
    pub(super) fn create_pod(&self, spec: &PodInterfaceSpec) -> Result<(PodInterface, Outcome)> {
        let namespace = namespace_of(spec)?;
        let network = self.our_network("Pod endpoints")?;
        let want = endpoint_document(spec, network.id);
        let name = spec.host_ifname.as_str();
        if let Some(existing) = self.find_endpoint(name)? {
            if matches(&existing, &want, namespace) {
                let changed = self.set_pod_mtu(&existing, spec.mtu)?;
                return Ok((pod_interface(&existing)?, outcome(changed)));
            }
            tracing::info!("endpoint {name} does not match the request; replacing it");
            self.remove_endpoint(&existing)?;
        }
        let endpoint = self
            .hcn
            .create_endpoint(network.id, &want)
            .map_err(hns(format!("creating HNS endpoint {name}")))?;
        let finished = self
            .hcn
            .attach_endpoint(namespace, endpoint.id)
            .map_err(hns(format!(
                "attaching endpoint {name} to namespace {namespace}"
            )))
            .and_then(|()| self.set_pod_mtu(&endpoint, spec.mtu))
            .and_then(|_| pod_interface(&endpoint));
        match finished {
            Ok(created) => {
                tracing::info!(
                    "endpoint {name} ({}) attached to namespace {namespace}",
                    spec.address
                );
                Ok((created, Outcome::Changed))
            }
            Err(error) => {
                if let Err(undo) = self.hcn.delete_endpoint(endpoint.id) {
                    tracing::error!("deleting endpoint {name} after a failed ADD: {undo}");
                }
                Err(error)
            }
        }
    }

    fn find_endpoint(&self, name: &str) -> Result<Option<HostComputeEndpoint>> {
        self.hcn
            .find_endpoint_by_name(name)
            .map_err(hns(format!("looking up HNS endpoint {name}")))
    }

    /// Detaches the endpoint from its namespace (when attached) and deletes it; either being
    /// gone already is fine.
    fn remove_endpoint(&self, endpoint: &HostComputeEndpoint) -> Result<()> {
        let name = &endpoint.name;
        if let Some(namespace) = endpoint.host_compute_namespace.filter(|n| !n.is_nil()) {
            match self.hcn.detach_endpoint(namespace, endpoint.id) {
                Err(e)
                    if !e.is_not_found()
                        && e.hresult() != Some(hcn::Hresult::ENDPOINT_NOT_ATTACHED) =>
                {
                    return Err(hns(format!(
                        "detaching endpoint {name} from namespace {namespace}"
                    ))(e));
                }
                _ => {}
            }
        }
        match self.hcn.delete_endpoint(endpoint.id) {
            Err(e) if !e.is_not_found() => Err(hns(format!("deleting HNS endpoint {name}"))(e)),
            _ => Ok(()),
        }
    }

    /// The IPv4 MTU of the endpoint's vNIC (HNS endpoints have no MTU field); returns whether
    /// it was changed.
    fn set_pod_mtu(&self, endpoint: &HostComputeEndpoint, mtu: u32) -> Result<bool> {
        let vnic = self.wait_for_adapter(&vnic_name(&endpoint.name))?;
        let settings = self
            .ip
            .ip_interface(vnic.index, IpFamily::V4)
            .map_err(os(format!("reading IPv4 settings of {}", vnic.alias)))?;
        if settings.nl_mtu == mtu {
            return Ok(false);
        }
        let change = IpInterfaceChange {
            forwarding: None,
            nl_mtu: Some(mtu),
        };
        self.ip
            .set_ip_interface(vnic.index, IpFamily::V4, change)
            .map_err(os(format!("setting MTU {mtu} on {}", vnic.alias)))?;
        Ok(true)
    }

    /// See [`crate::HostNetwork::delete_pod_interface`].
    pub(super) fn delete_pod(&self, name: &str) -> Result<Outcome> {
        let Some(endpoint) = self.find_endpoint(name)? else {
            return Ok(Outcome::Unchanged);
        };
        self.remove_endpoint(&endpoint)?;
        tracing::info!("endpoint {name} deleted");
        Ok(Outcome::Changed)
    }

    /// The endpoints on our network whose names follow the naming rule.
    pub(super) fn pods(&self) -> Result<Vec<String>> {
        let Some(network) = self.network()? else {
            return Ok(Vec::new());
        };
        let ids = self
            .hcn
            .enumerate_endpoints(&HostComputeQuery::new(QueryFilter::Network(network.id)))
            .map_err(hns(format!("listing the endpoints of {HNS_NETWORK}")))?;
        let mut names = Vec::new();
        for id in ids {
            match self.hcn.query_endpoint(id) {
                Ok(endpoint) if is_endpoint_name(&endpoint.name) => names.push(endpoint.name),
                Ok(_) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(hns(format!("reading endpoint {id}"))(e)),
            }
        }
        names.sort();
        Ok(names)
    }

    /// See [`crate::HostNetwork::check_pod_interface`]: the endpoint exists on our network,
    /// attached to the Pod's namespace, with the Pod's IP and the MACs ADD reported.
    pub(super) fn check_pod(&self, spec: &PodInterfaceSpec, created: &PodInterface) -> Result<()> {
        let name = spec.host_ifname.as_str();
        let failed = |what: &'static str, expected: String, found: String| Error::CheckFailed {
            interface: name.to_owned(),
            what,
            expected,
            found,
        };
        let namespace = namespace_of(spec)?;
        let Some(endpoint) = self.find_endpoint(name)? else {
            return Err(failed("HNS endpoint", "present".into(), "absent".into()));
        };
        let network = self.our_network("checking a Pod endpoint")?;
        if endpoint.host_compute_network != network.id {
            return Err(failed(
                "network",
                network.id.to_string(),
                endpoint.host_compute_network.to_string(),
            ));
        }
        let namespace_found = endpoint
            .host_compute_namespace
            .map_or("none".to_owned(), |n| n.to_string());
        if endpoint.host_compute_namespace != Some(namespace) {
            return Err(failed("namespace", namespace.to_string(), namespace_found));
        }
        let ip = spec.address.addr().to_string();
        if !endpoint
            .ip_configurations
            .iter()
            .any(|c| c.ip_address == ip)
        {
            let found: Vec<&str> = endpoint
                .ip_configurations
                .iter()
                .map(|c| c.ip_address.as_str())
                .collect();
            return Err(failed("IP address", ip, found.join(",")));
        }
        let mac = mac_of(&endpoint)?;
        for expected in [created.host_mac, created.container_mac] {
            if mac != expected {
                return Err(failed("MAC", expected.to_string(), mac.to_string()));
            }
        }
        Ok(())
    }
}

/// The result of ADD for an endpoint: HNS's MAC on both sides, as Antrea reports it.
fn pod_interface(endpoint: &HostComputeEndpoint) -> Result<PodInterface> {
    let mac = mac_of(endpoint)?;
    Ok(PodInterface {
        host_ifname: endpoint.name.clone(),
        host_mac: mac,
        container_mac: mac,
    })
}
