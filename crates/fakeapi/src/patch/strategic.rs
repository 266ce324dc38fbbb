//! Strategic merge patch, as kubectl sends it for `apply` and `edit`: maps merge as in a JSON
//! merge patch, the lists that upstream types mark with a patch merge key merge element by
//! element (`spec.containers` by `name`, `spec.ports` of a Service by `port`, …), a few
//! primitive lists merge as sets, and the directives `$patch` (`replace`, `delete`),
//! `$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` are applied.
//! Other lists are replaced whole. The merge keys are a table of the served kinds' fields
//! (upstream's `patchMergeKey` tags), matched by path.

use serde_json::{Map, Value};

/// List fields merged by a key: path (list elements as `*`) and the key.
const MERGE_KEYS: &[(&str, &str)] = &[
    ("metadata.ownerReferences", "uid"),
    ("spec.containers", "name"),
    ("spec.initContainers", "name"),
    ("spec.ephemeralContainers", "name"),
    ("spec.containers.*.ports", "containerPort"),
    ("spec.initContainers.*.ports", "containerPort"),
    ("spec.containers.*.env", "name"),
    ("spec.initContainers.*.env", "name"),
    ("spec.containers.*.volumeMounts", "mountPath"),
    ("spec.initContainers.*.volumeMounts", "mountPath"),
    ("spec.containers.*.volumeDevices", "devicePath"),
    ("spec.initContainers.*.volumeDevices", "devicePath"),
    ("spec.volumes", "name"),
    ("spec.imagePullSecrets", "name"),
    ("spec.hostAliases", "ip"),
    ("spec.ports", "port"),
    ("status.conditions", "type"),
    ("status.addresses", "type"),
    ("status.podIPs", "ip"),
];

/// Lists of strings merged as sets.
const SET_LISTS: &[&str] = &["metadata.finalizers", "spec.podCIDRs"];

/// Applies the strategic merge `patch` (an object) to `target`.
pub fn apply(target: &mut Value, patch: &Map<String, Value>) {
    merge_object(target, patch, "");
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn merge_key(path: &str) -> Option<&'static str> {
    MERGE_KEYS
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, key)| *key)
}

fn merge_object(target: &mut Value, patch: &Map<String, Value>, path: &str) {
    if patch.get("$patch").and_then(Value::as_str) == Some("replace") {
        *target = Value::Object(Map::new());
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(map) = target else { return };
    let mut orders = Vec::new();
    for (key, value) in patch {
        if key == "$patch" || key == "$retainKeys" {
            continue;
        }
        if let Some(list) = key.strip_prefix("$setElementOrder/") {
            orders.push((list.to_owned(), value));
            continue;
        }
        if let Some(list) = key.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(items)), Value::Array(gone)) = (map.get_mut(list), value) {
                items.retain(|item| !gone.contains(item));
            }
            continue;
        }
        let field_path = child(path, key);
        match value {
            Value::Null => {
                map.remove(key);
            }
            Value::Object(inner)
                if inner.get("$patch").and_then(Value::as_str) == Some("delete") =>
            {
                map.remove(key);
            }
            Value::Object(inner) => {
                merge_object(
                    map.entry(key.clone()).or_insert(Value::Null),
                    inner,
                    &field_path,
                );
            }
            Value::Array(items) => {
                let slot = map.entry(key.clone()).or_insert(Value::Null);
                merge_list(slot, items, &field_path);
            }
            scalar => {
                map.insert(key.clone(), scalar.clone());
            }
        }
    }
    for (list, order) in orders {
        if let (Some(Value::Array(items)), Value::Array(order)) = (map.get_mut(&list), order) {
            reorder(items, order, merge_key(&child(path, &list)));
        }
    }
    if let Some(Value::Array(keep)) = patch.get("$retainKeys") {
        map.retain(|key, _| keep.iter().any(|k| k.as_str() == Some(key)));
    }
}

fn merge_list(slot: &mut Value, patch: &[Value], path: &str) {
    let element_path = format!("{path}.*");
    if SET_LISTS.contains(&path) {
        let Value::Array(items) = slot else {
            *slot = Value::Array(patch.to_vec());
            return;
        };
        for value in patch {
            if !items.contains(value) {
                items.push(value.clone());
            }
        }
        return;
    }
    let Some(key) = merge_key(path) else {
        *slot = Value::Array(patch.iter().map(|v| fresh(v, &element_path)).collect());
        return;
    };
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    let Value::Array(items) = slot else { return };
    for element in patch {
        let Value::Object(fields) = element else {
            continue;
        };
        let id = fields.get(key);
        let found = items.iter().position(|item| item.get(key) == id);
        match (fields.get("$patch").and_then(Value::as_str), found) {
            (Some("delete"), Some(at)) => {
                items.remove(at);
            }
            (Some("delete"), None) => {}
            (Some("replace"), Some(at)) => items[at] = fresh(element, &element_path),
            (_, Some(at)) => merge_object(&mut items[at], fields, &element_path),
            (_, None) => items.push(fresh(element, &element_path)),
        }
    }
}

/// A patch value as a new value (its directives applied to nothing).
fn fresh(value: &Value, path: &str) -> Value {
    match value {
        Value::Object(fields) => {
            let mut out = Value::Null;
            merge_object(&mut out, fields, path);
            out
        }
        other => other.clone(),
    }
}

/// Puts the elements named in `order` first, in that order (by merge key, or by value).
fn reorder(items: &mut [Value], order: &[Value], key: Option<&str>) {
    let rank = |item: &Value| {
        order
            .iter()
            .position(|o| match key {
                Some(key) => o.get(key).is_some() && o.get(key) == item.get(key),
                None => o == item,
            })
            .unwrap_or(usize::MAX)
    };
    items.sort_by_key(|item| rank(item));
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    fn patched(mut target: Value, patch: Value) -> Value {
        super::apply(&mut target, patch.as_object().unwrap());
        target
    }

    #[test]
    fn kubectl_apply_changes_one_container_and_keeps_the_rest() {
        let pod = json!({"metadata": {"labels": {"a": "1"}}, "spec": {"containers": [
            {"name": "c", "image": "busybox", "ports": [{"containerPort": 80}]},
            {"name": "d", "image": "nginx"}]}});
        let patch = json!({"metadata": {"labels": {"b": "2"}}, "spec": {
            "$setElementOrder/containers": [{"name": "d"}, {"name": "c"}],
            "containers": [{"name": "c", "image": "busybox:2"}]}});
        assert_eq!(
            patched(pod, patch),
            json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"containers": [
                {"name": "d", "image": "nginx"},
                {"name": "c", "image": "busybox:2", "ports": [{"containerPort": 80}]}]}})
        );
    }

    #[test]
    fn directives_delete_replace_retain_and_primitive_lists() {
        let service = json!({"metadata": {"finalizers": ["a", "b"]},
            "spec": {"ports": [{"port": 80, "name": "http"}, {"port": 443}], "selector": {"x": "1", "y": "2"},
                     "strategy": {"type": "A", "a": 1}}});
        let patch = json!({"metadata": {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"]},
            "spec": {"ports": [{"port": 443, "$patch": "delete"}, {"port": 8080}],
                     "selector": {"$patch": "replace", "z": "3"},
                     "strategy": {"$retainKeys": ["type", "b"], "type": "B", "b": 2}}});
        assert_eq!(
            patched(service, patch),
            json!({"metadata": {"finalizers": ["b", "c"]},
                "spec": {"ports": [{"port": 80, "name": "http"}, {"port": 8080}], "selector": {"z": "3"},
                         "strategy": {"type": "B", "b": 2}}})
        );
    }

    #[test]
    fn lists_without_a_merge_key_are_replaced() {
        let policy = json!({"spec": {"ingress": [{"from": []}, {"ports": []}]}});
        let patch = json!({"spec": {"ingress": [{"ports": [{"port": 53}]}]}});
        assert_eq!(
            patched(policy, patch),
            json!({"spec": {"ingress": [{"ports": [{"port": 53}]}]}})
        );
    }
}
