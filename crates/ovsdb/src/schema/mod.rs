//! Database schemas as returned by `get_schema` (RFC 7047 §3.2), parsed into typed form.

mod column_type;

use std::collections::BTreeMap;

use serde_json::Value as Json;

pub use column_type::{AtomicType, BaseType, ColumnType, RefType};

use crate::data::abbreviate;

/// Why a schema document cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid schema at {path}: {reason}")]
pub struct SchemaError {
    /// Where in the schema (`tables.Bridge.columns.name.type`).
    pub path: String,
    /// What is wrong, with the offending JSON.
    pub reason: String,
}

impl SchemaError {
    pub(crate) fn new(path: &str, reason: &str, json: &Json) -> SchemaError {
        SchemaError {
            path: path.to_owned(),
            reason: format!("{reason}: {}", abbreviate(json)),
        }
    }
}

/// A whole database schema.
#[derive(Debug, Clone, PartialEq)]
pub struct DatabaseSchema {
    /// Database name (`Open_vSwitch`).
    pub name: String,
    /// Schema version (`8.3.1`).
    pub version: String,
    /// Optional checksum.
    pub cksum: Option<String>,
    /// Tables by name.
    pub tables: BTreeMap<String, TableSchema>,
}

/// One table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableSchema {
    /// Columns by name (without the implicit `_uuid` and `_version`).
    pub columns: BTreeMap<String, ColumnSchema>,
    /// Row limit, if any.
    pub max_rows: Option<u64>,
    /// Root tables keep unreferenced rows; other tables garbage-collect them.
    pub is_root: bool,
    /// Sets of columns whose values must be unique together.
    pub indexes: Vec<Vec<String>>,
}

/// One column.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnSchema {
    /// The column's type.
    pub column_type: ColumnType,
    /// Not persisted across server restarts.
    pub ephemeral: bool,
    /// Can be changed after insertion.
    pub mutable: bool,
}

impl DatabaseSchema {
    /// Parses a `get_schema` result.
    pub fn parse(json: &Json) -> Result<DatabaseSchema, SchemaError> {
        let obj = json
            .as_object()
            .ok_or_else(|| SchemaError::new("", "schema is not an object", json))?;
        let string = |key: &str| obj.get(key).and_then(Json::as_str).map(str::to_owned);
        let name = string("name")
            .ok_or_else(|| SchemaError::new("name", "missing or not a string", json))?;
        let version = string("version").unwrap_or_default();
        let tables_json = obj
            .get("tables")
            .and_then(Json::as_object)
            .ok_or_else(|| SchemaError::new("tables", "missing or not an object", json))?;
        let tables = tables_json
            .iter()
            .map(|(t, tj)| Ok((t.clone(), TableSchema::parse(&format!("tables.{t}"), tj)?)))
            .collect::<Result<_, SchemaError>>()?;
        Ok(DatabaseSchema {
            name,
            version,
            cksum: string("cksum"),
            tables,
        })
    }

    /// A table by name.
    pub fn table(&self, name: &str) -> Option<&TableSchema> {
        self.tables.get(name)
    }
}

impl TableSchema {
    fn parse(path: &str, json: &Json) -> Result<TableSchema, SchemaError> {
        let obj = json
            .as_object()
            .ok_or_else(|| SchemaError::new(path, "table is not an object", json))?;
        let cols = obj
            .get("columns")
            .and_then(Json::as_object)
            .ok_or_else(|| SchemaError::new(path, "columns missing or not an object", json))?;
        let columns = cols
            .iter()
            .map(|(c, cj)| {
                Ok((
                    c.clone(),
                    ColumnSchema::parse(&format!("{path}.columns.{c}"), cj)?,
                ))
            })
            .collect::<Result<_, SchemaError>>()?;
        let max_rows = match obj.get("maxRows") {
            None => None,
            Some(m) => Some(
                m.as_u64()
                    .ok_or_else(|| SchemaError::new(path, "maxRows is not a count", m))?,
            ),
        };
        let is_root = obj.get("isRoot").and_then(Json::as_bool).unwrap_or(false);
        let indexes = match obj.get("indexes") {
            None => Vec::new(),
            Some(ix) => ix
                .as_array()
                .and_then(|sets| {
                    sets.iter()
                        .map(|set| {
                            set.as_array()?
                                .iter()
                                .map(|c| c.as_str().map(str::to_owned))
                                .collect()
                        })
                        .collect::<Option<Vec<Vec<String>>>>()
                })
                .ok_or_else(|| {
                    SchemaError::new(path, "indexes is not a list of column lists", ix)
                })?,
        };
        Ok(TableSchema {
            columns,
            max_rows,
            is_root,
            indexes,
        })
    }
}

impl ColumnSchema {
    fn parse(path: &str, json: &Json) -> Result<ColumnSchema, SchemaError> {
        let obj = json
            .as_object()
            .ok_or_else(|| SchemaError::new(path, "column is not an object", json))?;
        let type_json = obj
            .get("type")
            .ok_or_else(|| SchemaError::new(path, "column without type", json))?;
        Ok(ColumnSchema {
            column_type: ColumnType::parse(&format!("{path}.type"), type_json)?,
            ephemeral: obj
                .get("ephemeral")
                .and_then(Json::as_bool)
                .unwrap_or(false),
            mutable: obj.get("mutable").and_then(Json::as_bool).unwrap_or(true),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_tables_columns_and_indexes() {
        let schema = DatabaseSchema::parse(&json!({
            "name": "db", "version": "1.2.3",
            "tables": {
                "T": {
                    "columns": {
                        "name": {"type": "string", "mutable": false},
                        "refs": {"type": {"key": {"type": "uuid", "refTable": "U", "refType": "weak"}, "min": 0, "max": "unlimited"}},
                        "m": {"type": {"key": "string", "value": "integer", "min": 0, "max": "unlimited"}, "ephemeral": true}
                    },
                    "indexes": [["name"]], "isRoot": true, "maxRows": 5
                }
            }
        }))
        .unwrap();
        let t = schema.table("T").unwrap();
        assert!(t.is_root);
        assert_eq!(t.max_rows, Some(5));
        assert_eq!(t.indexes, vec![vec!["name".to_owned()]]);
        assert!(!t.columns["name"].mutable);
        assert!(t.columns["m"].ephemeral);
        let refs = &t.columns["refs"].column_type;
        assert_eq!(refs.key.ref_table.as_deref(), Some("U"));
        assert_eq!(refs.key.ref_type, RefType::Weak);
        assert_eq!(refs.max, None);
    }

    #[test]
    fn rejects_bad_documents_with_a_path() {
        let err = DatabaseSchema::parse(
            &json!({"name":"db","tables":{"T":{"columns":{"c":{"type":"float"}}}}}),
        )
        .unwrap_err();
        assert_eq!(err.path, "tables.T.columns.c.type");
        assert!(DatabaseSchema::parse(&json!({"tables":{}})).is_err());
        assert!(DatabaseSchema::parse(&json!({"name":"db","tables":{"T":{}}})).is_err());
    }
}
