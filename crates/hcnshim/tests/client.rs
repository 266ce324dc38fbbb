//! The real `hcn::HcnClient` under Wine, over the `computenetwork.dll` shim that
//! tools/wine/run.sh installs in the prefix's system32: the client's FFI code (GUIDs, wide
//! strings, HRESULTs, error records, `CoTaskMemFree`, handles) runs against HNS's semantics as
//! the fake has them.
//!
//! Each test is a [`Scenario`]: its steps run in child processes of this test binary, one after
//! the other, on one state file (the shim reads it before and writes it after every call, as HNS
//! keeps its state outside the client), and the test then checks the state the steps left, read
//! with `FakeHcn`, and the shim's trace of every export call. Separate processes also give each
//! test its own state: the shim reads its environment in the process that loads it.
#![cfg(windows)]

use std::path::Path;
use std::process::Command;

use computenetwork::store::{self, STATE_ENV};
use computenetwork::trace::{self, Entry, TRACE_ENV};
use hcn::fake::{AdapterRoute, FakeHcn, HostAdapter, HostModel, vnic_name};
use hcn::schema::{
    EndpointPolicy, HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork,
    HostComputeQuery, IpConfig, Ipam, ModifyNamespaceSettingRequest, NamespaceType, NetworkPolicy,
    NetworkType, OVS_EXTENSION_ID, OutboundNatSettings, QueryFilter, Route, Subnet,
};
use hcn::{Guid, HcnApi, HcnClient, HcnError, Hresult};

/// Set in a child: `<test name>/<step index>`, the step it runs.
const STEP_ENV: &str = "ANTREA_HCN_SHIM_TEST_STEP";

const NETWORK: &str = "antrea-hnsnetwork";

type Step = Box<dyn Fn(&HcnClient)>;

/// Steps run in child processes on one HNS state, then checks of what they left.
struct Scenario {
    name: &'static str,
    host: HostModel,
    steps: Vec<Step>,
}

impl Scenario {
    /// Scenario `name` (the test's function name) on a host with `host`'s adapters.
    fn new(name: &'static str, host: HostModel) -> Self {
        Scenario {
            name,
            host,
            steps: Vec::new(),
        }
    }

    /// Adds a step, which runs in a process of its own with a new client.
    fn step(mut self, step: impl Fn(&HcnClient) + 'static) -> Self {
        self.steps.push(Box::new(step));
        self
    }

    /// In a child, runs its step. Otherwise runs every step in a child, in order, then `check`
    /// on the state they left and the trace; every handle a child got must have been closed by
    /// it.
    fn run(self, check: impl FnOnce(&FakeHcn, &[Entry])) {
        if let Ok(step) = std::env::var(STEP_ENV) {
            let (name, index) = step.split_once('/').expect("<name>/<index>");
            assert_eq!(name, self.name, "the child ran another test");
            let client = HcnClient::new().expect("computenetwork.dll (the shim) loads");
            (self.steps[index.parse::<usize>().expect("a step index")])(&client);
            return;
        }
        if std::env::var_os("WINEPREFIX").is_none() {
            // On Windows, computenetwork.dll is the real HNS, which these tests must not change.
            testskip::skip(
                self.name,
                "needs Wine, where computenetwork.dll is the shim",
            );
            return;
        }
        let dir = tempfile::tempdir().expect("a temporary directory");
        let state = dir.path().join("hns.json");
        let trace_file = dir.path().join("trace.jsonl");
        store::write(&state, &FakeHcn::new(self.host).snapshot()).expect("write the state");
        for index in 0..self.steps.len() {
            run_child(self.name, index, &state, &trace_file);
        }
        let after = store::read(&state)
            .expect("read the state")
            .expect("the state file is there");
        let entries = trace::read(&trace_file).expect("read the trace");
        assert_handles_closed(&entries);
        check(&FakeHcn::from_snapshot(after), &entries);
    }
}

/// Runs step `index` of test `name` in a child process; it must pass, and be the one test run.
fn run_child(name: &str, index: usize, state: &Path, trace_file: &Path) {
    let output = Command::new(std::env::current_exe().expect("the test executable"))
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(STATE_ENV, state)
        .env(TRACE_ENV, trace_file)
        .env(STEP_ENV, format!("{name}/{index}"))
        .output()
        .expect("start the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "step {index} of {name}: {}\n{stdout}\n{stderr}",
        output.status
    );
}

/// Every handle an open or create returned was closed once, by the process it belongs to, with
/// the close export of its kind.
fn assert_handles_closed(entries: &[Entry]) {
    let handles = |prefixes: &[&str]| {
        let mut handles: Vec<(u32, Option<usize>, &str)> = entries
            .iter()
            .filter(|e| e.hresult == 0)
            .filter_map(|e| {
                let kind = prefixes.iter().find_map(|p| e.export.strip_prefix(p))?;
                Some((e.pid, e.handle, kind))
            })
            .collect();
        handles.sort();
        handles
    };
    let opened = handles(&["HcnOpen", "HcnCreate"]);
    assert!(!opened.is_empty(), "no handle was opened: {entries:#?}");
    assert_eq!(
        opened,
        handles(&["HcnClose"]),
        "handles opened vs closed: {entries:#?}"
    );
}

/// The exports called, in order, with their HRESULT.
fn exports(entries: &[Entry]) -> Vec<(&str, u32)> {
    entries
        .iter()
        .map(|e| (e.export.as_str(), e.hresult))
        .collect()
}

fn host() -> HostModel {
    HostModel::with_nic(HostAdapter::physical(
        "Ethernet0",
        "00-15-5D-AA-BB-CC".parse().unwrap(),
        vec!["192.168.1.10/24".parse().unwrap()],
        vec![AdapterRoute {
            destination: "0.0.0.0/0".parse().unwrap(),
            next_hop: "192.168.1.1".parse().unwrap(),
            metric: 0,
        }],
    ))
}

/// Antrea's network: Transparent on Ethernet0, the OVS extension enabled at creation, subnet
/// 10.10.1.0/24.
fn transparent() -> HostComputeNetwork {
    HostComputeNetwork {
        name: NETWORK.into(),
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
        ipams: vec![Ipam::static_subnets(vec![Subnet {
            ip_address_prefix: "10.10.1.0/24".into(),
            routes: vec![Route::default_via("10.10.1.1")],
            flags: 0,
        }])],
        ..HostComputeNetwork::default()
    }
}

fn endpoint(name: &str, ip: &str) -> HostComputeEndpoint {
    HostComputeEndpoint {
        name: name.into(),
        ip_configurations: vec![IpConfig {
            ip_address: ip.into(),
            prefix_length: 24,
            ip_subnet_id: None,
        }],
        routes: vec![Route::default_via("10.10.1.1")],
        policies: vec![
            EndpointPolicy::OutboundNat(OutboundNatSettings {
                exceptions: vec!["10.10.0.0/16".into()],
                ..OutboundNatSettings::default()
            }),
            EndpointPolicy::PortName {
                name: format!("{name}-port"),
            },
            EndpointPolicy::InterfaceParameters { mtu: 1450 },
        ],
        ..HostComputeEndpoint::default()
    }
}

fn network_id(client: &HcnClient) -> Guid {
    client
        .find_network_by_name(NETWORK)
        .expect("find the network")
        .expect("the network exists")
        .id
}

fn hns_error(error: HcnError) -> (Hresult, hcn::schema::ErrorRecord) {
    match error {
        HcnError::Hns {
            hresult,
            record: Some(record),
            ..
        } => (hresult, record),
        other => panic!("expected an HNS error with a record, got {other:?}"),
    }
}

#[test]
fn a_transparent_network_with_the_ovs_extension() {
    Scenario::new("a_transparent_network_with_the_ovs_extension", host())
        .step(|client| {
            let created = client.create_network(&transparent()).expect("create");
            assert!(!created.id.is_nil());
            assert_eq!(created.kind, NetworkType::Transparent);
            assert_eq!(created.policies, transparent().policies);
            assert_eq!(created.ipams, transparent().ipams);
            // Read from the `Extensions` list HNS writes, which the client never sends.
            assert_eq!(created.extensions.len(), 1, "{created:?}");
            assert_eq!(created.extension_enabled(OVS_EXTENSION_ID), Some(true));
            assert_eq!(client.query_network(created.id).expect("query"), created);
            assert_eq!(
                client.find_network_by_name(NETWORK).expect("find"),
                Some(created.clone())
            );
            client
                .set_extension_enabled(created.id, OVS_EXTENSION_ID, false)
                .expect("disable the extension");
            let queried = client.query_network(created.id).expect("query");
            assert_eq!(queried.extension_enabled(OVS_EXTENSION_ID), Some(false));
        })
        .run(|hns, entries| {
            let network = hns.find_network_by_name(NETWORK).unwrap().expect("kept");
            assert_eq!(network.extension_enabled(OVS_EXTENSION_ID), Some(false));
            let host = hns.host();
            let vnic = host
                .adapter(&vnic_name(NETWORK))
                .expect("the network's vNIC");
            assert_eq!(vnic.ipv4, ["192.168.1.10/24".parse().unwrap()]);
            assert!(host.adapter("Ethernet0").unwrap().ipv4.is_empty());
            // Create, then open → query → close for each query, the modify on its own handle.
            assert_eq!(
                exports(entries),
                [
                    ("HcnCreateNetwork", 0),
                    ("HcnQueryNetworkProperties", 0),
                    ("HcnCloseNetwork", 0),
                    ("HcnOpenNetwork", 0),
                    ("HcnQueryNetworkProperties", 0),
                    ("HcnCloseNetwork", 0),
                    ("HcnEnumerateNetworks", 0),
                    ("HcnOpenNetwork", 0),
                    ("HcnQueryNetworkProperties", 0),
                    ("HcnCloseNetwork", 0),
                    ("HcnOpenNetwork", 0),
                    ("HcnModifyNetwork", 0),
                    ("HcnCloseNetwork", 0),
                    ("HcnOpenNetwork", 0),
                    ("HcnQueryNetworkProperties", 0),
                    ("HcnCloseNetwork", 0),
                ]
            );
        });
}

#[test]
fn endpoints_namespaces_and_query_filters() {
    Scenario::new("endpoints_namespaces_and_query_filters", host())
        .step(|client| {
            let network = client.create_network(&transparent()).expect("network").id;
            let pod = client
                .create_endpoint(network, &endpoint("pod-a", "10.10.1.5"))
                .expect("endpoint a");
            assert_eq!(pod.host_compute_network, network);
            assert_eq!(pod.policies, endpoint("pod-a", "10.10.1.5").policies);
            assert_eq!(pod.mac_address, "00-15-5D-00-00-00", "the pool's first MAC");
            let other = client
                .create_endpoint(network, &endpoint("pod-b", "10.10.1.6"))
                .expect("endpoint b");
            let namespace = client
                .create_namespace(&HostComputeNamespace {
                    kind: NamespaceType::Host,
                    ..HostComputeNamespace::default()
                })
                .expect("namespace");
            assert_eq!(namespace.namespace_id, 2, "the first Host compartment");
            client
                .modify_namespace(
                    namespace.id,
                    &ModifyNamespaceSettingRequest::add_endpoint(pod.id),
                )
                .expect("attach");
            let queried = client
                .query_namespace(namespace.id)
                .expect("query namespace");
            assert_eq!(queried.endpoint_ids(), [pod.id]);
            assert_eq!(
                client
                    .query_endpoint(pod.id)
                    .expect("query")
                    .host_compute_namespace,
                Some(namespace.id)
            );
            assert_eq!(
                client
                    .query_endpoint(other.id)
                    .expect("query")
                    .host_compute_namespace,
                None
            );

            let of_network = client
                .enumerate_endpoints(&HostComputeQuery::new(QueryFilter::Network(network)))
                .expect("enumerate by network");
            assert_eq!(of_network, [pod.id, other.id]);
            let named = client
                .enumerate_endpoints(&HostComputeQuery::new(QueryFilter::Name("pod-b".into())))
                .expect("enumerate by name");
            assert_eq!(named, [other.id]);
            let none = client
                .enumerate_networks(&HostComputeQuery::new(QueryFilter::Name("nope".into())))
                .expect("enumerate none");
            assert!(none.is_empty());
            assert_eq!(
                client
                    .enumerate_namespaces(&HostComputeQuery::new(QueryFilter::Id(namespace.id)))
                    .expect("enumerate by ID"),
                [namespace.id]
            );
            assert_eq!(
                client
                    .enumerate_namespaces(&HostComputeQuery::new(QueryFilter::All))
                    .expect("enumerate all"),
                [namespace.id]
            );
        })
        .run(|hns, _| {
            let pod = hns.find_endpoint_by_name("pod-a").unwrap().expect("pod-a");
            let namespace = pod.host_compute_namespace.expect("attached");
            assert_eq!(
                hns.query_namespace(namespace).unwrap().endpoint_ids(),
                [pod.id]
            );
            let host = hns.host();
            let vnic = host.adapter(&vnic_name("pod-a")).expect("pod-a's vNIC");
            assert_eq!(vnic.ipv4, ["10.10.1.5/24".parse().unwrap()]);
            assert!(
                host.adapter(&vnic_name("pod-b")).is_none(),
                "pod-b is not attached"
            );
        });
}

#[test]
fn failures_carry_hns_codes_and_error_records() {
    Scenario::new("failures_carry_hns_codes_and_error_records", host())
        .step(|client| {
            let unknown: Guid = "6B3C7D1A-1111-4222-8333-444455556666".parse().unwrap();
            let (code, record) = hns_error(client.query_network(unknown).unwrap_err());
            assert_eq!(code, Hresult::NETWORK_NOT_FOUND);
            assert!(!record.success);
            assert_eq!(record.error_code, Some(Hresult::NETWORK_NOT_FOUND.0));
            assert_eq!(record.message(), "The network was not found.");
            let error = client.query_endpoint(unknown).unwrap_err();
            assert!(error.is_not_found());
            assert_eq!(error.hresult(), Some(Hresult::ENDPOINT_NOT_FOUND));
            let error = client.query_namespace(unknown).unwrap_err();
            assert_eq!(error.hresult(), Some(Hresult::ELEMENT_NOT_FOUND));
            assert_eq!(
                client.delete_namespace(unknown).unwrap_err().hresult(),
                Some(Hresult::ELEMENT_NOT_FOUND)
            );

            let network = client.create_network(&transparent()).expect("create").id;
            let duplicate = client.create_network(&transparent()).unwrap_err();
            assert!(duplicate.is_already_exists());
            assert_eq!(
                duplicate.to_string(),
                "HcnCreateNetwork antrea-hnsnetwork: 0x803B0010 (HCN_E_NETWORK_ALREADY_EXISTS): \
                 A network with this name already exists."
            );
            let pod = client
                .create_endpoint(network, &endpoint("pod-a", "10.10.1.5"))
                .expect("endpoint");
            let (code, _) = hns_error(
                client
                    .create_endpoint(network, &endpoint("pod-a", "10.10.1.7"))
                    .unwrap_err(),
            );
            assert_eq!(code, Hresult::OBJECT_ALREADY_EXISTS);
            let (code, _) = hns_error(
                client
                    .create_endpoint(network, &endpoint("pod-c", "10.20.0.1"))
                    .unwrap_err(),
            );
            assert_eq!(code, Hresult::INVALID_IP, "outside the network's subnet");
            let (code, _) = hns_error(
                client
                    .create_endpoint(unknown, &endpoint("pod-d", "10.10.1.8"))
                    .unwrap_err(),
            );
            assert_eq!(code, Hresult::NETWORK_NOT_FOUND);

            let (code, record) = hns_error(client.delete_network(network).unwrap_err());
            assert_eq!(code, Hresult::ENTITY_HAS_REFERENCES);
            assert_eq!(record.error_code, Some(code.0));
            client
                .query_network(network)
                .expect("the network is still there");
            client.delete_endpoint(pod.id).expect("delete the endpoint");
            client.delete_network(network).expect("delete the network");
            assert!(client.query_network(network).unwrap_err().is_not_found());
        })
        .run(|hns, entries| {
            assert!(hns.find_network_by_name(NETWORK).unwrap().is_none());
            assert_eq!(hns.host(), host(), "the NIC has its address and route back");
            assert!(
                exports(entries).contains(&("HcnOpenNetwork", Hresult::NETWORK_NOT_FOUND.0)),
                "{entries:#?}"
            );
            assert!(
                exports(entries).contains(&("HcnDeleteNetwork", Hresult::ENTITY_HAS_REFERENCES.0))
            );
        });
}

#[test]
fn the_state_survives_a_restart_of_the_client_process() {
    Scenario::new("the_state_survives_a_restart_of_the_client_process", host())
        .step(|client| {
            let network = client.create_network(&transparent()).expect("network").id;
            let pod = client
                .create_endpoint(network, &endpoint("pod-a", "10.10.1.5"))
                .expect("endpoint");
            let namespace = client
                .create_namespace(&HostComputeNamespace::default())
                .expect("namespace");
            client
                .attach_endpoint(namespace.id, pod.id)
                .expect("attach");
        })
        .step(|client| {
            // A new process: everything the first one made is there.
            let network = network_id(client);
            let pod = client
                .find_endpoint_by_name("pod-a")
                .expect("find")
                .expect("pod-a survived");
            assert_eq!(pod.host_compute_network, network);
            let namespace = pod.host_compute_namespace.expect("still attached");
            assert_eq!(
                client
                    .query_namespace(namespace)
                    .expect("namespace")
                    .endpoint_ids(),
                [pod.id]
            );
            client
                .delete_namespace(namespace)
                .expect("delete the namespace");
            assert_eq!(
                client
                    .query_endpoint(pod.id)
                    .expect("endpoint")
                    .host_compute_namespace,
                None,
                "deleting the namespace detached the endpoint"
            );
            client.delete_endpoint(pod.id).expect("delete the endpoint");
            client.delete_network(network).expect("delete the network");
        })
        .run(|hns, entries| {
            assert_eq!(hns.host(), host());
            assert!(
                hns.enumerate_networks(&HostComputeQuery::default())
                    .unwrap()
                    .is_empty()
            );
            let mut pids: Vec<u32> = entries.iter().map(|e| e.pid).collect();
            pids.dedup();
            assert_eq!(
                pids.len(),
                2,
                "two processes, one after the other: {pids:?}"
            );
        });
}
