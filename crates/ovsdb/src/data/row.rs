//! A table row: column name → value, as written in `insert`/`update` and returned by `select`.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use super::{DataError, Uuid, Value};

/// A row (or a partial row: only some columns).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Row(pub BTreeMap<String, Value>);

impl Row {
    /// An empty row.
    pub fn new() -> Row {
        Row::default()
    }

    /// Adds a column (builder style).
    pub fn with(mut self, column: &str, value: impl Into<Value>) -> Row {
        self.0.insert(column.to_owned(), value.into());
        self
    }

    /// Sets a column.
    pub fn set(&mut self, column: &str, value: impl Into<Value>) {
        self.0.insert(column.to_owned(), value.into());
    }

    /// A column's value.
    pub fn get(&self, column: &str) -> Option<&Value> {
        self.0.get(column)
    }

    /// The row's `_uuid` column.
    pub fn uuid(&self) -> Option<Uuid> {
        self.get("_uuid").and_then(Value::as_uuid)
    }

    /// Reads a row from a JSON object.
    pub fn parse(json: &Json) -> Result<Row, DataError> {
        let Json::Object(columns) = json else {
            return Err(DataError::shape("row", json));
        };
        columns
            .iter()
            .map(|(k, v)| Ok((k.clone(), Value::parse(v)?)))
            .collect::<Result<_, _>>()
            .map(Row)
    }

    /// Writes the row as a JSON object.
    pub fn to_json(&self) -> Json {
        Json::Object(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn round_trips_and_finds_uuid() {
        let u = "36bfd2b6-5a2c-4b8f-9f3c-0123456789ab";
        let json = json!({"_uuid": ["uuid", u], "name": "br0", "ports": ["set", []]});
        let row = Row::parse(&json).unwrap();
        assert_eq!(row.uuid(), Some(u.parse().unwrap()));
        assert_eq!(row.get("name").and_then(Value::as_str), Some("br0"));
        assert_eq!(row.to_json(), json);
        assert!(Row::parse(&json!([])).is_err());
        assert!(Row::parse(&json!({"a": null})).is_err());
    }
}
