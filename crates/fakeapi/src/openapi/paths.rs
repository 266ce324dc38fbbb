//! The `paths` of an OpenAPI document: per resource, its collection and object URLs with one
//! operation per verb, each tagged with `x-kubernetes-action` and
//! `x-kubernetes-group-version-kind`; the write operations take `fieldValidation`.

use super::schemas::Flavor;
use crate::resource::ResourceType;
use serde_json::{Map, Value, json};

/// Adds the paths of `resource`, whose kind's schema is named `schema`.
pub fn add(paths: &mut Map<String, Value>, resource: &ResourceType, schema: &str, flavor: Flavor) {
    let prefix = if resource.group.is_empty() {
        format!("/api/{}", resource.version)
    } else {
        format!("/apis/{}/{}", resource.group, resource.version)
    };
    let plural = &resource.plural;
    let operation = Operation {
        resource,
        schema,
        flavor,
    };
    let (collection, object) = if resource.namespaced {
        paths.insert(
            format!("{prefix}/{plural}"),
            json!({"get": operation.build("list", "listForAllNamespaces", &[])}),
        );
        (
            format!("{prefix}/namespaces/{{namespace}}/{plural}"),
            format!("{prefix}/namespaces/{{namespace}}/{plural}/{{name}}"),
        )
    } else {
        (
            format!("{prefix}/{plural}"),
            format!("{prefix}/{plural}/{{name}}"),
        )
    };
    let namespace: &[&str] = if resource.namespaced {
        &["namespace"]
    } else {
        &[]
    };
    let named: Vec<&str> = ["name"].iter().chain(namespace).copied().collect();
    paths.insert(
        collection,
        json!({
            "get": operation.build("list", "list", namespace),
            "post": operation.build("post", "create", namespace),
        }),
    );
    paths.insert(
        object,
        json!({
            "get": operation.build("get", "read", &named),
            "put": operation.build("put", "replace", &named),
            "patch": operation.build("patch", "patch", &named),
            "delete": operation.build("delete", "delete", &named),
        }),
    );
}

struct Operation<'a> {
    resource: &'a ResourceType,
    schema: &'a str,
    flavor: Flavor,
}

impl Operation<'_> {
    /// The operation of `action` (`list`, `post`, `get`, `put`, `patch`, `delete`) with the
    /// `path_params` of its URL.
    fn build(&self, action: &str, verb: &str, path_params: &[&str]) -> Value {
        let r = self.resource;
        let mut parameters: Vec<Value> = path_params
            .iter()
            .map(|name| self.parameter(name, "path"))
            .collect();
        if matches!(action, "post" | "put" | "patch") {
            for name in ["dryRun", "fieldManager", "fieldValidation"] {
                parameters.push(self.parameter(name, "query"));
            }
        }
        let reference = json!({"$ref": format!("{}{}", self.flavor.ref_prefix(), self.schema)});
        let listed = action == "list";
        let ok = if listed {
            json!({"type": "object"})
        } else {
            reference.clone()
        };
        let (responses, body) = match self.flavor {
            Flavor::V3 => (
                json!({"200": {"description": "OK", "content": {"application/json": {"schema": ok}}}}),
                json!({"content": {"application/json": {"schema": reference}}, "required": true}),
            ),
            Flavor::V2 => (
                json!({"200": {"description": "OK", "schema": ok}}),
                json!({"name": "body", "in": "body", "required": true, "schema": reference}),
            ),
        };
        let mut operation = json!({
            "operationId": format!("{verb}{}", r.kind),
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": {"group": r.group, "version": r.version, "kind": r.kind},
            "parameters": parameters,
            "responses": responses,
        });
        if matches!(action, "post" | "put") {
            match self.flavor {
                Flavor::V3 => operation["requestBody"] = body,
                Flavor::V2 => {
                    if let Some(list) = operation["parameters"].as_array_mut() {
                        list.push(body);
                    }
                }
            }
        }
        operation
    }

    fn parameter(&self, name: &str, place: &str) -> Value {
        let mut parameter = json!({"name": name, "in": place, "uniqueItems": true});
        if place == "path" {
            parameter["required"] = json!(true);
        }
        match self.flavor {
            Flavor::V3 => parameter["schema"] = json!({"type": "string"}),
            Flavor::V2 => parameter["type"] = json!("string"),
        }
        parameter
    }
}
