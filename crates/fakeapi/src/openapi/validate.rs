//! Field validation (`fieldValidation=Strict|Warn|Ignore` on create, update and patch): the
//! fields of an object that its kind's schema does not know, named by path as the apiserver
//! names them (`spec.containers[0].foo`).

use serde_json::{Map, Value};

/// What the server does with unknown fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Drop nothing, say nothing (also when the parameter is absent).
    #[default]
    Ignore,
    /// Accept the object and warn (HTTP `Warning` header) about each unknown field.
    Warn,
    /// Reject the object (400) naming every unknown field.
    Strict,
}

impl FieldValidation {
    /// The `fieldValidation` query value; `None` for an unknown one.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "" | "Ignore" => Some(Self::Ignore),
            "Warn" => Some(Self::Warn),
            "Strict" => Some(Self::Strict),
            _ => None,
        }
    }
}

/// The paths of the fields in `object` that the schema `root` (a name in `definitions`) does
/// not declare, in document order.
pub fn unknown_fields(object: &Value, root: &str, definitions: &Map<String, Value>) -> Vec<String> {
    let mut found = Vec::new();
    let schema = Value::String(root.to_owned());
    Walk {
        definitions,
        found: &mut found,
    }
    .named(object, &schema, "");
    found
}

struct Walk<'a> {
    definitions: &'a Map<String, Value>,
    found: &'a mut Vec<String>,
}

impl Walk<'_> {
    /// `name` is a JSON string naming a definition.
    fn named(&mut self, value: &Value, name: &Value, path: &str) {
        if let Some(schema) = name.as_str().and_then(|n| self.definitions.get(n)) {
            self.schema(value, schema, path);
        }
    }

    fn schema(&mut self, value: &Value, schema: &Value, path: &str) {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap_or(reference);
            self.named(value, &Value::String(name.to_owned()), path);
        }
        for part in schema
            .get("allOf")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.schema(value, part, path);
        }
        match value {
            Value::Object(fields) => {
                if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                    for (key, field) in fields {
                        let field_path = join(path, key);
                        match properties.get(key) {
                            Some(property) => self.schema(field, property, &field_path),
                            None => self.found.push(field_path),
                        }
                    }
                } else if let Some(values) = schema.get("additionalProperties") {
                    for (key, field) in fields {
                        self.schema(field, values, &format!("{path}[{key}]"));
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        self.schema(item, item_schema, &format!("{path}[{i}]"));
                    }
                }
            }
            _ => {}
        }
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::ResourceType;
    use serde_json::json;

    fn pod_unknown_fields(pod: &Value) -> Vec<String> {
        let pods = ResourceType::new("", "v1", "pods", "Pod", true, true);
        let (root, definitions) = super::super::kind_schema(&pods).unwrap();
        unknown_fields(pod, &root, &definitions)
    }

    #[test]
    fn a_valid_pod_has_no_unknown_fields() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"app": "web"}, "creationTimestamp": null},
            "spec": {"containers": [{"name": "c", "image": "busybox", "ports": [{"containerPort": 80}],
                "resources": {"limits": {"cpu": "1"}}}]},
            "status": {"phase": "Running", "podIP": "10.0.0.1"}});
        assert_eq!(pod_unknown_fields(&pod), Vec::<String>::new());
    }

    #[test]
    fn unknown_fields_are_named_by_path() {
        let pod = json!({"kind": "Pod", "color": "red",
            "metadata": {"name": "p", "nmae": "x"},
            "spec": {"containers": [{"name": "c"}, {"name": "d", "imagee": "busybox"}]}});
        assert_eq!(
            pod_unknown_fields(&pod),
            ["color", "metadata.nmae", "spec.containers[1].imagee"]
        );
    }

    #[test]
    fn the_query_values() {
        assert_eq!(
            FieldValidation::parse("Strict"),
            Some(FieldValidation::Strict)
        );
        assert_eq!(FieldValidation::parse("Warn"), Some(FieldValidation::Warn));
        assert_eq!(FieldValidation::parse(""), Some(FieldValidation::Ignore));
        assert_eq!(FieldValidation::parse("strict"), None);
    }
}
