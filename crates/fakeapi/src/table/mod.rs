//! Server-side printing: the `meta.k8s.io` Table a client gets instead of objects when it asks
//! for one in `Accept` (`application/json;as=Table;v=v1;g=meta.k8s.io`, as `kubectl get` does),
//! for lists, single objects and each watch event.

mod age;
mod columns;

use columns::Printer;
use serde_json::{Value, json};
use std::time::{SystemTime, UNIX_EPOCH};

/// What a Table row carries besides its cells (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RowObject {
    /// `None`: cells only.
    Nothing,
    /// `Metadata` (the default): a `PartialObjectMetadata`.
    #[default]
    Metadata,
    /// `Object`: the whole object.
    Object,
}

impl RowObject {
    /// The `includeObject` query value; `None` for an unknown one.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "None" => Some(Self::Nothing),
            "" | "Metadata" => Some(Self::Metadata),
            "Object" => Some(Self::Object),
            _ => None,
        }
    }
}

/// The Table version an `Accept` header asks for (`v1` or `v1beta1`), the first one offered.
pub fn requested(accept: &str) -> Option<&'static str> {
    accept.split(',').find_map(|media| {
        let mut parts = media.split(';').map(str::trim);
        if parts.next() != Some("application/json") {
            return None;
        }
        let (mut table, mut group, mut version) = (false, false, None);
        for param in parts {
            match param.split_once('=') {
                Some(("as", "Table")) => table = true,
                Some(("g", "meta.k8s.io")) => group = true,
                Some(("v", "v1")) => version = Some("v1"),
                Some(("v", "v1beta1")) => version = Some("v1beta1"),
                _ => {}
            }
        }
        version.filter(|_| table && group)
    })
}

/// How one kind's objects become Tables.
#[derive(Debug, Clone, Copy)]
pub struct TableFormat {
    printer: Printer,
    version: &'static str,
    row_object: RowObject,
}

impl TableFormat {
    /// Tables of `group`'s `kind` in meta.k8s.io `version`.
    pub fn new(group: &str, kind: &str, version: &'static str, row_object: RowObject) -> Self {
        Self {
            printer: Printer::of(group, kind),
            version,
            row_object,
        }
    }

    /// A Table of `objects`; `metadata` is the list's (resourceVersion, continue).
    pub fn table<'a>(
        &self,
        objects: impl IntoIterator<Item = &'a Value>,
        metadata: Value,
    ) -> Value {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let rows: Vec<Value> = objects.into_iter().map(|o| self.row(o, now)).collect();
        let columns: Vec<Value> = self
            .printer
            .columns()
            .iter()
            .map(columns::Column::definition)
            .collect();
        json!({
            "kind": "Table",
            "apiVersion": format!("meta.k8s.io/{}", self.version),
            "metadata": metadata,
            "columnDefinitions": columns,
            "rows": rows,
        })
    }

    fn row(&self, object: &Value, now: i64) -> Value {
        let mut row = json!({"cells": self.printer.cells(object, now)});
        match self.row_object {
            RowObject::Nothing => {}
            RowObject::Metadata => {
                row["object"] = json!({
                    "kind": "PartialObjectMetadata",
                    "apiVersion": format!("meta.k8s.io/{}", self.version),
                    "metadata": object.get("metadata").cloned().unwrap_or(Value::Null),
                });
            }
            RowObject::Object => row["object"] = object.clone(),
        }
        row
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_get_accept_header_asks_for_a_v1_table() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(requested(kubectl), Some("v1"));
        assert_eq!(
            requested("application/json;as=Table;v=v1beta1;g=meta.k8s.io"),
            Some("v1beta1")
        );
        assert_eq!(requested("application/json"), None);
        assert_eq!(requested("application/json;as=Table;v=v1"), None);
        assert_eq!(
            requested("application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"),
            None
        );
    }

    #[test]
    fn rows_carry_metadata_by_default_and_the_object_on_request() {
        let pod =
            json!({"kind": "Pod", "metadata": {"name": "p", "labels": {"a": "1"}}, "spec": {}});
        let table = TableFormat::new("", "Pod", "v1", RowObject::Metadata)
            .table([&pod], json!({"resourceVersion": "7"}));
        assert_eq!(table["kind"], "Table");
        assert_eq!(table["columnDefinitions"][0]["format"], "name");
        assert_eq!(table["columnDefinitions"].as_array().unwrap().len(), 9);
        assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(table["rows"][0]["object"]["metadata"]["labels"]["a"], "1");
        let table = TableFormat::new("", "Pod", "v1", RowObject::Object).table([&pod], json!({}));
        assert_eq!(table["rows"][0]["object"], pod);
        let table =
            TableFormat::new("", "ConfigMap", "v1", RowObject::Nothing).table([&pod], json!({}));
        assert!(table["rows"][0].get("object").is_none());
        assert_eq!(table["rows"][0]["cells"][0], "p");
        assert_eq!(table["columnDefinitions"][1]["name"], "Age");
    }
}
