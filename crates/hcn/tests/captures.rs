//! Public captures of real HNS output (`tests/captures/`, sources in its README.md). Every one
//! is a v1 document, so each is refused as a schema 2 document with an error that names the
//! problem, instead of decoding as an empty object. The parts that v1 and schema 2 share (the
//! `Extensions` list, policies, MAC ranges, IDs, namespace resources) are decoded through this
//! crate's types, and their values must come out intact. The expected values were read from each
//! capture by hand.

use hcn::Guid;
use hcn::schema::{
    EndpointPolicy, HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork, MacRange,
    NamespaceResource, NamespaceResourceData, NamespaceResourceType, NetworkPolicy, NetworkType,
    OVS_EXTENSION_ID, ResourceId, SwitchExtensionState, decode,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

const WFP: &str = "E7C3B2F0-F3C5-48DF-AF2B-10FED6D72E7A";
const NDIS_CAPTURE: &str = "430BDADD-BAB0-41AB-A369-94B67FA5BE0A";

/// The capture's text and its JSON.
fn capture(name: &str) -> (String, Value) {
    let path = format!("{}/tests/captures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    (text, value)
}

fn guid(text: &str) -> Guid {
    text.parse().expect("test GUID")
}

/// `value` decoded as `T`.
fn typed<T: DeserializeOwned>(value: &Value) -> T {
    serde_json::from_value(value.clone()).expect("decode")
}

fn extension(id: &str, is_enabled: bool, name: &str) -> SwitchExtensionState {
    SwitchExtensionState {
        id: guid(id),
        is_enabled,
        name: name.into(),
    }
}

fn mac_range(start: &str, end: &str) -> MacRange {
    MacRange {
        start_mac_address: start.into(),
        end_mac_address: end.into(),
    }
}

/// A v1 policy whose fields sit beside `Type`: kept whole, re-encoded unchanged.
fn v1_network_policy(kind: &str, fields: Value) -> NetworkPolicy {
    let Value::Object(fields) = fields else {
        panic!("fields must be an object");
    };
    NetworkPolicy::Other {
        kind: kind.into(),
        settings: None,
        fields,
    }
}

/// Asserts that `text` fails to decode as `T` with the v1 error.
fn refused_as_v1<T: DeserializeOwned + std::fmt::Debug>(name: &str, text: &str) {
    let error = decode::<T>(text).expect_err(name).to_string();
    assert!(
        error.contains("no SchemaVersion") && error.contains("v1 HNS document"),
        "{name}: {error}"
    );
}

#[test]
fn every_capture_is_refused_as_a_v1_document() {
    for name in [
        "docker-netrestore-nat-network.json",
        "sdn-269-transparent-network.json",
        "rke2-3925-nat-network.json",
        "rke2-3925-overlay-network.json",
    ] {
        refused_as_v1::<HostComputeNetwork>(name, &capture(name).0);
    }
    refused_as_v1::<HostComputeEndpoint>("endpoint", &capture("aks-1367-endpoint.json").0);
    for name in [
        "windows-containers-485-namespace.json",
        "hcsshim-675-namespace.json",
    ] {
        refused_as_v1::<HostComputeNamespace>(name, &capture(name).0);
    }
}

/// The NAT network docker creates, as `HNSCall` returns it.
#[test]
fn docker_nat_network() {
    let (_, network) = capture("docker-netrestore-nat-network.json");
    assert_eq!(
        typed::<Guid>(&network["ID"]),
        guid("404947AC-FC8F-4229-A4B5-595B9161F3A8")
    );
    assert_eq!(
        network["Name"],
        "82cb42b9d3bfbe5847c3736cac7494d9915e474a7d1a3c5068a0d35938456f72"
    );
    assert_eq!(typed::<NetworkType>(&network["Type"]), NetworkType::Nat);
    let extensions: Vec<SwitchExtensionState> = typed(&network["Extensions"]);
    assert_eq!(
        extensions,
        vec![
            extension(WFP, false, "Microsoft Windows Filtering Platform"),
            extension(
                "F74F241B-440F-4433-BB28-00F89EAD20D8",
                false,
                "Microsoft Azure VFP Switch Extension"
            ),
            extension(NDIS_CAPTURE, true, "Microsoft NDIS Capture"),
        ]
    );
    let policies: Vec<NetworkPolicy> = typed(&network["Policies"]);
    assert_eq!(
        policies,
        vec![v1_network_policy("VLAN", json!({"VLAN": 1}))]
    );
    assert_eq!(
        serde_json::to_value(&policies).unwrap(),
        network["Policies"]
    );
    assert_eq!(
        typed::<Vec<MacRange>>(&network["MacPools"]),
        vec![mac_range("00-15-5D-51-80-00", "00-15-5D-51-8F-FF")]
    );
}

/// The capture's `Extensions` list, carried by a schema 2 network document, is what
/// `extension_enabled` answers from.
#[test]
fn captured_extension_list_answers_extension_enabled() {
    let (_, network) = capture("rke2-3925-nat-network.json");
    let document = json!({
        "ID": network["ID"],
        "Extensions": network["Extensions"],
        "SchemaVersion": {"Major": 2, "Minor": 0}
    });
    let decoded: HostComputeNetwork = decode(&document.to_string()).expect("decode");
    assert_eq!(decoded.extension_enabled(guid(NDIS_CAPTURE)), Some(true));
    assert_eq!(decoded.extension_enabled(guid(WFP)), Some(false));
    assert_eq!(
        decoded.extension_enabled(guid("F74F241B-440F-4433-BB28-00F89EAD20D8")),
        Some(false)
    );
    assert_eq!(decoded.extension_enabled(OVS_EXTENSION_ID), None);
    assert_eq!(
        decoded.extensions[1].name,
        "Microsoft Azure VFP Switch Filter Extension"
    );
}

#[test]
fn rke2_nat_network() {
    let (_, network) = capture("rke2-3925-nat-network.json");
    assert_eq!(
        typed::<Guid>(&network["ID"]),
        guid("960E5287-B9EE-4999-8D50-991A32E4CB83")
    );
    assert_eq!(network["Name"], "nat");
    assert_eq!(
        network["NatName"],
        "NATA2292653-2EDE-4F20-A2DC-2341841DBFB6"
    );
    let policies: Vec<NetworkPolicy> = typed(&network["Policies"]);
    assert_eq!(
        policies,
        vec![v1_network_policy("VLAN", json!({"VLAN": 1}))]
    );
    assert_eq!(
        serde_json::to_value(&policies).unwrap(),
        network["Policies"]
    );
    assert_eq!(
        typed::<Vec<MacRange>>(&network["MacPools"]),
        vec![mac_range("00-15-5D-11-80-00", "00-15-5D-11-8F-FF")]
    );
    assert_eq!(network["Subnets"][0]["AddressPrefix"], "172.29.80.0/20");
    assert_eq!(network["Subnets"][0]["GatewayAddress"], "172.29.80.1");
}

#[test]
fn transparent_network() {
    let (_, network) = capture("sdn-269-transparent-network.json");
    assert_eq!(
        typed::<Guid>(&network["ID"]),
        guid("C156C7CA-7B7B-4AFE-9FEC-1EA1A8D48C84")
    );
    assert_eq!(network["Name"], "vmxnet3 Ethernet Adapter - Virtual Switch");
    assert_eq!(
        typed::<NetworkType>(&network["Type"]),
        NetworkType::Transparent
    );
    assert_eq!(typed::<Vec<NetworkPolicy>>(&network["Policies"]), vec![]);
    assert_eq!(
        typed::<Vec<MacRange>>(&network["MacPools"]),
        vec![mac_range("00-15-5D-F1-B0-00", "00-15-5D-F1-BF-FF")]
    );
}

/// flannel's `External` Overlay network: its subnet carries a v1-style VSID policy.
#[test]
fn overlay_network() {
    let (_, network) = capture("rke2-3925-overlay-network.json");
    assert_eq!(
        typed::<Guid>(&network["ID"]),
        guid("9DD95ECE-3B9B-417B-9F43-7B58F5B390D1")
    );
    assert_eq!(network["Name"], "External");
    assert_eq!(typed::<NetworkType>(&network["Type"]), NetworkType::Overlay);
    assert_eq!(network["NetworkAdapterName"], "Ethernet 2");
    let subnet = &network["Subnets"][0];
    assert_eq!(subnet["AddressPrefix"], "192.168.255.0/30");
    let subnet_policies: Vec<NetworkPolicy> = typed(&subnet["Policies"]);
    assert_eq!(
        subnet_policies,
        vec![v1_network_policy("VSID", json!({"VSID": 9999}))]
    );
    assert_eq!(
        serde_json::to_value(&subnet_policies).unwrap(),
        subnet["Policies"]
    );
    assert_eq!(
        typed::<Vec<MacRange>>(&network["MacPools"]),
        vec![mac_range("00-15-5D-EB-40-00", "00-15-5D-EB-4F-FF")]
    );
}

/// An Azure CNI remote endpoint, as `Get-HnsEndpoint` prints it.
#[test]
fn remote_endpoint() {
    let (_, endpoint) = capture("aks-1367-endpoint.json");
    assert_eq!(
        typed::<Guid>(&endpoint["ID"]),
        guid("2462B2D1-C402-4024-9C86-5A6903AF7759")
    );
    assert_eq!(endpoint["Name"], "Ethernet");
    let mac: model::MacAddr = endpoint["MacAddress"].as_str().unwrap().parse().unwrap();
    assert_eq!(mac.windows().to_string(), "02-11-0A-F0-00-0B");
    let ip: std::net::Ipv4Addr = endpoint["IPAddress"].as_str().unwrap().parse().unwrap();
    assert_eq!(ip, std::net::Ipv4Addr::new(10, 240, 0, 11));
    assert_eq!(endpoint["PrefixLength"], 16);
    let policies: Vec<EndpointPolicy> = typed(&endpoint["Policies"]);
    assert_eq!(
        policies,
        vec![EndpointPolicy::Other {
            kind: "L2Driver".into(),
            settings: None,
            fields: Map::new(),
        }]
    );
    assert_eq!(
        serde_json::to_value(&policies).unwrap(),
        endpoint["Policies"]
    );
    assert!(typed::<Guid>(&endpoint["Namespace"]["ID"]).is_nil());
}

/// hnsdiag's namespace: container IDs in their 12-hex short form, which no GUID type can hold.
#[test]
fn namespace_with_containers() {
    let (_, namespace) = capture("windows-containers-485-namespace.json");
    assert_eq!(
        typed::<Guid>(&namespace["ID"]),
        guid("7CB720C0-AC4C-4266-92E1-DC277B2A9B94")
    );
    assert_eq!(namespace["CompartmentId"], 6);
    let containers: Vec<ResourceId> = typed(&namespace["Containers"]);
    assert_eq!(
        containers,
        vec![
            ResourceId::Text("291cd4892b99".into()),
            ResourceId::Text("291cd4892b99".into()),
            ResourceId::Text("0f70f0bcccaf".into()),
        ]
    );
    let resources: Vec<NamespaceResource> = typed(&namespace["ResourceList"]);
    assert_eq!(
        resources,
        vec![NamespaceResource {
            kind: NamespaceResourceType::Endpoint,
            data: NamespaceResourceData {
                id: Some(ResourceId::Guid(guid(
                    "7CC03AF7-2978-449F-9968-595862B80F8B"
                ))),
            },
        }]
    );
}

#[test]
fn namespace_created_by_containerd() {
    let (_, namespace) = capture("hcsshim-675-namespace.json");
    assert_eq!(
        typed::<Guid>(&namespace["ID"]),
        guid("3F801A79-2FEF-4C68-8847-78361820EFBA")
    );
    assert_eq!(namespace["IsDefault"], false);
    assert_eq!(typed::<Vec<ResourceId>>(&namespace["Containers"]), vec![]);
}
