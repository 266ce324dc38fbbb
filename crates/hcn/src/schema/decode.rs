//! [`decode`]: how every document HNS returns is read. HNS and Go-based tools write `null` for
//! an empty list or object; object members that are `null` are treated as absent, so they take
//! their defaults instead of failing.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Reads an HNS document: JSON whose `null` object members count as absent.
pub fn decode<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    let mut value: Value = serde_json::from_str(text)?;
    drop_null_members(&mut value);
    serde_json::from_value(value)
}

fn drop_null_members(value: &mut Value) {
    match value {
        Value::Object(members) => {
            members.retain(|_, member| !member.is_null());
            members.values_mut().for_each(drop_null_members);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_members),
        _ => {}
    }
}
