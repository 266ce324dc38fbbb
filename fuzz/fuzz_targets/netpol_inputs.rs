//! Kubernetes objects into the NetworkPolicy engine's inputs: JSON (one object or an array of
//! them) decoded by k8s-openapi by `kind` into Pods, Namespaces and NetworkPolicies, then
//! `netpol::PolicyEngine::upsert_pod` / `upsert_namespace` / `upsert_policy` (which run
//! `PodInfo::from_k8s`, `namespace_labels`, `CompiledPolicy::from_k8s`). The engine's Node is
//! the first Pod's `nodeName`, so the fuzzer can make Pods local. Never panics; the result
//! depends only on the objects, not on their order or on syncs in between: upserting them in
//! order with a sync after each gives the same snapshot as upserting them in reverse order.
#![no_main]

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use libfuzzer_sys::fuzz_target;
use netpol::PolicyEngine;
use serde_json::Value;

enum Input {
    Pod(Pod),
    Namespace(Namespace),
    Policy(NetworkPolicy),
}

impl Input {
    fn upsert(&self, engine: &mut PolicyEngine) -> bool {
        match self {
            Input::Pod(pod) => engine.upsert_pod(pod).is_ok(),
            Input::Namespace(ns) => engine.upsert_namespace(ns).is_ok(),
            Input::Policy(policy) => engine.upsert_policy(policy).is_ok(),
        }
    }
}

fn decode(value: Value) -> Option<(String, Input)> {
    let kind = value.get("kind")?.as_str()?.to_owned();
    let meta = value.get("metadata");
    let field = |name: &str| meta.and_then(|m| m.get(name)).and_then(Value::as_str);
    // The engine's key: a Pod or policy without a namespace is in `default`.
    let namespace = match kind.as_str() {
        "Namespace" => "",
        _ => field("namespace").unwrap_or("default"),
    };
    let key = format!("{kind}/{namespace}/{}", field("name").unwrap_or_default());
    let input = match kind.as_str() {
        "Pod" => Input::Pod(serde_json::from_value(value).ok()?),
        "Namespace" => Input::Namespace(serde_json::from_value(value).ok()?),
        "NetworkPolicy" => Input::Policy(serde_json::from_value(value).ok()?),
        _ => return None,
    };
    Some((key, input))
}

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let values = match json {
        Value::Array(items) => items,
        one => vec![one],
    };
    // One object per key: a later version of the same object would make order matter.
    let mut keys = BTreeSet::new();
    let inputs: Vec<Input> = values
        .into_iter()
        .filter_map(decode)
        .filter(|(key, _)| keys.insert(key.clone()))
        .map(|(_, input)| input)
        .collect();
    let node = inputs
        .iter()
        .find_map(|i| match i {
            Input::Pod(pod) => pod.spec.as_ref().and_then(|s| s.node_name.clone()),
            _ => None,
        })
        .unwrap_or_else(|| "fuzz-node".to_owned());
    let mut forward = PolicyEngine::new(node.clone());
    let accepted: Vec<bool> = inputs
        .iter()
        .map(|input| {
            let ok = input.upsert(&mut forward);
            forward.sync();
            ok
        })
        .collect();
    let mut reverse = PolicyEngine::new(node);
    for (input, ok) in inputs.iter().zip(&accepted).rev() {
        assert_eq!(
            input.upsert(&mut reverse),
            *ok,
            "acceptance depends on order"
        );
    }
    assert_eq!(
        forward.snapshot(),
        reverse.snapshot(),
        "the snapshot depends on order"
    );
});
