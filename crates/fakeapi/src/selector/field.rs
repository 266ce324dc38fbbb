//! Field selectors: `path=value`, `path==value`, `path!=value`, comma-separated, where `path` is
//! a dotted JSON path such as `metadata.name` or `spec.nodeName`. A missing field reads as "".

use super::SelectorError;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    path: Vec<String>,
    value: String,
    negated: bool,
}

/// A parsed field selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    terms: Vec<Term>,
}

impl FieldSelector {
    /// Parses the `fieldSelector` query parameter.
    pub fn parse(text: &str) -> Result<Self, SelectorError> {
        let mut terms = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (path, value, negated) = if let Some((p, v)) = part.split_once("!=") {
                (p, v, true)
            } else if let Some((p, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                (p, v, false)
            } else {
                return Err(SelectorError::new(
                    text,
                    format!("{part:?} has no operator"),
                ));
            };
            let path: Vec<String> = path.trim().split('.').map(str::to_owned).collect();
            if path.iter().any(String::is_empty) {
                return Err(SelectorError::new(
                    text,
                    format!("invalid field path in {part:?}"),
                ));
            }
            terms.push(Term {
                path,
                value: value.trim().to_owned(),
                negated,
            });
        }
        Ok(Self { terms })
    }

    /// Whether every term holds for `object`.
    pub fn matches(&self, object: &Value) -> bool {
        self.terms.iter().all(|term| {
            let field = term
                .path
                .iter()
                .try_fold(object, |v, seg| v.get(seg.as_str()));
            let text = match field {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            (text == term.value) != term.negated
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_compare_as_text_and_missing_fields_are_empty() {
        let pod = json!({"metadata": {"name": "a", "namespace": "ns"}, "spec": {"nodeName": "n1"}});
        let pending = json!({"metadata": {"name": "b", "namespace": "ns"}, "spec": {}});
        let by_node = FieldSelector::parse("spec.nodeName=n1").unwrap();
        assert!(by_node.matches(&pod));
        assert!(!by_node.matches(&pending));
        let unscheduled = FieldSelector::parse("spec.nodeName=").unwrap();
        assert!(unscheduled.matches(&pending));
        let both = FieldSelector::parse("metadata.namespace==ns,metadata.name!=a").unwrap();
        assert!(!both.matches(&pod));
        assert!(both.matches(&pending));
    }

    #[test]
    fn terms_without_operator_are_errors() {
        assert!(FieldSelector::parse("spec.nodeName").is_err());
        assert!(FieldSelector::parse("spec..x=1").is_err());
    }
}
