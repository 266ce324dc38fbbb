//! Object metadata the server owns: uid, creationTimestamp, resourceVersion, name/namespace.

use crate::error::StoreError;
use crate::resource::ResourceType;
use serde_json::{Map, Value};

/// `metadata` of `object` as a mutable map, created if missing.
pub fn metadata_mut(object: &mut Value) -> Result<&mut Map<String, Value>, StoreError> {
    let map = object
        .as_object_mut()
        .ok_or_else(|| StoreError::BadRequest("object must be a JSON object".into()))?;
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    meta.as_object_mut()
        .ok_or_else(|| StoreError::BadRequest("metadata must be a JSON object".into()))
}

/// A string field of `metadata` ("" when absent).
pub fn meta_str<'a>(object: &'a Value, field: &str) -> &'a str {
    object
        .get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// Fills `kind`/`apiVersion`, checks them against `resource`, and settles the namespace:
/// `namespace` is the one from the URL (`None` for cluster-wide paths).
pub fn normalize(
    resource: &ResourceType,
    object: &mut Value,
    namespace: Option<&str>,
) -> Result<(), StoreError> {
    let map = object
        .as_object_mut()
        .ok_or_else(|| StoreError::BadRequest("object must be a JSON object".into()))?;
    for (field, expected) in [
        ("kind", resource.kind.clone()),
        ("apiVersion", resource.api_version()),
    ] {
        match map.get(field).and_then(Value::as_str) {
            None | Some("") => {
                map.insert(field.into(), Value::String(expected));
            }
            Some(got) if got == expected => {}
            Some(got) => {
                return Err(StoreError::BadRequest(format!(
                    "{field} {got:?} does not match {expected:?}"
                )));
            }
        }
    }
    let meta = metadata_mut(object)?;
    if resource.namespaced {
        let body_ns = meta
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let ns = match (namespace, body_ns.as_str()) {
            (Some(url), "") => url.to_owned(),
            (Some(url), body) if url != body => {
                return Err(StoreError::BadRequest(format!(
                    "the namespace of the object ({body}) does not match the namespace of the request ({url})"
                )));
            }
            (_, "") => "default".to_owned(),
            (_, body) => body.to_owned(),
        };
        meta.insert("namespace".into(), Value::String(ns));
    } else {
        meta.remove("namespace");
    }
    Ok(())
}

/// The current time in the Kubernetes `Time` format.
pub fn now() -> Value {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(0));
    let timestamp = k8s_openapi::jiff::Timestamp::from_second(seconds).unwrap_or_default();
    let time = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(timestamp);
    serde_json::to_value(time).unwrap_or(Value::Null)
}
