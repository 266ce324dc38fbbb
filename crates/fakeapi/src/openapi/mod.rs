//! OpenAPI documents of the served kinds: v3 (`/openapi/v3`, an index of one document per
//! group/version) and v2 (`/openapi/v2`, JSON only), with the paths, operations and
//! `x-kubernetes-group-version-kind` extensions kubectl reads, the `fieldValidation` query
//! parameter that tells kubectl to let the server validate, and the schemas that validation uses.

mod paths;
mod schemas;
pub mod validate;

use crate::resource::ResourceType;
use schemas::{Flavor, Schemas};
use serde_json::{Value, json};

/// The `/openapi/v3` index: one entry per served group/version with a schema.
pub fn v3_index(resources: &[ResourceType]) -> Value {
    let mut paths = serde_json::Map::new();
    for (group, version) in group_versions(resources) {
        let key = doc_key(&group, &version);
        let hash = fingerprint(&v3_document(resources, &group, &version).to_string());
        paths.insert(
            key.clone(),
            json!({"serverRelativeURL": format!("/openapi/v3/{key}?hash={hash}")}),
        );
    }
    json!({"paths": paths})
}

/// The OpenAPI v3 document of one group/version; `None` if no kind with a schema is served
/// there.
pub fn v3(resources: &[ResourceType], group: &str, version: &str) -> Option<Value> {
    group_versions(resources)
        .contains(&(group.to_owned(), version.to_owned()))
        .then(|| v3_document(resources, group, version))
}

fn v3_document(resources: &[ResourceType], group: &str, version: &str) -> Value {
    let mut schemas = Schemas::new(Flavor::V3);
    let mut paths = serde_json::Map::new();
    for resource in resources
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        if let Some(name) = schemas.add(resource) {
            paths::add(&mut paths, resource, &name, Flavor::V3);
        }
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes (fakeapi)", "version": crate::http::SERVER_VERSION},
        "paths": paths,
        "components": {"schemas": schemas.into_definitions()},
    })
}

/// The OpenAPI v2 (Swagger 2.0) document of every served kind with a schema.
pub fn v2(resources: &[ResourceType]) -> Value {
    let mut schemas = Schemas::new(Flavor::V2);
    let mut paths = serde_json::Map::new();
    for resource in resources {
        if let Some(name) = schemas.add(resource) {
            paths::add(&mut paths, resource, &name, Flavor::V2);
        }
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes (fakeapi)", "version": crate::http::SERVER_VERSION},
        "paths": paths,
        "definitions": schemas.into_definitions(),
    })
}

/// The schema name of `resource`'s kind and the named schemas it needs (v3 form), `None` for
/// a kind without a schema.
pub fn kind_schema(resource: &ResourceType) -> Option<(String, serde_json::Map<String, Value>)> {
    let mut schemas = Schemas::new(Flavor::V3);
    let name = schemas.add(resource)?;
    Some((name, schemas.into_definitions()))
}

/// Group/versions with at least one kind that has a schema, in first-served order.
fn group_versions(resources: &[ResourceType]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for resource in resources {
        let gv = (resource.group.clone(), resource.version.clone());
        if !out.contains(&gv) && kind_schema(resource).is_some() {
            out.push(gv);
        }
    }
    out
}

/// `api/v1` or `apis/<group>/<version>`.
fn doc_key(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// A stable fingerprint of a document (64-bit FNV-1a, hex), the index's cache key.
fn fingerprint(text: &str) -> String {
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016X}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_names_one_document_per_group_version() {
        let resources = ResourceType::builtin();
        let index = v3_index(&resources);
        let url = index["paths"]["api/v1"]["serverRelativeURL"]
            .as_str()
            .unwrap();
        assert!(url.starts_with("/openapi/v3/api/v1?hash="), "{url}");
        assert!(index["paths"]["apis/coordination.k8s.io/v1"].is_object());
        let custom = ResourceType::new("example.com", "v1", "widgets", "Widget", true, false);
        assert!(
            v3_index(std::slice::from_ref(&custom))["paths"]
                .as_object()
                .unwrap()
                .is_empty()
        );
        assert!(v3(&[custom], "example.com", "v1").is_none());
    }

    #[test]
    fn the_pod_schema_carries_its_kind_and_the_patch_operation_takes_field_validation() {
        let doc = v3(&ResourceType::builtin(), "", "v1").unwrap();
        let pod = &doc["components"]["schemas"]["io.k8s.api.core.v1.Pod"];
        assert_eq!(
            pod["x-kubernetes-group-version-kind"],
            json!([{"group": "", "version": "v1", "kind": "Pod"}])
        );
        assert!(
            doc["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
                .is_object()
        );
        let patch = &doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"];
        assert_eq!(patch["x-kubernetes-group-version-kind"]["kind"], "Pod");
        assert!(
            patch["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
        );
        let v2 = v2(&ResourceType::builtin());
        assert!(v2["definitions"]["io.k8s.api.core.v1.Pod"]["properties"]["spec"].is_object());
        assert!(
            v2.to_string()
                .contains("#/definitions/io.k8s.api.core.v1.PodSpec")
        );
        assert!(!v2.to_string().contains("#/components/"));
    }
}
