//! Golden JSON: every document this crate sends, compared structurally with the JSON the public
//! HNS schema (docs/hcn.md) prescribes, and a decode of the same text giving the value back.

mod support;

use hcn::Guid;
use hcn::schema::ModifyNetworkSettingRequest;
use hcn::schema::{
    Dns, EndpointPolicy, HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork,
    HostComputeQuery, IpConfig, Ipam, MacPool, MacRange, ModifyNamespaceSettingRequest,
    NamespaceType, NetworkFlags, NetworkPolicy, NetworkType, OVS_EXTENSION_ID, OutboundNatSettings,
    QueryFilter, Route, SchemaVersion, Subnet,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use support::transparent;

/// `value` encodes to `expected` (structurally) and `expected` decodes back to `value`.
fn assert_golden<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(
    value: &T,
    expected: Value,
) {
    let encoded = serde_json::to_value(value).expect("encode");
    assert_eq!(
        encoded, expected,
        "encoded:\n{encoded:#}\nexpected:\n{expected:#}"
    );
    let decoded: T = serde_json::from_value(expected).expect("decode");
    assert_eq!(&decoded, value);
}

fn guid(text: &str) -> Guid {
    text.parse().expect("test GUID")
}

/// Antrea's network: Transparent, bound to the NIC, OVS extension enabled at creation, one
/// static subnet with its default route.
#[test]
fn transparent_network_with_adapter_and_ovs_extension() {
    let network = transparent("antrea-hnsnetwork", "Ethernet0");
    assert_golden(
        &network,
        json!({
            "Name": "antrea-hnsnetwork",
            "Type": "Transparent",
            "Policies": [
                {"Type": "NetAdapterName", "Settings": {"NetworkAdapterName": "Ethernet0"}},
                {"Type": "VSwitchExtension", "Settings": {"ExtensionID": "583CC151-73EC-4A6A-8B47-578297AD7623", "Enable": true}}
            ],
            "Ipams": [{"Type": "Static", "Subnets": [{
                "IpAddressPrefix": "10.10.1.0/24",
                "Routes": [{"NextHop": "10.10.1.1", "DestinationPrefix": "0.0.0.0/0"}]
            }]}],
            "SchemaVersion": {"Major": 2, "Minor": 0}
        }),
    );
}

/// Every other network part we can send: ID, MacPool, Dns, numeric Flags, an explicit
/// `Enable: false`, SourceMacAddress, HostRoute's empty settings, a route metric, subnet flags.
#[test]
fn network_with_every_part() {
    let network = HostComputeNetwork {
        id: guid("11111111-2222-3333-4444-555555555555"),
        name: "n".into(),
        kind: NetworkType::L2Bridge,
        policies: vec![
            NetworkPolicy::VSwitchExtension {
                extension_id: OVS_EXTENSION_ID,
                enable: false,
            },
            NetworkPolicy::SourceMacAddress {
                source_mac_address: "00-15-5D-01-02-03".into(),
            },
            NetworkPolicy::HostRoute,
        ],
        mac_pool: MacPool {
            ranges: vec![MacRange {
                start_mac_address: "00-15-5D-52-C0-00".into(),
                end_mac_address: "00-15-5D-52-CF-FF".into(),
            }],
        },
        dns: Dns {
            domain: "cluster.local".into(),
            search: vec!["svc.cluster.local".into()],
            server_list: vec!["10.96.0.10".into()],
            options: vec![],
        },
        ipams: vec![Ipam::static_subnets(vec![Subnet {
            ip_address_prefix: "10.10.2.0/24".into(),
            routes: vec![Route {
                next_hop: "10.10.2.1".into(),
                destination_prefix: "0.0.0.0/0".into(),
                metric: 5,
            }],
            flags: 1,
        }])],
        extensions: vec![],
        flags: NetworkFlags::ENABLE_NON_PERSISTENT | NetworkFlags::DISABLE_HOST_PORT,
        schema_version: SchemaVersion::V2,
    };
    assert_golden(
        &network,
        json!({
            "ID": "11111111-2222-3333-4444-555555555555",
            "Name": "n",
            "Type": "L2Bridge",
            "Policies": [
                {"Type": "VSwitchExtension", "Settings": {"ExtensionID": "583CC151-73EC-4A6A-8B47-578297AD7623", "Enable": false}},
                {"Type": "SourceMacAddress", "Settings": {"SourceMacAddress": "00-15-5D-01-02-03"}},
                {"Type": "HostRoute", "Settings": {}}
            ],
            "MacPool": {"Ranges": [{"StartMacAddress": "00-15-5D-52-C0-00", "EndMacAddress": "00-15-5D-52-CF-FF"}]},
            "Dns": {"Domain": "cluster.local", "Search": ["svc.cluster.local"], "ServerList": ["10.96.0.10"]},
            "Ipams": [{"Type": "Static", "Subnets": [{
                "IpAddressPrefix": "10.10.2.0/24",
                "Routes": [{"NextHop": "10.10.2.1", "DestinationPrefix": "0.0.0.0/0", "Metric": 5}],
                "Flags": 1
            }]}],
            "Flags": 1032,
            "SchemaVersion": {"Major": 2, "Minor": 0}
        }),
    );
}

/// A Pod endpoint: network ID, policies (typed and one kept as raw JSON), IP configuration,
/// DNS, default route, MAC in dash form.
#[test]
fn pod_endpoint() {
    let endpoint = HostComputeEndpoint {
        name: "pod-ep".into(),
        host_compute_network: guid("11111111-2222-3333-4444-555555555555"),
        policies: vec![
            EndpointPolicy::OutboundNat(OutboundNatSettings {
                exceptions: vec!["10.0.0.0/8".into()],
                ..OutboundNatSettings::default()
            }),
            EndpointPolicy::PortName {
                name: "pod-ep-port".into(),
            },
            EndpointPolicy::SdnRoute {
                destination_prefix: "10.96.0.0/12".into(),
                next_hop: String::new(),
                need_encap: true,
            },
            EndpointPolicy::InterfaceParameters { mtu: 1450 },
            EndpointPolicy::Other {
                kind: "ACL".into(),
                settings: Some(
                    json!({"Protocols": "6", "Action": "Allow", "Direction": "In", "RemotePorts": "80", "RuleType": "Switch", "Priority": 200}),
                ),
                fields: serde_json::Map::new(),
            },
        ],
        ip_configurations: vec![IpConfig {
            ip_address: "10.10.1.5".into(),
            prefix_length: 24,
            ip_subnet_id: None,
        }],
        dns: Dns {
            search: vec!["svc.cluster.local".into()],
            server_list: vec!["10.96.0.10".into()],
            ..Dns::default()
        },
        routes: vec![Route::default_via("10.10.1.1")],
        mac_address: "00-15-5D-01-02-03".into(),
        ..HostComputeEndpoint::default()
    };
    assert_golden(
        &endpoint,
        json!({
            "Name": "pod-ep",
            "HostComputeNetwork": "11111111-2222-3333-4444-555555555555",
            "Policies": [
                {"Type": "OutBoundNAT", "Settings": {"Exceptions": ["10.0.0.0/8"]}},
                {"Type": "PortName", "Settings": {"Name": "pod-ep-port"}},
                {"Type": "SDNRoute", "Settings": {"DestinationPrefix": "10.96.0.0/12", "NeedEncap": true}},
                {"Type": "InterfaceParameters", "Settings": {"Mtu": 1450}},
                {"Type": "ACL", "Settings": {"Protocols": "6", "Action": "Allow", "Direction": "In", "RemotePorts": "80", "RuleType": "Switch", "Priority": 200}}
            ],
            "IpConfigurations": [{"IpAddress": "10.10.1.5", "PrefixLength": 24}],
            "Dns": {"Search": ["svc.cluster.local"], "ServerList": ["10.96.0.10"]},
            "Routes": [{"NextHop": "10.10.1.1", "DestinationPrefix": "0.0.0.0/0"}],
            "MacAddress": "00-15-5D-01-02-03",
            "SchemaVersion": {"Major": 2, "Minor": 0}
        }),
    );
}

/// The read-only namespace of an endpoint is never sent, even when set.
#[test]
fn endpoint_namespace_is_not_sent() {
    let endpoint = HostComputeEndpoint {
        name: "e".into(),
        host_compute_namespace: Some(guid("66666666-7777-8888-9999-000000000000")),
        ..HostComputeEndpoint::default()
    };
    assert_eq!(
        serde_json::to_value(&endpoint).unwrap(),
        json!({"Name": "e", "SchemaVersion": {"Major": 2, "Minor": 0}})
    );
}

#[test]
fn namespace_create() {
    let namespace = HostComputeNamespace {
        kind: NamespaceType::HostDefault,
        ..HostComputeNamespace::default()
    };
    assert_golden(
        &namespace,
        json!({"Type": "HostDefault", "SchemaVersion": {"Major": 2, "Minor": 0}}),
    );
    let host = HostComputeNamespace::default();
    assert_golden(
        &host,
        json!({"Type": "Host", "SchemaVersion": {"Major": 2, "Minor": 0}}),
    );
}

#[test]
fn modify_namespace_add_and_remove_endpoint() {
    let endpoint = guid("66666666-7777-8888-9999-000000000000");
    assert_golden(
        &ModifyNamespaceSettingRequest::add_endpoint(endpoint),
        json!({"ResourceType": "Endpoint", "RequestType": "Add", "Settings": {"EndpointId": "66666666-7777-8888-9999-000000000000"}}),
    );
    let remove = ModifyNamespaceSettingRequest::remove_endpoint(endpoint);
    assert_golden(
        &remove,
        json!({"ResourceType": "Endpoint", "RequestType": "Remove", "Settings": {"EndpointId": "66666666-7777-8888-9999-000000000000"}}),
    );
    assert_eq!(remove.endpoint_id(), Some(endpoint));
}

/// Queries: the filter is a string holding JSON.
#[test]
fn queries() {
    let id = guid("11111111-2222-3333-4444-555555555555");
    assert_golden(
        &HostComputeQuery::new(QueryFilter::All),
        json!({"SchemaVersion": {"Major": 2, "Minor": 0}}),
    );
    assert_golden(
        &HostComputeQuery::new(QueryFilter::Name("antrea-hnsnetwork".into())),
        json!({"SchemaVersion": {"Major": 2, "Minor": 0}, "Filter": "{\"Name\":\"antrea-hnsnetwork\"}"}),
    );
    assert_golden(
        &HostComputeQuery::new(QueryFilter::Id(id)),
        json!({"SchemaVersion": {"Major": 2, "Minor": 0}, "Filter": "{\"ID\":\"11111111-2222-3333-4444-555555555555\"}"}),
    );
    assert_golden(
        &HostComputeQuery::new(QueryFilter::Network(id)),
        json!({"SchemaVersion": {"Major": 2, "Minor": 0}, "Filter": "{\"VirtualNetwork\":\"11111111-2222-3333-4444-555555555555\"}"}),
    );
    let detailed = HostComputeQuery {
        flags: 1,
        ..HostComputeQuery::default()
    };
    assert_golden(
        &detailed,
        json!({"SchemaVersion": {"Major": 2, "Minor": 0}, "Flags": 1}),
    );
}

/// Enabling a switch extension on an existing network (the documented v2 `Extension` resource),
/// and adding policies.
#[test]
fn modify_network_requests() {
    let enable = ModifyNetworkSettingRequest::set_extension(OVS_EXTENSION_ID, true);
    assert_golden(
        &enable,
        json!({"ResourceType": "Extension", "RequestType": "Update", "Settings": {"Id": "583CC151-73EC-4A6A-8B47-578297AD7623", "IsEnabled": true}}),
    );
    assert_eq!(enable.extension_setting(), Some((OVS_EXTENSION_ID, true)));
    let add = ModifyNetworkSettingRequest::add_policies(vec![NetworkPolicy::VSwitchExtension {
        extension_id: OVS_EXTENSION_ID,
        enable: true,
    }]);
    assert_golden(
        &add,
        json!({"ResourceType": "Policy", "RequestType": "Add", "Settings": {"Policies": [
            {"Type": "VSwitchExtension", "Settings": {"ExtensionID": "583CC151-73EC-4A6A-8B47-578297AD7623", "Enable": true}}
        ]}}),
    );
    assert_eq!(
        add.policies(),
        Some(vec![NetworkPolicy::VSwitchExtension {
            extension_id: OVS_EXTENSION_ID,
            enable: true
        }])
    );
}

#[test]
fn namespace_ready_on_create() {
    let namespace = HostComputeNamespace {
        ready_on_create: true,
        ..HostComputeNamespace::default()
    };
    assert_golden(
        &namespace,
        json!({"Type": "Host", "ReadyOnCreate": true, "SchemaVersion": {"Major": 2, "Minor": 0}}),
    );
}
