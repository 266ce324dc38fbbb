//! One OVSDB atom: integer, real, boolean, string, UUID or named UUID (RFC 7047 §5.1).

use serde_json::Value as Json;

use super::{DataError, Uuid};

/// A single OVSDB scalar.
#[derive(Debug, Clone, PartialEq)]
pub enum Atom {
    /// A 64-bit signed integer.
    Integer(i64),
    /// A finite IEEE-754 double.
    Real(f64),
    /// `true` or `false`.
    Boolean(bool),
    /// A UTF-8 string.
    String(String),
    /// A row reference, `["uuid", "..."]`.
    Uuid(Uuid),
    /// A reference to a row inserted earlier in the same transaction, `["named-uuid", "name"]`.
    NamedUuid(String),
}

impl Atom {
    /// Reads an atom from its JSON notation.
    pub fn parse(json: &Json) -> Result<Atom, DataError> {
        match json {
            Json::Bool(b) => Ok(Atom::Boolean(*b)),
            Json::String(s) => Ok(Atom::String(s.clone())),
            Json::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Ok(Atom::Integer(i))
                } else if n.is_u64() {
                    Err(DataError::Number(n.to_string()))
                } else {
                    n.as_f64()
                        .filter(|f| f.is_finite())
                        .map(Atom::Real)
                        .ok_or_else(|| DataError::Number(n.to_string()))
                }
            }
            Json::Array(items) => match items.as_slice() {
                [Json::String(tag), Json::String(text)] if tag == "uuid" => {
                    Ok(Atom::Uuid(text.parse()?))
                }
                [Json::String(tag), Json::String(name)] if tag == "named-uuid" => {
                    Ok(Atom::NamedUuid(name.clone()))
                }
                _ => Err(DataError::shape("atom", json)),
            },
            Json::Null | Json::Object(_) => Err(DataError::shape("atom", json)),
        }
    }

    /// Writes the atom's JSON notation.
    pub fn to_json(&self) -> Json {
        match self {
            Atom::Integer(i) => Json::from(*i),
            Atom::Real(r) => serde_json::Number::from_f64(*r).map_or(Json::Null, Json::Number),
            Atom::Boolean(b) => Json::Bool(*b),
            Atom::String(s) => Json::String(s.clone()),
            Atom::Uuid(u) => Json::Array(vec![Json::from("uuid"), Json::String(u.to_string())]),
            Atom::NamedUuid(n) => {
                Json::Array(vec![Json::from("named-uuid"), Json::String(n.clone())])
            }
        }
    }

    /// The integer, if this is one.
    pub fn as_integer(&self) -> Option<i64> {
        match self {
            Atom::Integer(i) => Some(*i),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Atom::String(s) => Some(s),
            _ => None,
        }
    }

    /// The UUID, if this is one.
    pub fn as_uuid(&self) -> Option<Uuid> {
        match self {
            Atom::Uuid(u) => Some(*u),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Atom::Boolean(b) => Some(*b),
            _ => None,
        }
    }
}

impl From<i64> for Atom {
    fn from(i: i64) -> Atom {
        Atom::Integer(i)
    }
}

impl From<bool> for Atom {
    fn from(b: bool) -> Atom {
        Atom::Boolean(b)
    }
}

impl From<&str> for Atom {
    fn from(s: &str) -> Atom {
        Atom::String(s.to_owned())
    }
}

impl From<String> for Atom {
    fn from(s: String) -> Atom {
        Atom::String(s)
    }
}

impl From<Uuid> for Atom {
    fn from(u: Uuid) -> Atom {
        Atom::Uuid(u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_each_kind() {
        assert_eq!(Atom::parse(&json!(-5)), Ok(Atom::Integer(-5)));
        assert_eq!(Atom::parse(&json!(1.5)), Ok(Atom::Real(1.5)));
        assert_eq!(Atom::parse(&json!(true)), Ok(Atom::Boolean(true)));
        assert_eq!(Atom::parse(&json!("x")), Ok(Atom::String("x".into())));
        let u = "36bfd2b6-5a2c-4b8f-9f3c-0123456789ab";
        assert_eq!(
            Atom::parse(&json!(["uuid", u])),
            Ok(Atom::Uuid(u.parse().unwrap()))
        );
        assert_eq!(
            Atom::parse(&json!(["named-uuid", "row1"])),
            Ok(Atom::NamedUuid("row1".into()))
        );
    }

    #[test]
    fn rejects_non_atoms() {
        for bad in [
            json!(null),
            json!({}),
            json!(["uuid"]),
            json!(["uuid", "nope"]),
            json!(["set", []]),
            json!(18446744073709551615u64),
        ] {
            assert!(Atom::parse(&bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn real_with_integral_value_stays_real() {
        let text = Atom::Real(2.0).to_json().to_string();
        let back: Json = serde_json::from_str(&text).unwrap();
        assert_eq!(Atom::parse(&back), Ok(Atom::Real(2.0)));
    }
}
