//! Label selectors in the Kubernetes string form: `k=v`, `k==v`, `k!=v`, `k in (a,b)`,
//! `k notin (a,b)`, `k` (exists) and `!k` (does not exist), comma-separated (all must hold).

use super::SelectorError;
use serde_json::Value;

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses the `labelSelector` query parameter.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let mut requirements = Vec::new();
        for part in split_top_level(text) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            requirements.push(parse_requirement(text, part)?);
        }
        Ok(Self { requirements })
    }

    /// Whether the object's `metadata.labels` satisfy every requirement.
    pub fn matches(&self, object: &Value) -> bool {
        let labels = object
            .pointer("/metadata/labels")
            .and_then(Value::as_object);
        let get = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        self.requirements.iter().all(|req| match req {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| vs.iter().all(|v| v != x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        })
    }
}

/// Splits on commas that are not inside a parenthesised value set.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn parse_requirement(selector: &str, part: &str) -> Result<Requirement, SelectorError> {
    let err = |reason: &str| SelectorError::new(selector, format!("{reason} in {part:?}"));
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Requirement::DoesNotExist(valid_key(selector, key.trim())?));
    }
    if let Some((key, value)) = part.split_once("!=") {
        return Ok(Requirement::NotEquals(
            valid_key(selector, key.trim())?,
            value.trim().to_owned(),
        ));
    }
    if let Some((key, value)) = part.split_once("==").or_else(|| part.split_once('=')) {
        return Ok(Requirement::Equals(
            valid_key(selector, key.trim())?,
            value.trim().to_owned(),
        ));
    }
    if let Some(open) = part.find('(') {
        let head = part[..open].trim();
        let values = part[open + 1..]
            .strip_suffix(')')
            .ok_or_else(|| err("missing ')'"))?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_owned()).collect();
        let (key, op) = head
            .rsplit_once(char::is_whitespace)
            .ok_or_else(|| err("missing operator"))?;
        let key = valid_key(selector, key.trim())?;
        return match op {
            "in" => Ok(Requirement::In(key, values)),
            "notin" => Ok(Requirement::NotIn(key, values)),
            other => Err(err(&format!("unknown operator {other:?}"))),
        };
    }
    Ok(Requirement::Exists(valid_key(selector, part)?))
}

fn valid_key(selector: &str, key: &str) -> Result<String, SelectorError> {
    let ok = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if ok {
        Ok(key.to_owned())
    } else {
        Err(SelectorError::new(
            selector,
            format!("invalid label key {key:?}"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"labels": labels}})
    }

    #[test]
    fn every_operator_matches_like_kubernetes() {
        let o = obj(json!({"app": "web", "tier": "front"}));
        let yes = [
            "app=web",
            "app==web",
            "app!=db",
            "app in (web, db)",
            "app notin (db)",
            "app",
            "!zone",
            "app=web,tier in (front),!zone",
            "zone!=x",
            "zone notin (x)",
        ];
        for s in yes {
            assert!(
                LabelSelector::parse(s).unwrap().matches(&o),
                "{s} should match"
            );
        }
        let no = [
            "app=db",
            "app!=web",
            "app in (db)",
            "app notin (web,db)",
            "zone",
            "!app",
            "app=web,zone",
        ];
        for s in no {
            assert!(
                !LabelSelector::parse(s).unwrap().matches(&o),
                "{s} should not match"
            );
        }
    }

    #[test]
    fn malformed_selectors_are_errors() {
        for s in ["app in (a", "app between (a)", "=x", "a b=c"] {
            assert!(LabelSelector::parse(s).is_err(), "{s} should be rejected");
        }
    }
}
