//! A cluster-directory file (YAML documents of Nodes, Pods, Namespaces, NetworkPolicies, or
//! Lists of them): `agent::cluster::decode_documents` on arbitrary text never panics, and the
//! objects it decodes, written back as one JSON `v1` List (JSON is YAML), decode to the same
//! objects.
#![no_main]

use agent::cluster::{ClusterObject, decode_documents};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = decode_documents(text) else {
        return;
    };
    let items: Vec<serde_json::Value> = file
        .objects
        .iter()
        .map(|object| match object {
            ClusterObject::Node(o) => serde_json::to_value(o.as_ref()),
            ClusterObject::Pod(o) => serde_json::to_value(o.as_ref()),
            ClusterObject::Namespace(o) => serde_json::to_value(o.as_ref()),
            ClusterObject::NetworkPolicy(o) => serde_json::to_value(o.as_ref()),
        })
        .collect::<Result<_, _>>()
        .expect("decoded objects encode");
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    let again = decode_documents(&list.to_string()).expect("the written List decodes");
    assert_eq!(
        again.objects, file.objects,
        "decode(write(objects)) != objects"
    );
});
