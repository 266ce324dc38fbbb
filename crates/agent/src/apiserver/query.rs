//! The query string of an agent API request: `name=value` pairs, `%XX` escapes decoded, and
//! the `namespace/name` form of a Pod parameter.

use crate::cluster::ObjectKey;

/// The value of parameter `name` in `query`, `%XX` escapes decoded; `None` when absent.
pub fn parameter(query: Option<&str>, name: &str) -> Result<Option<String>, String> {
    let Some(query) = query else { return Ok(None) };
    for pair in query.split('&') {
        if let Some((key, value)) = pair.split_once('=')
            && key == name
        {
            return decode(value)
                .map(Some)
                .ok_or_else(|| format!("{name}={value}: not a valid escaped value"));
        }
    }
    Ok(None)
}

/// The `pod=namespace/name` parameter, if any.
pub fn pod_parameter(query: Option<&str>) -> Result<Option<ObjectKey>, String> {
    let Some(value) = parameter(query, "pod")? else {
        return Ok(None);
    };
    match value.split_once('/') {
        Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() => {
            Ok(Some(ObjectKey::new(namespace, name)))
        }
        _ => Err(format!("pod={value}: expected namespace/name")),
    }
}

/// `text` with its `%XX` escapes decoded (and `+` as a space); `None` when an escape is
/// malformed or the result is not UTF-8.
fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// `value` escaped for a query string: everything but letters, digits and `-._~` as `%XX`.
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pod_parameter_is_namespace_slash_name() {
        assert_eq!(pod_parameter(None), Ok(None));
        assert_eq!(pod_parameter(Some("x=1")), Ok(None));
        assert_eq!(
            pod_parameter(Some("pod=x%2Fa")),
            Ok(Some(ObjectKey::new("x", "a")))
        );
        assert_eq!(
            pod_parameter(Some("pod=x/a")),
            Ok(Some(ObjectKey::new("x", "a")))
        );
        assert!(pod_parameter(Some("pod=a")).is_err());
        assert!(pod_parameter(Some("pod=/a")).is_err());
    }

    #[test]
    fn escaped_values_come_back_as_given() {
        for value in ["x/a", "10.0.0.1:80", "a b&c=d", "é"] {
            let query = format!("q=1&v={}", escape(value));
            assert_eq!(parameter(Some(&query), "v"), Ok(Some(value.to_owned())));
        }
        assert!(parameter(Some("v=%zz"), "v").is_err());
        assert!(parameter(Some("v=%4"), "v").is_err());
    }
}
