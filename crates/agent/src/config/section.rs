//! A typed reader over one YAML mapping of the configuration: every read names the key path in
//! its error, and every key left unread at the end becomes an unknown-key warning.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{Map, Value};

use super::duration::{DURATION_FORMAT, parse_duration};
use super::error::{ConfigError, ConfigWarning};

/// One mapping of the document (the root, or a nested section such as `antreaProxy`).
#[derive(Debug)]
pub(crate) struct Section<'a> {
    path: String,
    map: &'a Map<String, Value>,
    read: BTreeSet<&'a str>,
}

/// The YAML type of a value, as operators know it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

impl<'a> Section<'a> {
    /// The document's top-level mapping. An empty document (only comments) is an empty mapping.
    pub(crate) fn root(value: &'a Value) -> Result<Section<'a>, ConfigError> {
        match value {
            Value::Object(map) => Ok(Section {
                path: String::new(),
                map,
                read: BTreeSet::new(),
            }),
            Value::Null => Ok(Section {
                path: String::new(),
                map: empty_map(),
                read: BTreeSet::new(),
            }),
            other => Err(ConfigError::WrongType {
                key: "(document)".to_owned(),
                expected: "a mapping of keys",
                found: type_name(other),
            }),
        }
    }

    /// The dotted path of `key` in this section.
    pub(crate) fn path_of(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// The value of `key`, marked as read. Absent and null (`key:` with nothing after) are `None`.
    fn take(&mut self, key: &'static str) -> Option<&'a Value> {
        self.read.insert(key);
        self.map.get(key).filter(|v| !v.is_null())
    }

    fn wrong_type(&self, key: &str, expected: &'static str, found: &Value) -> ConfigError {
        ConfigError::WrongType {
            key: self.path_of(key),
            expected,
            found: type_name(found),
        }
    }

    /// A string; the empty string means "not set", as in Antrea.
    pub(crate) fn string(&mut self, key: &'static str) -> Result<Option<&'a str>, ConfigError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong_type(key, "a string", other)),
        }
    }

    /// A boolean.
    pub(crate) fn bool(&mut self, key: &'static str) -> Result<Option<bool>, ConfigError> {
        match self.take(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong_type(key, "true or false", other)),
        }
    }

    /// A whole number in `min..=max`.
    pub(crate) fn integer(
        &mut self,
        key: &'static str,
        min: i64,
        max: i64,
    ) -> Result<Option<i64>, ConfigError> {
        let Some(value) = self.take(key) else {
            return Ok(None);
        };
        let Some(n) = value.as_i64() else {
            return Err(match value {
                Value::Number(_) => ConfigError::InvalidValue {
                    key: self.path_of(key),
                    value: value.to_string(),
                    allowed: format!("a whole number in {min}..{max}"),
                },
                other => self.wrong_type(key, "an integer", other),
            });
        };
        if n < min || n > max {
            return Err(ConfigError::InvalidValue {
                key: self.path_of(key),
                value: n.to_string(),
                allowed: format!("a whole number in {min}..{max}"),
            });
        }
        Ok(Some(n))
    }

    /// A duration ([`super::duration`]) of at least `min`.
    pub(crate) fn duration(
        &mut self,
        key: &'static str,
        min: Duration,
    ) -> Result<Option<Duration>, ConfigError> {
        let Some(text) = self.string(key)? else {
            return Ok(None);
        };
        match parse_duration(text) {
            Some(duration) if duration >= min => Ok(Some(duration)),
            _ => Err(ConfigError::InvalidValue {
                key: self.path_of(key),
                value: format!("{text:?}"),
                allowed: if min.is_zero() {
                    DURATION_FORMAT.to_owned()
                } else {
                    format!("{DURATION_FORMAT}, at least {min:?}")
                },
            }),
        }
    }

    /// A list of strings (absent or null is empty).
    pub(crate) fn strings(&mut self, key: &'static str) -> Result<Vec<&'a str>, ConfigError> {
        match self.take(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) => Ok(s.as_str()),
                    other => Err(ConfigError::WrongType {
                        key: format!("{}[{i}]", self.path_of(key)),
                        expected: "a string",
                        found: type_name(other),
                    }),
                })
                .collect(),
            Some(other) => Err(self.wrong_type(key, "a list of strings", other)),
        }
    }

    /// A nested mapping (absent or null is an empty section).
    pub(crate) fn section(&mut self, key: &'static str) -> Result<Section<'a>, ConfigError> {
        let path = self.path_of(key);
        match self.take(key) {
            None => Ok(Section {
                path,
                map: empty_map(),
                read: BTreeSet::new(),
            }),
            Some(Value::Object(map)) => Ok(Section {
                path,
                map,
                read: BTreeSet::new(),
            }),
            Some(other) => Err(self.wrong_type(key, "a mapping", other)),
        }
    }

    /// A mapping from names to booleans, in document order of the keys' names.
    pub(crate) fn bool_map(
        &mut self,
        key: &'static str,
    ) -> Result<Vec<(&'a str, bool)>, ConfigError> {
        let path = self.path_of(key);
        match self.take(key) {
            None => Ok(Vec::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, v)| match v {
                    Value::Bool(b) => Ok((name.as_str(), *b)),
                    other => Err(ConfigError::WrongType {
                        key: format!("{path}.{name}"),
                        expected: "true or false",
                        found: type_name(other),
                    }),
                })
                .collect(),
            Some(other) => Err(self.wrong_type(key, "a mapping of names to true/false", other)),
        }
    }

    /// The paths of the keys read so far, whether present or not.
    pub(crate) fn keys_read(&self) -> Vec<String> {
        self.read.iter().map(|key| self.path_of(key)).collect()
    }

    /// Antrea keys antrea-rs does not implement: a warning for each one set to a value that
    /// would matter (anything but nothing, `""`, `false`, `0` or an empty list/mapping).
    pub(crate) fn not_implemented(
        &mut self,
        keys: &[&'static str],
        warnings: &mut Vec<ConfigWarning>,
    ) {
        for &key in keys {
            if self.take(key).is_some_and(has_effect) {
                warnings.push(ConfigWarning::NotImplemented {
                    key: self.path_of(key),
                });
            }
        }
    }

    /// Ends reading: every key not read is reported as unknown.
    pub(crate) fn finish(self, warnings: &mut Vec<ConfigWarning>) {
        for key in self.map.keys() {
            if !self.read.contains(key.as_str()) {
                warnings.push(ConfigWarning::UnknownKey {
                    key: self.path_of(key),
                });
            }
        }
    }
}

/// The mapping read for an absent section.
fn empty_map() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// Whether a value differs from "unset" in Antrea's Go struct (its zero value).
fn has_effect(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => map.values().any(has_effect),
    }
}
