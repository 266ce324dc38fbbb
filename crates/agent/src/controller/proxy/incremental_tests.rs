//! Tests of [`super::incremental::Translations`] fed change by change: after any sequence of
//! Services and EndpointSlices added, modified and deleted, synced by their keys or re-listed
//! whole, the translations equal a fresh translation of the stores (worked out here from
//! [`super::translate`]'s functions alone), and one changed object translates one Service.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service as ApiService;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use model::{Service, ServiceKey};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::incremental::{ObjectChanges, Translations, key_of};
use super::problems::problem_id;
use super::translate::{Problem, SliceEndpoints, Translated, service_of, slice_endpoints};
use crate::cluster::ObjectKey;

const NODE: &str = "n1";
const NAMESPACE: &str = "default";

fn service_object(name: &str, spec: Value, version: u64) -> Arc<ApiService> {
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {"namespace": NAMESPACE, "name": name,
                         "resourceVersion": version.to_string()},
            "spec": spec,
        }))
        .expect("a Service"),
    )
}

fn slice_object(
    name: &str,
    service: &str,
    ports: Value,
    endpoints: Value,
    version: u64,
) -> Arc<EndpointSlice> {
    Arc::new(
        serde_json::from_value(json!({
            "metadata": {
                "namespace": NAMESPACE, "name": name, "resourceVersion": version.to_string(),
                "labels": {"kubernetes.io/service-name": service},
            },
            "addressType": "IPv4",
            "ports": ports,
            "endpoints": endpoints,
        }))
        .expect("an EndpointSlice"),
    )
}

/// The `variant`th kind of Service spec: load-balanced ones, skipped ones, bad ones.
fn service_spec(index: usize, variant: u8) -> Value {
    let ip = format!("10.96.0.{}", 10 + index);
    match variant % 6 {
        0 => json!({"clusterIP": ip, "ports": [
            {"name": "http", "port": 80}, {"name": "dns", "port": 53, "protocol": "UDP"}]}),
        1 => json!({"clusterIP": ip, "ports": [{"name": "http", "port": 8080}],
                    "type": "LoadBalancer", "externalTrafficPolicy": "Local",
                    "healthCheckNodePort": 32000 + index}),
        2 => json!({"clusterIP": "None", "ports": [{"name": "http", "port": 80}]}),
        3 => json!({"clusterIP": ip}),
        4 => json!({"clusterIP": ip, "ports": [{"name": "http", "port": 80}],
                    "sessionAffinity": "ClientIP"}),
        _ => json!({"clusterIP": "10.96.0.300", "ports": [{"port": 80}]}),
    }
}

/// The `variant`th kind of slice ports.
fn slice_ports(variant: u8) -> Value {
    match variant % 4 {
        0 => json!([{"name": "http", "port": 8080}]),
        1 => json!([
            {"name": "http", "port": 8080},
            {"name": "dns", "port": 5353, "protocol": "UDP"},
        ]),
        2 => json!([{"name": "http", "port": 0}]),
        _ => json!([{"name": "other", "port": 9090}]),
    }
}

/// Endpoints from (last address byte, ready, on this Node) triples; byte 0 is not an address.
fn slice_endpoints_json(endpoints: &[(u8, bool, bool)]) -> Value {
    Value::Array(
        endpoints
            .iter()
            .map(|(last, ready, local)| {
                let address = if *last == 0 {
                    "not-an-ip".to_owned()
                } else {
                    format!("10.244.1.{last}")
                };
                json!({"addresses": [address], "conditions": {"ready": ready},
                       "nodeName": if *local { NODE } else { "n2" }})
            })
            .collect(),
    )
}

/// The API server's stores, as a test changes them.
#[derive(Debug, Default)]
struct Stores {
    services: BTreeMap<ObjectKey, Arc<ApiService>>,
    slices: BTreeMap<ObjectKey, Arc<EndpointSlice>>,
    /// The last resourceVersion given.
    version: u64,
}

impl Stores {
    fn next_version(&mut self) -> u64 {
        self.version += 1;
        self.version
    }
}

/// A fresh translation of `stores`: each Service with the slices naming it, each slice parsed,
/// the slices of a missing Service problems.
fn fresh(stores: &Stores) -> (BTreeMap<ServiceKey, Service>, BTreeMap<String, Problem>) {
    let mut wanted = BTreeMap::new();
    let mut problems = BTreeMap::new();
    let mut note = |problem: Problem| {
        problems.insert(problem_id(problem.kind, &problem.object), problem);
    };
    let parsed: Vec<SliceEndpoints> = stores
        .slices
        .values()
        .filter_map(|slice| match slice_endpoints(slice) {
            Ok(found) => found,
            Err(problem) => {
                note(problem);
                None
            }
        })
        .collect();
    for service in stores.services.values() {
        let key = ServiceKey::new(NAMESPACE, service.metadata.name.clone().unwrap_or_default());
        let own: Vec<&SliceEndpoints> = parsed.iter().filter(|s| s.service == key).collect();
        match service_of(service, &own, NODE) {
            Ok(Translated::Service(model)) => {
                wanted.insert(key, model);
            }
            Ok(Translated::Skipped(_)) => {}
            Err(problem) => note(problem),
        }
    }
    for found in &parsed {
        let service = ObjectKey::new(&found.service.namespace, &found.service.name);
        if !stores.services.contains_key(&service) {
            note(Problem {
                kind: "EndpointSlice",
                object: found.slice.clone(),
                reason: format!("its Service {} does not exist", found.service),
            });
        }
    }
    (wanted, problems)
}

/// One step of a test.
#[derive(Debug, Clone)]
enum Step {
    /// Service `index` created or replaced with spec `variant`.
    PutService {
        index: usize,
        variant: u8,
    },
    DeleteService {
        index: usize,
    },
    /// Slice `index` created or replaced, naming Service `service`.
    PutSlice {
        index: usize,
        service: usize,
        ports: u8,
        endpoints: Vec<(u8, bool, bool)>,
    },
    DeleteSlice {
        index: usize,
    },
    /// The translations brought to the stores by the keys changed since the last sync, plus
    /// the unchanged slice `spurious` (a key repeated by the journal).
    Sync {
        spurious: usize,
    },
    /// The translations brought to the whole stores, as new objects of the same versions.
    Relist,
}

const SERVICES: usize = 5;
const SLICES: usize = 8;

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => (0..SERVICES, any::<u8>())
            .prop_map(|(index, variant)| Step::PutService { index, variant }),
        1 => (0..SERVICES).prop_map(|index| Step::DeleteService { index }),
        4 => (
            0..SLICES,
            0..SERVICES + 1,
            any::<u8>(),
            proptest::collection::vec((0u8..6, any::<bool>(), any::<bool>()), 0..4),
        )
            .prop_map(|(index, service, ports, endpoints)| Step::PutSlice {
                index,
                service,
                ports,
                endpoints,
            }),
        1 => (0..SLICES).prop_map(|index| Step::DeleteSlice { index }),
        3 => (0..SLICES).prop_map(|spurious| Step::Sync { spurious }),
        1 => Just(Step::Relist),
    ]
}

/// The touched keys of one kind with their objects now.
fn touched<K>(keys: &BTreeSet<ObjectKey>, store: &BTreeMap<ObjectKey, Arc<K>>) -> ObjectChanges<K> {
    ObjectChanges::Touched(
        keys.iter()
            .map(|key| (key.clone(), store.get(key).cloned()))
            .collect(),
    )
}

fn wanted_of(translations: &Translations) -> BTreeMap<ServiceKey, Service> {
    translations
        .all_wanted()
        .map(|s| (s.key.clone(), s.clone()))
        .collect()
}

/// The whole of `objects` as new `Arc`s of the same versions (what a re-list stores).
fn relisted<K: Clone>(objects: &BTreeMap<ObjectKey, Arc<K>>) -> ObjectChanges<K> {
    ObjectChanges::Whole(objects.values().map(|o| Arc::new((**o).clone())).collect())
}

/// Runs `steps`, checking the translations against a fresh one after each sync.
fn check(steps: &[Step]) -> Result<(), TestCaseError> {
    let mut stores = Stores::default();
    let mut translations = Translations::new(NODE);
    let (mut services_touched, mut slices_touched) = (BTreeSet::new(), BTreeSet::new());
    for step in steps {
        let before = wanted_of(&translations);
        let changed = match step {
            Step::PutService { index, variant } => {
                let key = ObjectKey::new(NAMESPACE, format!("s{index}"));
                let version = stores.next_version();
                let object = service_object(&key.name, service_spec(*index, *variant), version);
                stores.services.insert(key.clone(), object);
                services_touched.insert(key);
                continue;
            }
            Step::DeleteService { index } => {
                let key = ObjectKey::new(NAMESPACE, format!("s{index}"));
                stores.services.remove(&key);
                services_touched.insert(key);
                continue;
            }
            Step::PutSlice {
                index,
                service,
                ports,
                endpoints,
            } => {
                let key = ObjectKey::new(NAMESPACE, format!("e{index}"));
                let version = stores.next_version();
                let object = slice_object(
                    &key.name,
                    &format!("s{service}"),
                    slice_ports(*ports),
                    slice_endpoints_json(endpoints),
                    version,
                );
                stores.slices.insert(key.clone(), object);
                slices_touched.insert(key);
                continue;
            }
            Step::DeleteSlice { index } => {
                let key = ObjectKey::new(NAMESPACE, format!("e{index}"));
                stores.slices.remove(&key);
                slices_touched.insert(key);
                continue;
            }
            Step::Sync { spurious } => {
                slices_touched.insert(ObjectKey::new(NAMESPACE, format!("e{spurious}")));
                translations.apply(
                    touched(&services_touched, &stores.services),
                    touched(&slices_touched, &stores.slices),
                )
            }
            Step::Relist => {
                translations.apply(relisted(&stores.services), relisted(&stores.slices))
            }
        };
        services_touched.clear();
        slices_touched.clear();
        let (wanted, problems) = fresh(&stores);
        let now = wanted_of(&translations);
        prop_assert_eq!(&now, &wanted, "the Services to install");
        prop_assert_eq!(translations.problems(), &problems, "the problems");
        let differing: BTreeSet<&ServiceKey> = before
            .keys()
            .chain(now.keys())
            .filter(|key| before.get(key) != now.get(key))
            .collect();
        for key in differing {
            prop_assert!(changed.contains(key), "{} changed, not reported", key);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn after_any_changes_the_translations_equal_a_fresh_translation(
        steps in proptest::collection::vec(step(), 1..40)
    ) {
        check(&steps)?;
    }
}

/// `count` Services of one port, each with one slice of 10 endpoints.
fn many(count: usize) -> Stores {
    let mut stores = Stores::default();
    for i in 0..count {
        let name = format!("s{i}");
        let version = stores.next_version();
        let spec = json!({"clusterIP": format!("10.96.{}.{}", i / 250, 1 + i % 250),
                          "ports": [{"name": "http", "port": 80}]});
        stores.services.insert(
            ObjectKey::new(NAMESPACE, &name),
            service_object(&name, spec, version),
        );
        let endpoints: Vec<(u8, bool, bool)> = (1..=10).map(|e| (e, true, e == 1)).collect();
        let version = stores.next_version();
        stores.slices.insert(
            ObjectKey::new(NAMESPACE, format!("{name}-a")),
            slice_object(
                &format!("{name}-a"),
                &name,
                slice_ports(0),
                slice_endpoints_json(&endpoints),
                version,
            ),
        );
    }
    stores
}

#[test]
fn one_changed_slice_translates_exactly_its_service_and_a_relist_of_the_same_versions_none() {
    let mut stores = many(1_000);
    let mut translations = Translations::new(NODE);
    let all = translations.apply(relisted(&stores.services), relisted(&stores.slices));
    assert_eq!((all.len(), translations.translated()), (1_000, 1_000));

    // One endpoint of s7's slice replaced: s7 alone is translated again.
    let endpoints: Vec<(u8, bool, bool)> = (2..=11).map(|e| (e, true, false)).collect();
    let version = stores.next_version();
    let slice = slice_object(
        "s7-a",
        "s7",
        slice_ports(0),
        slice_endpoints_json(&endpoints),
        version,
    );
    let key = key_of(&slice.metadata);
    stores.slices.insert(key.clone(), slice.clone());
    let changed = translations.apply(
        ObjectChanges::Touched(Vec::new()),
        ObjectChanges::Touched(vec![(key.clone(), Some(slice))]),
    );
    assert_eq!(changed, [ServiceKey::new(NAMESPACE, "s7")].into());
    assert_eq!(translations.translated(), 1_001, "one Service translated");
    let s7 = translations
        .wanted(&ServiceKey::new(NAMESPACE, "s7"))
        .expect("s7 installed");
    assert_eq!(s7.ports[0].endpoints.len(), 10);
    assert_eq!(
        s7.ports[0].endpoints[9].ip,
        std::net::Ipv4Addr::new(10, 244, 1, 11)
    );

    // The same versions listed again (new objects): nothing translated.
    let changed = translations.apply(relisted(&stores.services), relisted(&stores.slices));
    assert!(changed.is_empty(), "{changed:?}");
    assert_eq!(translations.translated(), 1_001);

    // A key the journal repeats, its object unchanged: nothing translated.
    let same = stores.slices[&key].clone();
    let changed = translations.apply(
        ObjectChanges::Touched(Vec::new()),
        ObjectChanges::Touched(vec![(key, Some(same))]),
    );
    assert!(changed.is_empty(), "{changed:?}");
    assert_eq!(translations.translated(), 1_001);

    // s8's slice moved to s9: both translated again, s8 left without endpoints.
    let version = stores.next_version();
    let moved = slice_object(
        "s8-a",
        "s9",
        slice_ports(0),
        slice_endpoints_json(&endpoints),
        version,
    );
    let changed = translations.apply(
        ObjectChanges::Touched(Vec::new()),
        ObjectChanges::Touched(vec![(key_of(&moved.metadata), Some(moved))]),
    );
    let (s8, s9) = (
        ServiceKey::new(NAMESPACE, "s8"),
        ServiceKey::new(NAMESPACE, "s9"),
    );
    assert_eq!(changed, [s8.clone(), s9.clone()].into());
    assert_eq!(translations.translated(), 1_003);
    assert!(
        translations.wanted(&s8).expect("s8").ports[0]
            .endpoints
            .is_empty()
    );
    // 10.244.1.1-10 and 10.244.1.2-11: each address once.
    assert_eq!(
        translations.wanted(&s9).expect("s9").ports[0]
            .endpoints
            .len(),
        11
    );
}
