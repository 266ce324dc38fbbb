//! The OVSDB data model of RFC 7047 §5.1: atoms, sets, maps and rows, with their exact JSON
//! notation (`parse` reads a `serde_json::Value`, `to_json` writes one back).

mod atom;
mod row;
mod uuid;
mod value;

pub use atom::Atom;
pub use row::Row;
pub use uuid::{Uuid, UuidParseError};
pub use value::Value;

/// Why a JSON value is not valid OVSDB data.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DataError {
    /// The JSON has a shape no OVSDB atom, set or map has.
    #[error("invalid OVSDB {what}: {json}")]
    Shape {
        /// What was expected (`atom`, `set`, `map`, `row`, ...).
        what: &'static str,
        /// The offending JSON, abbreviated.
        json: String,
    },
    /// A number that is neither a 64-bit integer nor a finite real.
    #[error("number {0} is out of range for an OVSDB integer or real")]
    Number(String),
    /// A `["uuid", ...]` whose string is not a UUID.
    #[error(transparent)]
    Uuid(#[from] UuidParseError),
}

impl DataError {
    pub(crate) fn shape(what: &'static str, json: &serde_json::Value) -> DataError {
        DataError::Shape {
            what,
            json: abbreviate(json),
        }
    }
}

/// The JSON text of `json`, cut to a length that fits in an error message.
pub(crate) fn abbreviate(json: &serde_json::Value) -> String {
    const MAX: usize = 200;
    let text = json.to_string();
    if text.len() <= MAX {
        return text;
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}
