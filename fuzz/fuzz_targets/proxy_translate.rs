//! Kubernetes objects into the proxy's input: JSON (one object or an array of them) decoded by
//! k8s-openapi by `kind` into Services and EndpointSlices, then
//! `agent::controller::incremental::Translations` (the Services this Node load-balances, with
//! their endpoints). The Node is the first slice endpoint's `nodeName`. Never panics; every
//! translated Service is one of the input Services, the result does not depend on the objects'
//! order, a second update with the same objects reports nothing changed, and the objects given
//! one at a time as changes (as the reflectors' watch events give them) translate to the same.
#![no_main]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use agent::controller::incremental::{ObjectChanges, Translations, key_of};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use libfuzzer_sys::fuzz_target;
use model::{Service as ModelService, ServiceKey};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let values = match json {
        Value::Array(items) => items,
        one => vec![one],
    };
    let mut services: Vec<Arc<Service>> = Vec::new();
    let mut slices: Vec<Arc<EndpointSlice>> = Vec::new();
    // One object per kind and key: a second version of the same object would make order matter.
    let mut keys = BTreeSet::new();
    for value in values {
        match value.get("kind").and_then(Value::as_str) {
            Some("Service") => {
                if let Ok(service) = serde_json::from_value::<Service>(value) {
                    let m = &service.metadata;
                    if keys.insert((
                        "Service",
                        m.namespace.clone().unwrap_or_default(),
                        m.name.clone().unwrap_or_default(),
                    )) {
                        services.push(Arc::new(service));
                    }
                }
            }
            Some("EndpointSlice") => {
                if let Ok(slice) = serde_json::from_value::<EndpointSlice>(value) {
                    let m = &slice.metadata;
                    if keys.insert((
                        "EndpointSlice",
                        m.namespace.clone().unwrap_or_default(),
                        m.name.clone().unwrap_or_default(),
                    )) {
                        slices.push(Arc::new(slice));
                    }
                }
            }
            _ => {}
        }
    }
    let node = slices
        .iter()
        .flat_map(|s| s.endpoints.iter())
        .find_map(|e| e.node_name.clone())
        .unwrap_or_else(|| "fuzz-node".to_owned());
    let translate = |services: &[Arc<Service>], slices: &[Arc<EndpointSlice>]| {
        let mut translations = Translations::new(&node);
        let (_, problems) = translations.update(services, slices);
        let wanted: BTreeMap<ServiceKey, ModelService> = translations
            .all_wanted()
            .map(|s| (s.key.clone(), s.clone()))
            .collect();
        let (again, _) = translations.update(services, slices);
        assert!(again.is_empty(), "the same objects changed {again:?}");
        (wanted, problems)
    };
    let translation = translate(&services, &slices);
    for key in translation.0.keys() {
        assert!(
            services.iter().any(|s| {
                s.metadata.name.as_deref() == Some(key.name.as_str())
                    && s.metadata.namespace.as_deref().unwrap_or_default() == key.namespace
            }),
            "translated {key} is not an input Service"
        );
    }
    let mut one_by_one = Translations::new(&node);
    for slice in &slices {
        let touched = vec![(key_of(&slice.metadata), Some(slice.clone()))];
        one_by_one.apply(
            ObjectChanges::Touched(Vec::new()),
            ObjectChanges::Touched(touched),
        );
    }
    for service in &services {
        let touched = vec![(key_of(&service.metadata), Some(service.clone()))];
        one_by_one.apply(
            ObjectChanges::Touched(touched),
            ObjectChanges::Touched(Vec::new()),
        );
    }
    let incremental: BTreeMap<ServiceKey, ModelService> = one_by_one
        .all_wanted()
        .map(|s| (s.key.clone(), s.clone()))
        .collect();
    assert_eq!(
        (&incremental, one_by_one.problems()),
        (&translation.0, &translation.1),
        "one object at a time differs from all at once"
    );
    services.reverse();
    slices.reverse();
    let reversed = translate(&services, &slices);
    assert_eq!(
        reversed, translation,
        "the translation depends on the objects' order"
    );
});
