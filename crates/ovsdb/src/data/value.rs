//! An OVSDB column value: a bare atom, a `["set", [...]]` or a `["map", [[k, v], ...]]`.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value as Json;

use super::{Atom, DataError, Uuid};

/// A column value. Sets and maps keep the order they were written in, so
/// `Value::parse(&v.to_json()) == Ok(v)` for every value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A single atom (also how OVSDB writes a one-element set).
    Atom(Atom),
    /// `["set", [atom, ...]]`.
    Set(Vec<Atom>),
    /// `["map", [[key, value], ...]]`.
    Map(Vec<(Atom, Atom)>),
}

impl Value {
    /// Reads a value from its JSON notation.
    pub fn parse(json: &Json) -> Result<Value, DataError> {
        if let Json::Array(items) = json {
            match items.as_slice() {
                [Json::String(tag), Json::Array(elems)] if tag == "set" => {
                    return elems
                        .iter()
                        .map(Atom::parse)
                        .collect::<Result<_, _>>()
                        .map(Value::Set);
                }
                [Json::String(tag), Json::Array(pairs)] if tag == "map" => {
                    return pairs
                        .iter()
                        .map(|pair| match pair.as_array().map(Vec::as_slice) {
                            Some([k, v]) => Ok((Atom::parse(k)?, Atom::parse(v)?)),
                            _ => Err(DataError::shape("map pair", pair)),
                        })
                        .collect::<Result<_, _>>()
                        .map(Value::Map);
                }
                _ => {}
            }
        }
        Atom::parse(json).map(Value::Atom).map_err(|e| match e {
            DataError::Shape { .. } => DataError::shape("value", json),
            other => other,
        })
    }

    /// Writes the value's JSON notation.
    pub fn to_json(&self) -> Json {
        match self {
            Value::Atom(a) => a.to_json(),
            Value::Set(atoms) => Json::Array(vec![
                Json::from("set"),
                Json::Array(atoms.iter().map(Atom::to_json).collect()),
            ]),
            Value::Map(pairs) => Json::Array(vec![
                Json::from("map"),
                Json::Array(
                    pairs
                        .iter()
                        .map(|(k, v)| Json::Array(vec![k.to_json(), v.to_json()]))
                        .collect(),
                ),
            ]),
        }
    }

    /// The empty set, OVSDB's "no value" for optional columns.
    pub fn empty() -> Value {
        Value::Set(Vec::new())
    }

    /// A set of atoms.
    pub fn set<A: Into<Atom>>(items: impl IntoIterator<Item = A>) -> Value {
        Value::Set(items.into_iter().map(Into::into).collect())
    }

    /// A string→string map.
    pub fn string_map<'a>(pairs: impl IntoIterator<Item = (&'a String, &'a String)>) -> Value {
        Value::Map(
            pairs
                .into_iter()
                .map(|(k, v)| (Atom::from(k.as_str()), Atom::from(v.as_str())))
                .collect(),
        )
    }

    /// The atoms of this value seen as a set: a bare atom is a one-element set.
    pub fn atoms(&self) -> &[Atom] {
        match self {
            Value::Atom(a) => std::slice::from_ref(a),
            Value::Set(atoms) => atoms,
            Value::Map(_) => &[],
        }
    }

    /// The single atom of a scalar or one-element set; `None` for an empty set.
    pub fn optional(&self) -> Option<&Atom> {
        match self.atoms() {
            [a] => Some(a),
            _ => None,
        }
    }

    /// The value as a string, if it holds exactly one string.
    pub fn as_str(&self) -> Option<&str> {
        self.optional().and_then(Atom::as_str)
    }

    /// The value as an integer, if it holds exactly one integer.
    pub fn as_integer(&self) -> Option<i64> {
        self.optional().and_then(Atom::as_integer)
    }

    /// The value as a UUID, if it holds exactly one UUID.
    pub fn as_uuid(&self) -> Option<Uuid> {
        self.optional().and_then(Atom::as_uuid)
    }

    /// Every UUID in the value.
    pub fn uuids(&self) -> Vec<Uuid> {
        self.atoms().iter().filter_map(Atom::as_uuid).collect()
    }

    /// Every string in the value.
    pub fn strings(&self) -> Vec<String> {
        self.atoms()
            .iter()
            .filter_map(Atom::as_str)
            .map(str::to_owned)
            .collect()
    }

    /// A string→string map's entries (other pairs are skipped); empty for non-maps.
    pub fn to_string_map(&self) -> BTreeMap<String, String> {
        match self {
            Value::Map(pairs) => pairs
                .iter()
                .filter_map(|(k, v)| Some((k.as_str()?.to_owned(), v.as_str()?.to_owned())))
                .collect(),
            _ => BTreeMap::new(),
        }
    }
}

impl<A: Into<Atom>> From<A> for Value {
    fn from(a: A) -> Value {
        Value::Atom(a.into())
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json = Json::deserialize(deserializer)?;
        Value::parse(&json).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_sets_and_maps() {
        assert_eq!(Value::parse(&json!(["set", []])), Ok(Value::empty()));
        assert_eq!(
            Value::parse(&json!(["set", [1, 2]])),
            Ok(Value::set([1i64, 2]))
        );
        assert_eq!(
            Value::parse(&json!(["map", [["a", "b"], [1, true]]])),
            Ok(Value::Map(vec![
                (Atom::from("a"), Atom::from("b")),
                (Atom::Integer(1), Atom::Boolean(true))
            ]))
        );
        assert_eq!(Value::parse(&json!("set")), Ok(Value::from("set")));
    }

    #[test]
    fn rejects_malformed_collections() {
        for bad in [
            json!(["set"]),
            json!(["set", [[1]]]),
            json!(["map", [["a"]]]),
            json!(["map", ["a", "b"]]),
            json!(["map", {}]),
            json!(["bag", []]),
            json!([]),
            json!(null),
        ] {
            assert!(Value::parse(&bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn accessors_treat_scalars_as_one_element_sets() {
        assert_eq!(Value::from(5i64).as_integer(), Some(5));
        assert_eq!(Value::set([5i64]).as_integer(), Some(5));
        assert_eq!(Value::empty().as_integer(), None);
        let m = Value::parse(&json!(["map", [["k", "v"]]])).unwrap();
        assert_eq!(m.to_string_map().get("k").map(String::as_str), Some("v"));
    }

    #[test]
    fn serde_goes_through_the_ovsdb_notation() {
        let v: Value = serde_json::from_str(r#"["set",["a","b"]]"#).unwrap();
        assert_eq!(v, Value::set(["a", "b"]));
        assert_eq!(serde_json::to_string(&v).unwrap(), r#"["set",["a","b"]]"#);
    }
}
