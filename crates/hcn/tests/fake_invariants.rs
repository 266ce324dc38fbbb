//! Random sequences of calls against FakeHcn, checked after every step:
//! - every virtual adapter HNS made belongs to a live network or an attached endpoint, and each
//!   of those has exactly one;
//! - an endpoint's namespace and the namespace's resources agree;
//! - a call that fails changes nothing;
//! - deleting everything, or a reboot, gives back the host the fake started with;
//! - a `Snapshot` written as JSON and read back is a fake with the same state, which answers
//!   the next calls as the original does (IDs and compartment numbers included).

mod support;

use hcn::fake::{AdapterRoute, FakeHcn, HostAdapter, HostModel, Snapshot};
use hcn::schema::{HostComputeEndpoint, HostComputeNamespace, HostComputeQuery, IpConfig};
use hcn::{Guid, HcnApi};
use proptest::prelude::*;
use support::transparent;

fn host() -> HostModel {
    let nic = |name: &str, last: u8| {
        HostAdapter::physical(
            name,
            model::MacAddr([0, 0x15, 0x5D, 0xAA, 0, last]),
            vec![format!("192.168.{last}.10/24").parse().unwrap()],
            vec![AdapterRoute {
                destination: "0.0.0.0/0".parse().unwrap(),
                next_hop: format!("192.168.{last}.1").parse().unwrap(),
                metric: 0,
            }],
        )
    };
    HostModel {
        adapters: vec![nic("Ethernet0", 0), nic("Ethernet1", 1)],
        ..HostModel::default()
    }
}

/// One step; indexes pick among the objects that exist (modulo their count), so steps on
/// missing objects happen too, through stale or nil IDs.
#[derive(Debug, Clone)]
enum Step {
    CreateNetwork { name: u8, nic: u8 },
    DeleteNetwork(u8),
    CreateEndpoint { network: u8, name: u8, host: u8 },
    DeleteEndpoint(u8),
    CreateNamespace,
    DeleteNamespace(u8),
    Attach { namespace: u8, endpoint: u8 },
    Detach { namespace: u8, endpoint: u8 },
    Reboot,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => (0..3u8, 0..3u8).prop_map(|(name, nic)| Step::CreateNetwork { name, nic }),
        1 => any::<u8>().prop_map(Step::DeleteNetwork),
        4 => (any::<u8>(), 0..6u8, 0..4u8).prop_map(|(network, name, host)| Step::CreateEndpoint { network, name, host }),
        1 => any::<u8>().prop_map(Step::DeleteEndpoint),
        2 => Just(Step::CreateNamespace),
        1 => any::<u8>().prop_map(Step::DeleteNamespace),
        4 => (any::<u8>(), any::<u8>()).prop_map(|(namespace, endpoint)| Step::Attach { namespace, endpoint }),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(namespace, endpoint)| Step::Detach { namespace, endpoint }),
        1 => Just(Step::Reboot),
    ]
}

/// An existing ID picked by `index`, or (for small indexes, and when there is none) one that
/// never exists.
fn pick(ids: &[Guid], index: u8) -> Guid {
    if index < 16 || ids.is_empty() {
        Guid(0xDEAD)
    } else {
        ids[usize::from(index) % ids.len()]
    }
}

fn all(fake: &FakeHcn) -> (Vec<Guid>, Vec<Guid>, Vec<Guid>) {
    let q = HostComputeQuery::default();
    (
        fake.enumerate_networks(&q).unwrap(),
        fake.enumerate_endpoints(&q).unwrap(),
        fake.enumerate_namespaces(&q).unwrap(),
    )
}

/// Everything observable: the host and every object's document.
fn snapshot(fake: &FakeHcn) -> String {
    let (networks, endpoints, namespaces) = all(fake);
    format!(
        "{:?}\n{:?}\n{:?}\n{:?}",
        fake.host(),
        networks
            .iter()
            .map(|id| fake.query_network(*id).unwrap())
            .collect::<Vec<_>>(),
        endpoints
            .iter()
            .map(|id| fake.query_endpoint(*id).unwrap())
            .collect::<Vec<_>>(),
        namespaces
            .iter()
            .map(|id| fake.query_namespace(*id).unwrap())
            .collect::<Vec<_>>(),
    )
}

fn run(fake: &FakeHcn, step: &Step) -> bool {
    let (networks, endpoints, namespaces) = all(fake);
    match *step {
        Step::CreateNetwork { name, nic } => fake
            .create_network(&transparent(
                &format!("net{name}"),
                &format!("Ethernet{nic}"),
            ))
            .is_ok(),
        Step::DeleteNetwork(i) => fake.delete_network(pick(&networks, i)).is_ok(),
        Step::CreateEndpoint {
            network,
            name,
            host,
        } => {
            let endpoint = HostComputeEndpoint {
                name: format!("ep{name}"),
                ip_configurations: vec![IpConfig {
                    ip_address: format!("10.10.1.{}", 2 + host),
                    prefix_length: 24,
                    ip_subnet_id: None,
                }],
                ..HostComputeEndpoint::default()
            };
            fake.create_endpoint(pick(&networks, network), &endpoint)
                .is_ok()
        }
        Step::DeleteEndpoint(i) => fake.delete_endpoint(pick(&endpoints, i)).is_ok(),
        Step::CreateNamespace => fake
            .create_namespace(&HostComputeNamespace::default())
            .is_ok(),
        Step::DeleteNamespace(i) => fake.delete_namespace(pick(&namespaces, i)).is_ok(),
        Step::Attach {
            namespace,
            endpoint,
        } => fake
            .attach_endpoint(pick(&namespaces, namespace), pick(&endpoints, endpoint))
            .is_ok(),
        Step::Detach {
            namespace,
            endpoint,
        } => fake
            .detach_endpoint(pick(&namespaces, namespace), pick(&endpoints, endpoint))
            .is_ok(),
        Step::Reboot => {
            fake.reboot();
            true
        }
    }
}

fn check_invariants(fake: &FakeHcn) -> Result<(), TestCaseError> {
    let host = fake.host();
    let (networks, endpoints, namespaces) = all(fake);
    let mut names: Vec<&str> = host.adapters.iter().map(|a| a.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    prop_assert_eq!(names.len(), host.adapters.len(), "adapter names are unique");

    let mut owners: Vec<Guid> = host.adapters.iter().filter_map(|a| a.owner).collect();
    owners.sort_unstable();
    let mut expected: Vec<Guid> = networks.clone();
    for id in &endpoints {
        let endpoint = fake.query_endpoint(*id).unwrap();
        if let Some(namespace) = endpoint.host_compute_namespace {
            prop_assert!(namespaces.contains(&namespace));
            prop_assert!(
                fake.query_namespace(namespace)
                    .unwrap()
                    .endpoint_ids()
                    .contains(id)
            );
            expected.push(*id);
        }
        prop_assert!(
            networks.contains(&endpoint.host_compute_network),
            "an endpoint's network exists"
        );
    }
    expected.sort_unstable();
    prop_assert_eq!(
        owners,
        expected,
        "one vNIC per network and per attached endpoint"
    );
    for id in &namespaces {
        for endpoint in fake.query_namespace(*id).unwrap().endpoint_ids() {
            prop_assert_eq!(
                fake.query_endpoint(endpoint)
                    .unwrap()
                    .host_compute_namespace,
                Some(*id)
            );
        }
    }
    Ok(())
}

/// Deletes every object: endpoints, then namespaces, then networks.
fn delete_everything(fake: &FakeHcn) {
    let (networks, endpoints, namespaces) = all(fake);
    endpoints
        .iter()
        .for_each(|id| fake.delete_endpoint(*id).unwrap());
    namespaces
        .iter()
        .for_each(|id| fake.delete_namespace(*id).unwrap());
    networks
        .iter()
        .for_each(|id| fake.delete_network(*id).unwrap());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_calls_keep_the_fake_consistent(steps in proptest::collection::vec(step(), 1..40), by_reboot in any::<bool>()) {
        let fake = FakeHcn::new(host());
        for step in &steps {
            let before = snapshot(&fake);
            let succeeded = run(&fake, step);
            if !succeeded {
                prop_assert_eq!(snapshot(&fake), before, "a failed {:?} changed state", step);
            }
            check_invariants(&fake)?;
        }
        if by_reboot {
            fake.reboot();
        } else {
            delete_everything(&fake);
        }
        prop_assert_eq!(fake.host(), host());
        let (networks, endpoints, namespaces) = all(&fake);
        prop_assert!(networks.is_empty() && endpoints.is_empty() && namespaces.is_empty());
    }

    #[test]
    fn a_snapshot_read_back_is_the_same_fake(before in proptest::collection::vec(step(), 0..30), after in proptest::collection::vec(step(), 1..10)) {
        let fake = FakeHcn::new(host());
        for step in &before {
            run(&fake, step);
        }
        let json = serde_json::to_string(&fake.snapshot()).unwrap();
        let read: Snapshot = serde_json::from_str(&json).unwrap();
        prop_assert_eq!(&read, &fake.snapshot());
        let restored = FakeHcn::from_snapshot(read);
        prop_assert_eq!(snapshot(&restored), snapshot(&fake));
        for step in &after {
            prop_assert_eq!(run(&restored, step), run(&fake, step), "{:?}", step);
            prop_assert_eq!(snapshot(&restored), snapshot(&fake), "after {:?}", step);
        }
    }
}
