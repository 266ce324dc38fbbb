//! Decoding what HNS returns: query output with keys this crate does not model, HNS's own key
//! casing (`Id`), an absent `Type` (NAT), policy types in other casing or unknown to us, error
//! records. None of it may fail; what we model must come out right.

use hcn::schema::{
    EndpointPolicy, ErrorRecord, HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork,
    NamespaceResourceType, NamespaceType, NetworkPolicy, NetworkType, OVS_EXTENSION_ID, ResourceId,
    Route, SwitchExtensionState, decode,
};
use hcn::{Guid, Hresult};
use serde_json::{Map, Value, json};

/// `SchemaVersion` 2.0 as HNS writes it.
fn v2() -> Value {
    json!({"Major": 2, "Minor": 0})
}

fn guid(text: &str) -> Guid {
    text.parse().expect("test GUID")
}

/// A Transparent network as `HcnQueryNetworkProperties` reports it, with Health, State,
/// Version, resource and subnet IDs, an extension list and lower-case GUIDs.
const NETWORK_PROPERTIES: &str = r#"{
  "ID": "3e5b3f3b-9a1c-4a43-9d1c-0f7f5c2a8e11",
  "Name": "antrea-hnsnetwork",
  "Type": "Transparent",
  "Policies": [
    {"Type": "NetAdapterName", "Settings": {"NetworkAdapterName": "Ethernet0"}},
    {"Type": "VSwitchExtension", "Settings": {"ExtensionID": "583cc151-73ec-4a6a-8b47-578297ad7623", "Enable": true}},
    {"Type": "InterfaceConstraint", "Settings": {"InterfaceGuid": "00000000-0000-0000-0000-000000000000", "InterfaceIndex": 7}}
  ],
  "MacPool": {"Ranges": [{"StartMacAddress": "00-15-5D-6F-50-00", "EndMacAddress": "00-15-5D-6F-5F-FF"}]},
  "Dns": {},
  "Ipams": [{"Type": "Static", "Subnets": [{
    "ID": "a0b1c2d3-0000-4000-8000-000000000001",
    "ObjectType": 5,
    "IpAddressPrefix": "10.10.1.0/24",
    "Routes": [{"ID": "a0b1c2d3-0000-4000-8000-000000000002", "ObjectType": 6, "NextHop": "10.10.1.1", "DestinationPrefix": "0.0.0.0/0"}]
  }]}],
  "Flags": 8,
  "Health": {"LastErrorCode": 0, "LastUpdateTime": 133500000000000000, "Extra": {"SwitchGuid": "3E5B3F3B-9A1C-4A43-9D1C-0F7F5C2A8E11"}},
  "Extensions": [{"Id": "583CC151-73EC-4A6A-8B47-578297AD7623", "IsEnabled": true, "Name": "Open vSwitch Extension"}],
  "Resources": {"AdditionalParams": {}, "AllocationOrder": 2, "Allocators": [{"Tag": "SwitchPort"}]},
  "State": 1,
  "Version": 64424509440,
  "SchemaVersion": {"Major": 2, "Minor": 0}
}"#;

#[test]
fn network_properties_with_extra_keys() {
    let network: HostComputeNetwork = serde_json::from_str(NETWORK_PROPERTIES).expect("decode");
    assert_eq!(network.id, guid("3E5B3F3B-9A1C-4A43-9D1C-0F7F5C2A8E11"));
    assert_eq!(network.name, "antrea-hnsnetwork");
    assert_eq!(network.kind, NetworkType::Transparent);
    assert_eq!(network.adapter_name(), Some("Ethernet0"));
    assert_eq!(
        network.policies[1],
        NetworkPolicy::VSwitchExtension {
            extension_id: OVS_EXTENSION_ID,
            enable: true
        }
    );
    assert_eq!(
        network.policies[2],
        NetworkPolicy::Other {
            kind: "InterfaceConstraint".into(),
            settings: Some(
                json!({"InterfaceGuid": "00000000-0000-0000-0000-000000000000", "InterfaceIndex": 7})
            ),
            fields: Map::new(),
        }
    );
    assert_eq!(
        network.mac_pool.ranges[0].start_mac_address,
        "00-15-5D-6F-50-00"
    );
    assert_eq!(
        network.ipams[0].subnets[0].ip_address_prefix,
        "10.10.1.0/24"
    );
    assert_eq!(
        network.ipams[0].subnets[0].routes,
        vec![Route::default_via("10.10.1.1")]
    );
    assert_eq!(network.extension_enabled(OVS_EXTENSION_ID), Some(true));
    assert_eq!(network.extension_enabled(Guid(1)), None);
    assert_eq!(network.flags.0, 8);
    assert!(network.dns.is_empty());
}

/// HNS leaves `Type` out for NAT networks and spells the ID `Id` in some outputs; policy types
/// are matched without regard to case.
#[test]
fn nat_network_without_type_and_other_casing() {
    let network: HostComputeNetwork = serde_json::from_value(json!({
        "Id": "11111111-2222-3333-4444-555555555555",
        "Name": "nat",
        "Policies": [{"Type": "NETADAPTERNAME", "Settings": {"NetworkAdapterName": "Ethernet1"}}],
        "SchemaVersion": {"Major": 2, "Minor": 0}
    }))
    .expect("decode");
    assert_eq!(network.id, guid("11111111-2222-3333-4444-555555555555"));
    assert_eq!(network.kind, NetworkType::Nat);
    assert_eq!(network.adapter_name(), Some("Ethernet1"));
}

/// A network mode this crate does not name decodes and re-encodes unchanged.
#[test]
fn unknown_network_mode_round_trips() {
    let network: HostComputeNetwork =
        serde_json::from_value(json!({"Name": "m", "Type": "Mirrored", "SchemaVersion": v2()}))
            .expect("decode");
    assert_eq!(network.kind, NetworkType::Other("Mirrored".into()));
    assert_eq!(serde_json::to_value(&network).unwrap()["Type"], "Mirrored");
    let l2: HostComputeNetwork =
        serde_json::from_value(json!({"Name": "b", "Type": "l2bridge", "SchemaVersion": v2()}))
            .expect("decode");
    assert_eq!(l2.kind, NetworkType::L2Bridge);
}

/// A known policy type with malformed settings is a decode error naming the policy.
#[test]
fn malformed_known_policy_is_an_error() {
    let error = serde_json::from_value::<HostComputeNetwork>(json!({
        "Name": "n",
        "Policies": [{"Type": "VSwitchExtension", "Settings": {"ExtensionID": "not-a-guid", "Enable": true}}],
        "SchemaVersion": v2()
    }))
    .unwrap_err();
    assert!(error.to_string().contains("VSwitchExtension"), "{error}");
}

/// An attached endpoint as `HcnQueryEndpointProperties` reports it.
#[test]
fn endpoint_properties() {
    let endpoint: HostComputeEndpoint = serde_json::from_value(json!({
        "ID": "0a1b2c3d-4e5f-4061-8273-8495a6b7c8d9",
        "Name": "pod-ep",
        "HostComputeNetwork": "3e5b3f3b-9a1c-4a43-9d1c-0f7f5c2a8e11",
        "HostComputeNamespace": "66666666-7777-8888-9999-000000000000",
        "Policies": [
            {"Type": "PortName", "Settings": {"Name": "pod-ep"}},
            {"Type": "L2Driver"}
        ],
        "IpConfigurations": [{"IpAddress": "10.10.1.5", "PrefixLength": 24, "IpSubnetId": "a0b1c2d3-0000-4000-8000-000000000001"}],
        "Dns": {"Search": ["svc.cluster.local"], "ServerList": ["10.96.0.10"]},
        "Routes": [{"NextHop": "10.10.1.1", "DestinationPrefix": "0.0.0.0/0", "Metric": 0}],
        "MacAddress": "00-15-5D-6F-50-03",
        "Flags": 0,
        "Health": {"LastErrorCode": 0},
        "State": 2,
        "AdditionalParams": {"SwitchId": "x", "SwitchPortId": "y"},
        "Resources": {"Allocators": []},
        "SchemaVersion": {"Major": 2, "Minor": 0}
    }))
    .expect("decode");
    assert_eq!(
        endpoint.host_compute_namespace,
        Some(guid("66666666-7777-8888-9999-000000000000"))
    );
    assert_eq!(
        endpoint.host_compute_network,
        guid("3E5B3F3B-9A1C-4A43-9D1C-0F7F5C2A8E11")
    );
    assert_eq!(
        endpoint.policies[0],
        EndpointPolicy::PortName {
            name: "pod-ep".into()
        }
    );
    assert_eq!(
        endpoint.policies[1],
        EndpointPolicy::Other {
            kind: "L2Driver".into(),
            settings: None,
            fields: Map::new(),
        }
    );
    assert_eq!(endpoint.ip_configurations[0].prefix_length, 24);
    assert_eq!(
        endpoint.ip_configurations[0].ip_subnet_id,
        Some(guid("a0b1c2d3-0000-4000-8000-000000000001"))
    );
    assert_eq!(endpoint.mac_address, "00-15-5D-6F-50-03");
    assert_eq!(endpoint.dns.server_list, vec!["10.96.0.10".to_owned()]);
}

/// A namespace's resources carry the endpoint ID as `Id` (schema) or `ID` (hcsshim's tag).
#[test]
fn namespace_properties_with_resources() {
    let namespace: HostComputeNamespace = serde_json::from_value(json!({
        "ID": "66666666-7777-8888-9999-000000000000",
        "NamespaceId": 3,
        "NamespaceGuid": "66666666-7777-8888-9999-000000000000",
        "Type": "Host",
        "Resources": [
            {"Type": "Endpoint", "Data": {"Id": "0a1b2c3d-4e5f-4061-8273-8495a6b7c8d9"}},
            {"Type": "Endpoint", "Data": {"ID": "0a1b2c3d-4e5f-4061-8273-8495a6b7c8da"}},
            {"Type": "Container", "Data": {"Id": "0a1b2c3d-4e5f-4061-8273-8495a6b7c8db"}},
            {"Type": "Compartment", "Data": {"Number": 3}}
        ],
        "SchemaVersion": {"Major": 2, "Minor": 0}
    }))
    .expect("decode");
    assert_eq!(namespace.namespace_id, 3);
    assert_eq!(namespace.kind, NamespaceType::Host);
    assert_eq!(namespace.resources[3].kind, NamespaceResourceType::Unknown);
    assert_eq!(namespace.resources[3].data.id, None);
    assert_eq!(
        namespace.endpoint_ids(),
        vec![
            guid("0a1b2c3d-4e5f-4061-8273-8495a6b7c8d9"),
            guid("0a1b2c3d-4e5f-4061-8273-8495a6b7c8da")
        ]
    );
}

/// A namespace type this crate does not know still decodes.
#[test]
fn unknown_namespace_type() {
    let namespace: HostComputeNamespace =
        serde_json::from_value(json!({"Type": "Silo", "SchemaVersion": v2()})).expect("decode");
    assert_eq!(namespace.kind, NamespaceType::Unknown);
}

/// Error records as HNS writes them (trailing space, decimal code), and the S_OK-style record.
#[test]
fn error_records() {
    let record: ErrorRecord = serde_json::from_str(
        r#"{"Success":false,"Error":"The network was not found. ","ErrorCode":2151350273}"#,
    )
    .expect("decode");
    assert_eq!(
        record.error_code.map(Hresult),
        Some(Hresult::NETWORK_NOT_FOUND)
    );
    assert_eq!(record.message(), "The network was not found.");
    assert!(!record.success);
    let ok: ErrorRecord = serde_json::from_str(r#"{"Success":true}"#).expect("decode");
    assert!(ok.success && ok.error_code.is_none());
    assert_eq!(
        serde_json::to_value(ErrorRecord::failure(
            Hresult(0x803B_002F),
            "Address invalid "
        ))
        .unwrap(),
        json!({"Success": false, "Error": "Address invalid ", "ErrorCode": 2151350319u32})
    );
}

/// The GUID list an enumeration returns.
#[test]
fn enumeration_output() {
    let ids: Vec<Guid> = serde_json::from_str(
        r#"["3e5b3f3b-9a1c-4a43-9d1c-0f7f5c2a8e11","{11111111-2222-3333-4444-555555555555}"]"#,
    )
    .expect("decode");
    assert_eq!(
        ids,
        vec![
            guid("3E5B3F3B-9A1C-4A43-9D1C-0F7F5C2A8E11"),
            guid("11111111-2222-3333-4444-555555555555")
        ]
    );
}

/// `null` members (Go's nil slices, absent objects) read as absent; `null` elsewhere still fails.
#[test]
fn null_members_are_absent() {
    let network: HostComputeNetwork = decode(
        r#"{"Name":"n","Type":null,"Policies":null,"MacPool":{"Ranges":null},"Dns":null,"Ipams":[{"Type":"Static","Subnets":null}],"Flags":null,"SchemaVersion":{"Major":2,"Minor":0}}"#,
    )
    .expect("decode");
    assert_eq!(network.kind, NetworkType::Nat);
    assert!(
        network.policies.is_empty()
            && network.mac_pool.ranges.is_empty()
            && network.ipams[0].subnets.is_empty()
    );
    let endpoint: HostComputeEndpoint =
        decode(r#"{"Name":"e","HostComputeNamespace":null,"IpConfigurations":null,"SchemaVersion":{"Major":2,"Minor":0}}"#)
            .expect("decode");
    assert_eq!(endpoint.host_compute_namespace, None);
    assert!(decode::<Vec<Guid>>("[null]").is_err());
    assert!(decode::<HostComputeNetwork>("{").is_err());
}

/// A v1 document (no `SchemaVersion`, or a major version below 2, as v1 namespaces report
/// `{"Major": 0, "Minor": 0}` in calico#8465) is refused with an error saying what it is,
/// instead of decoding as an empty schema 2 object; schema 2.x is read.
#[test]
fn v1_documents_are_refused() {
    let v1_network = r#"{"ID":"11111111-2222-3333-4444-555555555555","Name":"nat","Type":"nat","Subnets":[{"AddressPrefix":"172.21.16.0/20"}]}"#;
    let error = decode::<HostComputeNetwork>(v1_network)
        .unwrap_err()
        .to_string();
    assert!(error.contains("no SchemaVersion"), "{error}");
    assert!(error.contains("v1 HNS document"), "{error}");
    let error = decode::<HostComputeEndpoint>(r#"{"Name":"e","SchemaVersion":null}"#)
        .unwrap_err()
        .to_string();
    assert!(error.contains("no SchemaVersion"), "{error}");
    for (version, shown) in [
        (json!({"Major": 1, "Minor": 0}), "1.0"),
        (json!({"Major": 0, "Minor": 0}), "0.0"),
    ] {
        let document =
            json!({"ID": "66666666-7777-8888-9999-000000000000", "SchemaVersion": version});
        let error = decode::<HostComputeNamespace>(&document.to_string())
            .unwrap_err()
            .to_string();
        assert!(error.contains(&format!("SchemaVersion {shown}")), "{error}");
        assert!(error.contains("v1 HNS document"), "{error}");
    }
    let v2_3: HostComputeNetwork =
        decode(r#"{"Name":"n","SchemaVersion":{"Major":2,"Minor":3}}"#).expect("decode");
    assert_eq!(v2_3.schema_version.minor, 3);
}

/// Container IDs in namespace resources are the runtime's IDs (64 hex digits), not GUIDs: they
/// are kept as text, and the endpoints beside them still decode.
#[test]
fn container_ids_in_namespace_resources() {
    // A containerd container ID, from hcsshim#675.
    let container = "444009a044a8c47850744291fd74b2d3b2eaab6a56eb46c3435d5f321161d349";
    let namespace: HostComputeNamespace = serde_json::from_value(json!({
        "ID": "3F801A79-2FEF-4C68-8847-78361820EFBA",
        "Type": "Host",
        "Resources": [
            {"Type": "Container", "Data": {"ID": container}},
            {"Type": "Endpoint", "Data": {"ID": "596A5308-C906-456F-B714-28EBEB04442A"}}
        ],
        "SchemaVersion": v2()
    }))
    .expect("decode");
    assert_eq!(
        namespace.resources[0].kind,
        NamespaceResourceType::Container
    );
    assert_eq!(
        namespace.resources[0].data.id,
        Some(ResourceId::Text(container.into()))
    );
    assert_eq!(
        namespace.endpoint_ids(),
        vec![guid("596A5308-C906-456F-B714-28EBEB04442A")]
    );
    assert_eq!(
        serde_json::to_value(&namespace.resources[0].data).unwrap(),
        json!({"Id": container})
    );
}

/// Policies keep every key: a v1-style policy (fields beside `Type`, no `Settings`) re-encodes
/// with its fields, also when its kind is one this crate types (it would lose them there); an
/// unknown kind keeps keys beside `Settings` too.
#[test]
fn policies_keep_every_key() {
    let vlan = json!({"Type": "VLAN", "VLAN": 1});
    let policy: NetworkPolicy = serde_json::from_value(vlan.clone()).expect("decode");
    assert_eq!(
        policy,
        NetworkPolicy::Other {
            kind: "VLAN".into(),
            settings: None,
            fields: json!({"VLAN": 1}).as_object().unwrap().clone(),
        }
    );
    assert_eq!(serde_json::to_value(&policy).unwrap(), vlan);

    let v1_nat = json!({"Type": "OutBoundNAT", "ExceptionList": ["10.0.0.0/8", "10.244.0.0/16"]});
    let policy: EndpointPolicy = serde_json::from_value(v1_nat.clone()).expect("decode");
    assert!(matches!(policy, EndpointPolicy::Other { ref kind, .. } if kind == "OutBoundNAT"));
    assert_eq!(serde_json::to_value(&policy).unwrap(), v1_nat);

    let extra = json!({"Type": "ProviderAddress", "Settings": {"ProviderAddress": "10.0.0.4"}, "Priority": 2});
    let policy: NetworkPolicy = serde_json::from_value(extra.clone()).expect("decode");
    assert_eq!(serde_json::to_value(&policy).unwrap(), extra);

    // A typed kind in the v2 form stays typed.
    let typed: EndpointPolicy = serde_json::from_value(
        json!({"Type": "OutBoundNAT", "Settings": {"Exceptions": ["10.0.0.0/8"]}}),
    )
    .expect("decode");
    assert!(matches!(typed, EndpointPolicy::OutboundNat(ref s) if s.exceptions == ["10.0.0.0/8"]));
}

/// Extension state is read from the network's `Extensions` list (the state HNS reports), and
/// from a `VSwitchExtension` policy when the list does not name the extension.
#[test]
fn extension_state_from_either_form() {
    let ovs = OVS_EXTENSION_ID.to_string();
    let policy =
        json!({"Type": "VSwitchExtension", "Settings": {"ExtensionID": ovs, "Enable": true}});
    let listed = |enabled: bool| json!([{"Id": ovs, "IsEnabled": enabled, "Name": "Open vSwitch Extension"}]);
    let network = |document: Value| -> HostComputeNetwork {
        serde_json::from_value(document).expect("decode")
    };
    let only_list = network(json!({"Extensions": listed(true), "SchemaVersion": v2()}));
    assert_eq!(only_list.extension_enabled(OVS_EXTENSION_ID), Some(true));
    assert_eq!(
        only_list.extensions,
        vec![SwitchExtensionState {
            id: OVS_EXTENSION_ID,
            is_enabled: true,
            name: "Open vSwitch Extension".into()
        }]
    );
    let only_policy = network(json!({"Policies": [policy], "SchemaVersion": v2()}));
    assert_eq!(only_policy.extension_enabled(OVS_EXTENSION_ID), Some(true));
    let both =
        network(json!({"Policies": [policy], "Extensions": listed(false), "SchemaVersion": v2()}));
    assert_eq!(
        both.extension_enabled(OVS_EXTENSION_ID),
        Some(false),
        "the list is the state"
    );
    let neither = network(json!({"SchemaVersion": v2()}));
    assert_eq!(neither.extension_enabled(OVS_EXTENSION_ID), None);
    // The list is read-only: never sent.
    assert!(
        serde_json::to_value(&only_list)
            .unwrap()
            .get("Extensions")
            .is_none()
    );
}
