//! Column types: a key base type, an optional value base type (for maps) and element bounds,
//! in both the shorthand (`"integer"`) and the full object notation.

use serde_json::Value as Json;

use super::SchemaError;
use crate::data::Value;

/// The atomic types (RFC 7047 §3.2 `<atomic-type>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicType {
    /// 64-bit integer.
    Integer,
    /// Double.
    Real,
    /// Boolean.
    Boolean,
    /// String.
    String,
    /// Row reference.
    Uuid,
}

/// Whether a reference keeps its target alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RefType {
    /// Referential integrity is enforced.
    #[default]
    Strong,
    /// A reference to a deleted row disappears.
    Weak,
}

/// An atomic type with its constraints.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseType {
    /// The atomic type.
    pub atomic: AtomicType,
    /// Allowed values, if restricted.
    pub allowed: Option<Value>,
    /// Integer range.
    pub min_integer: Option<i64>,
    /// Integer range.
    pub max_integer: Option<i64>,
    /// Real range.
    pub min_real: Option<f64>,
    /// Real range.
    pub max_real: Option<f64>,
    /// String length range.
    pub min_length: Option<u64>,
    /// String length range.
    pub max_length: Option<u64>,
    /// For UUIDs: the referenced table.
    pub ref_table: Option<String>,
    /// For UUIDs: strong or weak.
    pub ref_type: RefType,
}

/// A column type: a set of `min..=max` keys, or a map when `value` is present.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnType {
    /// Key (or element) type.
    pub key: BaseType,
    /// Value type of a map.
    pub value: Option<BaseType>,
    /// Fewest elements.
    pub min: u64,
    /// Most elements; `None` is unlimited.
    pub max: Option<u64>,
}

impl ColumnType {
    /// Parses a `<type>`.
    pub fn parse(path: &str, json: &Json) -> Result<ColumnType, SchemaError> {
        if json.is_string() {
            return Ok(ColumnType {
                key: BaseType::parse(path, json)?,
                value: None,
                min: 1,
                max: Some(1),
            });
        }
        let obj = json
            .as_object()
            .ok_or_else(|| SchemaError::new(path, "type is neither a name nor an object", json))?;
        let key = obj
            .get("key")
            .ok_or_else(|| SchemaError::new(path, "type without key", json))?;
        let value = obj
            .get("value")
            .map(|v| BaseType::parse(&format!("{path}.value"), v))
            .transpose()?;
        let min = match obj.get("min") {
            None => 1,
            Some(m) => m
                .as_u64()
                .ok_or_else(|| SchemaError::new(path, "min is not a count", m))?,
        };
        let max =
            match obj.get("max") {
                None => Some(1),
                Some(Json::String(s)) if s == "unlimited" => None,
                Some(m) => Some(m.as_u64().ok_or_else(|| {
                    SchemaError::new(path, "max is not a count or \"unlimited\"", m)
                })?),
            };
        Ok(ColumnType {
            key: BaseType::parse(&format!("{path}.key"), key)?,
            value,
            min,
            max,
        })
    }

    /// Whether the column holds a map.
    pub fn is_map(&self) -> bool {
        self.value.is_some()
    }

    /// Whether the column holds a set that may have more than one element.
    pub fn is_multi_set(&self) -> bool {
        self.value.is_none() && self.max != Some(1)
    }
}

impl BaseType {
    fn parse(path: &str, json: &Json) -> Result<BaseType, SchemaError> {
        let atomic = |j: &Json| match j.as_str() {
            Some("integer") => Ok(AtomicType::Integer),
            Some("real") => Ok(AtomicType::Real),
            Some("boolean") => Ok(AtomicType::Boolean),
            Some("string") => Ok(AtomicType::String),
            Some("uuid") => Ok(AtomicType::Uuid),
            _ => Err(SchemaError::new(path, "unknown atomic type", j)),
        };
        let plain = |atomic| BaseType {
            atomic,
            allowed: None,
            min_integer: None,
            max_integer: None,
            min_real: None,
            max_real: None,
            min_length: None,
            max_length: None,
            ref_table: None,
            ref_type: RefType::Strong,
        };
        let Some(obj) = json.as_object() else {
            return Ok(plain(atomic(json)?));
        };
        let ty = obj
            .get("type")
            .ok_or_else(|| SchemaError::new(path, "base type without type", json))?;
        let allowed = match obj.get("enum") {
            None => None,
            Some(e) => Some(
                Value::parse(e)
                    .map_err(|err| SchemaError::new(path, &format!("enum: {err}"), e))?,
            ),
        };
        let ref_type = match obj.get("refType").and_then(Json::as_str) {
            Some("weak") => RefType::Weak,
            _ => RefType::Strong,
        };
        Ok(BaseType {
            allowed,
            min_integer: obj.get("minInteger").and_then(Json::as_i64),
            max_integer: obj.get("maxInteger").and_then(Json::as_i64),
            min_real: obj.get("minReal").and_then(Json::as_f64),
            max_real: obj.get("maxReal").and_then(Json::as_f64),
            min_length: obj.get("minLength").and_then(Json::as_u64),
            max_length: obj.get("maxLength").and_then(Json::as_u64),
            ref_table: obj
                .get("refTable")
                .and_then(Json::as_str)
                .map(str::to_owned),
            ref_type,
            ..plain(atomic(ty)?)
        })
    }
}
