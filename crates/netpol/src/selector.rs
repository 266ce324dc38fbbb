//! Label selectors as Kubernetes evaluates them: every `matchLabels` pair and every
//! `matchExpressions` requirement must hold; the empty selector selects everything.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::{Deserialize, Serialize};

use crate::error::PolicyError;

/// Labels of a Pod or Namespace.
pub type Labels = BTreeMap<String, String>;

/// One `matchExpressions` requirement.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Requirement {
    /// The label is present with one of the values.
    In(String, BTreeSet<String>),
    /// The label is absent, or present with none of the values.
    NotIn(String, BTreeSet<String>),
    /// The label is present.
    Exists(String),
    /// The label is absent.
    DoesNotExist(String),
}

impl Requirement {
    fn matches(&self, labels: &Labels) -> bool {
        match self {
            Requirement::In(key, values) => labels.get(key).is_some_and(|v| values.contains(v)),
            Requirement::NotIn(key, values) => labels.get(key).is_none_or(|v| !values.contains(v)),
            Requirement::Exists(key) => labels.contains_key(key),
            Requirement::DoesNotExist(key) => !labels.contains_key(key),
        }
    }
}

/// A compiled label selector. Equal selectors compare equal whatever the order they were
/// written in, so policies that repeat a selector share its group.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Selector {
    labels: BTreeMap<String, String>,
    requirements: BTreeSet<Requirement>,
}

impl Selector {
    /// The selector that selects everything (`{}`).
    pub fn everything() -> Selector {
        Selector::default()
    }

    /// `matchLabels` only.
    pub fn with_labels<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Selector {
        Selector {
            labels: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            requirements: BTreeSet::new(),
        }
    }

    /// Compiles `selector`; `object` names where it comes from, for errors.
    pub fn from_k8s(selector: &LabelSelector, object: &str) -> Result<Selector, PolicyError> {
        let mut requirements = BTreeSet::new();
        for expr in selector.match_expressions.iter().flatten() {
            let values: BTreeSet<String> = expr.values.iter().flatten().cloned().collect();
            let key = expr.key.clone();
            let bad_values = |expected| PolicyError::BadValues {
                object: object.to_owned(),
                operator: expr.operator.clone(),
                expected,
            };
            let requirement = match expr.operator.as_str() {
                "In" | "NotIn" if values.is_empty() => return Err(bad_values("values")),
                "Exists" | "DoesNotExist" if !values.is_empty() => {
                    return Err(bad_values("no values"));
                }
                "In" => Requirement::In(key, values),
                "NotIn" => Requirement::NotIn(key, values),
                "Exists" => Requirement::Exists(key),
                "DoesNotExist" => Requirement::DoesNotExist(key),
                other => {
                    return Err(PolicyError::BadOperator {
                        object: object.to_owned(),
                        operator: other.to_owned(),
                    });
                }
            };
            requirements.insert(requirement);
        }
        Ok(Selector {
            labels: selector.match_labels.clone().unwrap_or_default(),
            requirements,
        })
    }

    /// Whether `labels` satisfy the selector.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            && self.requirements.iter().all(|r| r.matches(labels))
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn expr(key: &str, op: &str, values: Option<&[&str]>) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: op.into(),
            values: values.map(|v| v.iter().map(|s| s.to_string()).collect()),
        }
    }

    fn compile(exprs: Vec<LabelSelectorRequirement>) -> Result<Selector, PolicyError> {
        Selector::from_k8s(
            &LabelSelector {
                match_labels: None,
                match_expressions: Some(exprs),
            },
            "t",
        )
    }

    #[test]
    fn empty_selects_everything() {
        let s = Selector::from_k8s(&LabelSelector::default(), "t").unwrap();
        assert!(s.matches(&Labels::new()));
        assert!(s.matches(&labels(&[("a", "b")])));
    }

    #[test]
    fn match_labels_all_pairs() {
        let s = Selector::with_labels([("app", "web"), ("tier", "fe")]);
        assert!(s.matches(&labels(&[("app", "web"), ("tier", "fe"), ("x", "y")])));
        assert!(!s.matches(&labels(&[("app", "web")])));
        assert!(!s.matches(&labels(&[("app", "web"), ("tier", "be")])));
    }

    #[test]
    fn operators() {
        let l = labels(&[("app", "web")]);
        let none = Labels::new();
        let s = compile(vec![expr("app", "In", Some(&["web", "db"]))]).unwrap();
        assert!(s.matches(&l) && !s.matches(&none));
        let s = compile(vec![expr("app", "NotIn", Some(&["web"]))]).unwrap();
        assert!(!s.matches(&l) && s.matches(&none));
        assert!(s.matches(&labels(&[("app", "db")])));
        let s = compile(vec![expr("app", "Exists", None)]).unwrap();
        assert!(s.matches(&l) && !s.matches(&none));
        let s = compile(vec![expr("app", "DoesNotExist", Some(&[]))]).unwrap();
        assert!(!s.matches(&l) && s.matches(&none));
    }

    #[test]
    fn invalid_expressions_are_errors() {
        assert!(matches!(
            compile(vec![expr("a", "Gt", Some(&["1"]))]),
            Err(PolicyError::BadOperator { .. })
        ));
        assert!(matches!(
            compile(vec![expr("a", "In", None)]),
            Err(PolicyError::BadValues { .. })
        ));
        assert!(matches!(
            compile(vec![expr("a", "Exists", Some(&["x"]))]),
            Err(PolicyError::BadValues { .. })
        ));
    }

    #[test]
    fn equal_selectors_in_any_order() {
        let a = compile(vec![
            expr("a", "Exists", None),
            expr("b", "In", Some(&["1", "2"])),
        ]);
        let b = compile(vec![
            expr("b", "In", Some(&["2", "1"])),
            expr("a", "Exists", None),
        ]);
        assert_eq!(a, b);
    }
}
