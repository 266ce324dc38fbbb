//! One Service's reconciliation, under the store lock: the managed slices it has are compared
//! with the ones it should have, and only the differences are written (create, update, delete),
//! so a recompute that changes nothing leaves every resourceVersion as it was. Slices without
//! the controller's managed-by label are never read, changed or deleted.

use super::Kinds;
use super::desired::{self, MANAGED_BY, MANAGED_BY_LABEL, SERVICE_NAME_LABEL};
use crate::selector::ObjectFilter;
use crate::store::{Store, UpdateScope};
use k8s_openapi::api::core::v1::{Pod, Service};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The fields of a slice the controller owns; everything else a client added is kept.
const OWNED: [&str; 5] = [
    "/metadata/labels",
    "/metadata/ownerReferences",
    "/addressType",
    "/endpoints",
    "/ports",
];

/// A Service by namespace and name.
pub type ServiceKey = (String, String);

/// Brings the managed slices of Service `key` in line with its Pods (or deletes them if the
/// Service is gone). A malformed Service is logged and left alone with its slices.
pub fn service(store: &mut Store, kinds: &Kinds, key: &ServiceKey) {
    let (namespace, name) = key;
    let existing = managed_slices(store, kinds, key);
    let wanted = match store.get(&kinds.services, namespace, name) {
        None => Vec::new(),
        Some(object) => match desired_slices(store, kinds, &object) {
            Ok(Some(wanted)) => wanted,
            Ok(None) => return,
            Err(reason) => {
                tracing::warn!(service = %format!("{namespace}/{name}"), %reason,
                    "EndpointSlice controller skips a malformed Service");
                return;
            }
        },
    };
    let mut existing: BTreeMap<String, Arc<Value>> = existing
        .into_iter()
        .map(|slice| (meta_name(&slice).to_owned(), slice))
        .collect();
    for slice in wanted {
        let slice_name = meta_name(&slice).to_owned();
        let result = match existing.remove(&slice_name) {
            Some(stored) if OWNED.iter().all(|p| stored.pointer(p) == slice.pointer(p)) => Ok(()),
            Some(_) => store
                .modify(
                    &kinds.slices,
                    namespace,
                    &slice_name,
                    UpdateScope::Main,
                    |stored| {
                        let mut updated = stored.clone();
                        take_owned(&mut updated, &slice);
                        Ok(updated)
                    },
                )
                .map(drop),
            None => store
                .create(&kinds.slices, Some(namespace), slice)
                .map(drop),
        };
        if let Err(e) = result {
            tracing::warn!(slice = %format!("{namespace}/{slice_name}"), error = %e,
                "EndpointSlice controller could not write a slice");
        }
    }
    for stale in existing.keys() {
        if let Err(e) = store.delete(&kinds.slices, namespace, stale, None) {
            tracing::warn!(slice = %format!("{namespace}/{stale}"), error = %e,
                "EndpointSlice controller could not delete a slice");
        }
    }
}

/// The slices the stored Service `object` should have as JSON; `Ok(None)` for a Service the
/// controller leaves alone. Pods that cannot be read are logged and left out.
fn desired_slices(
    store: &Store,
    kinds: &Kinds,
    object: &Value,
) -> Result<Option<Vec<Value>>, String> {
    let service: Service = serde_json::from_value(object.clone()).map_err(|e| e.to_string())?;
    let Some(selector) = desired::selector(&service)? else {
        return Ok(None);
    };
    let namespace = service.metadata.namespace.clone().unwrap_or_default();
    let mut endpoints = Vec::new();
    for pod in in_namespace(store, &kinds.pods, &namespace)
        .iter()
        .filter(|pod| desired::labels_match(selector, pod))
    {
        let parsed = serde_json::from_value::<Pod>(pod.as_ref().clone())
            .map_err(|e| e.to_string())
            .and_then(|pod| desired::endpoint(&service, &pod));
        match parsed {
            Ok(Some(endpoint)) => endpoints.push(endpoint),
            Ok(None) => {}
            Err(reason) => tracing::warn!(
                pod = %format!("{namespace}/{}", meta_name(pod)),
                service = %format!("{namespace}/{}", meta_name(object)),
                %reason,
                "EndpointSlice controller skips a malformed Pod"
            ),
        }
    }
    desired::slices(&service, endpoints)
        .iter()
        .map(|slice| serde_json::to_value(slice).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()
        .map(Some)
}

/// The slices in the Service's namespace that this controller manages for it.
fn managed_slices(store: &Store, kinds: &Kinds, (namespace, name): &ServiceKey) -> Vec<Arc<Value>> {
    in_namespace(store, &kinds.slices, namespace)
        .into_iter()
        .filter(|slice| managed_for(slice).is_some_and(|service| service == name))
        .collect()
}

/// The Service a slice is managed for, if it carries this controller's managed-by label.
pub fn managed_for(slice: &Value) -> Option<&str> {
    let labels = slice.pointer("/metadata/labels")?;
    if labels.get(MANAGED_BY_LABEL).and_then(Value::as_str) != Some(MANAGED_BY) {
        return None;
    }
    labels.get(SERVICE_NAME_LABEL).and_then(Value::as_str)
}

/// Every stored object of `resource` in `namespace`.
pub fn in_namespace(
    store: &Store,
    resource: &crate::resource::ResourceType,
    namespace: &str,
) -> Vec<Arc<Value>> {
    let filter = ObjectFilter {
        namespace: Some(namespace.to_owned()),
        ..ObjectFilter::default()
    };
    store
        .list(resource, &filter, 0, None)
        .map(|page| page.items)
        .unwrap_or_default()
}

/// Copies the controller-owned fields of `wanted` onto `slice`.
fn take_owned(slice: &mut Value, wanted: &Value) {
    let (Some(slice), Some(wanted)) = (slice.as_object_mut(), wanted.as_object()) else {
        return;
    };
    for field in ["addressType", "endpoints", "ports"] {
        match wanted.get(field) {
            Some(value) => slice.insert(field.into(), value.clone()),
            None => slice.remove(field),
        };
    }
    let wanted_meta = wanted.get("metadata");
    if let Some(meta) = slice.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in ["labels", "ownerReferences"] {
            match wanted_meta.and_then(|m| m.get(field)) {
                Some(value) => meta.insert(field.into(), value.clone()),
                None => meta.remove(field),
            };
        }
    }
}

fn meta_name(object: &Value) -> &str {
    crate::store::meta::meta_str(object, "name")
}
