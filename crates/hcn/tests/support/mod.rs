//! Documents shared by the integration tests.

use hcn::schema::{
    HostComputeNetwork, Ipam, NetworkPolicy, NetworkType, OVS_EXTENSION_ID, Route, Subnet,
};

/// Antrea's network shape: Transparent, bound to `adapter`, OVS extension enabled at creation,
/// one static subnet 10.10.1.0/24 with its default route through 10.10.1.1.
pub fn transparent(name: &str, adapter: &str) -> HostComputeNetwork {
    HostComputeNetwork {
        name: name.into(),
        kind: NetworkType::Transparent,
        policies: vec![
            NetworkPolicy::NetAdapterName {
                network_adapter_name: adapter.into(),
            },
            NetworkPolicy::VSwitchExtension {
                extension_id: OVS_EXTENSION_ID,
                enable: true,
            },
        ],
        ipams: vec![Ipam::static_subnets(vec![Subnet {
            ip_address_prefix: "10.10.1.0/24".into(),
            routes: vec![Route::default_via("10.10.1.1")],
            flags: 0,
        }])],
        ..HostComputeNetwork::default()
    }
}
