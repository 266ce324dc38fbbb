//! Decoding the text of one cluster-directory file: YAML documents (`---` separated) holding
//! `v1` Nodes, Pods, Namespaces, `networking.k8s.io/v1` NetworkPolicies, or Lists of them (what
//! `kubectl get -o yaml` prints).

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The label the apiserver sets on every Namespace to its name.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// An object the agent keeps from a file.
#[derive(Debug, Clone, PartialEq)]
pub enum ClusterObject {
    /// A `v1` Node.
    Node(Arc<Node>),
    /// A `v1` Pod (its namespace filled in as `default` when absent).
    Pod(Arc<Pod>),
    /// A `v1` Namespace.
    Namespace(Arc<Namespace>),
    /// A `networking.k8s.io/v1` NetworkPolicy (its namespace filled in as `default` when absent).
    NetworkPolicy(Arc<NetworkPolicy>),
}

/// Where in a file a document is: its number among the file's non-empty documents (from 1) and,
/// inside a List, the item's number (from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The document's number, from 1.
    pub document: usize,
    /// The List item's number, from 1, for objects inside a List.
    pub item: Option<usize>,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "document {}", self.document)?;
        if let Some(item) = self.item {
            write!(f, " item {item}")?;
        }
        Ok(())
    }
}

/// Something wrong in a file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeProblem {
    /// The text is not YAML (the parser's message carries the line and column).
    #[error("not valid YAML: {message}")]
    Yaml {
        /// The YAML parser's description.
        message: String,
    },
    /// A document is not a valid object of its kind.
    #[error("{position}: {message}")]
    Invalid {
        /// Which document.
        position: Position,
        /// What is wrong, with the field path when there is one.
        message: String,
    },
    /// A document of a kind the agent does not use; it is skipped.
    #[error(
        "{position}: kind {kind:?} of apiVersion {api_version:?} is not used by the agent, ignored"
    )]
    UnknownKind {
        /// Which document.
        position: Position,
        /// Its `apiVersion`.
        api_version: String,
        /// Its `kind`.
        kind: String,
    },
}

/// The objects of a file, and the documents that were skipped.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DecodedFile {
    /// The objects, in file order.
    pub objects: Vec<ClusterObject>,
    /// Documents of kinds the agent does not use ([`DecodeProblem::UnknownKind`]).
    pub skipped: Vec<DecodeProblem>,
}

/// Decodes a file's text. Any malformed document rejects the whole file (so that a half-edited
/// file never removes objects); documents of other kinds are only skipped. This is also the
/// fuzzing entry point: any text gives objects or a problem, never a panic.
pub fn decode_documents(text: &str) -> Result<DecodedFile, DecodeProblem> {
    let documents: Vec<Value> =
        serde_saphyr::from_multiple(text).map_err(|e| DecodeProblem::Yaml {
            message: e.to_string(),
        })?;
    let mut file = DecodedFile::default();
    for (i, document) in documents.into_iter().enumerate() {
        let position = Position {
            document: i + 1,
            item: None,
        };
        if type_meta(&document, position)? == ("v1", "List") {
            let items = match document.get("items") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items.clone(),
                Some(_) => return Err(invalid(position, "items: expected a list".to_owned())),
            };
            for (j, item) in items.into_iter().enumerate() {
                decode_object(
                    item,
                    Position {
                        item: Some(j + 1),
                        ..position
                    },
                    &mut file,
                )?;
            }
        } else {
            decode_object(document, position, &mut file)?;
        }
    }
    Ok(file)
}

fn invalid(position: Position, message: String) -> DecodeProblem {
    DecodeProblem::Invalid { position, message }
}

/// The document's `apiVersion` and `kind`, both required strings.
fn type_meta(document: &Value, position: Position) -> Result<(&str, &str), DecodeProblem> {
    if !document.is_object() {
        return Err(invalid(
            position,
            "expected a Kubernetes object (a mapping)".to_owned(),
        ));
    }
    let field = |name: &str| match document.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.as_str()),
        _ => Err(invalid(
            position,
            format!("{name}: expected a non-empty string"),
        )),
    };
    Ok((field("apiVersion")?, field("kind")?))
}

fn decode_object(
    document: Value,
    position: Position,
    file: &mut DecodedFile,
) -> Result<(), DecodeProblem> {
    let (api_version, kind) = type_meta(&document, position)?;
    match (api_version, kind) {
        ("v1", "Node") => {
            let node: Node = typed(document, position)?;
            require_name(node.metadata.name.as_deref(), position)?;
            file.objects.push(ClusterObject::Node(Arc::new(node)));
        }
        ("v1", "Pod") => {
            let mut pod: Pod = typed(document, position)?;
            require_name(pod.metadata.name.as_deref(), position)?;
            pod.metadata
                .namespace
                .get_or_insert_with(|| "default".to_owned());
            file.objects.push(ClusterObject::Pod(Arc::new(pod)));
        }
        ("v1", "Namespace") => {
            let mut namespace: Namespace = typed(document, position)?;
            require_name(namespace.metadata.name.as_deref(), position)?;
            // The apiserver labels every Namespace with its name (selectors rely on it).
            let name = namespace.metadata.name.clone().unwrap_or_default();
            namespace
                .metadata
                .labels
                .get_or_insert_with(Default::default)
                .insert(NAMESPACE_NAME_LABEL.to_owned(), name);
            file.objects
                .push(ClusterObject::Namespace(Arc::new(namespace)));
        }
        ("networking.k8s.io/v1", "NetworkPolicy") => {
            let mut policy: NetworkPolicy = typed(document, position)?;
            require_name(policy.metadata.name.as_deref(), position)?;
            policy
                .metadata
                .namespace
                .get_or_insert_with(|| "default".to_owned());
            file.objects
                .push(ClusterObject::NetworkPolicy(Arc::new(policy)));
        }
        (api_version, kind) => file.skipped.push(DecodeProblem::UnknownKind {
            position,
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
        }),
    }
    Ok(())
}

/// The typed object, or the field path and what is wrong with it.
fn typed<T: DeserializeOwned>(document: Value, position: Position) -> Result<T, DecodeProblem> {
    serde_path_to_error::deserialize(document).map_err(|e| {
        let path = e.path().to_string();
        let message = if path == "." {
            e.inner().to_string()
        } else {
            format!("{path}: {}", e.inner())
        };
        invalid(position, message)
    })
}

fn require_name(name: Option<&str>, position: Position) -> Result<(), DecodeProblem> {
    match name {
        Some(n) if !n.is_empty() => Ok(()),
        _ => Err(invalid(position, "metadata.name: missing".to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn namespace_labels(text: &str) -> std::collections::BTreeMap<String, String> {
        let file = decode_documents(text).unwrap();
        let [ClusterObject::Namespace(namespace)] = file.objects.as_slice() else {
            panic!("not one Namespace: {:?}", file.objects);
        };
        namespace.metadata.labels.clone().unwrap_or_default()
    }

    #[test]
    fn namespaces_carry_their_name_label_as_the_apiserver_sets_it() {
        let labels = namespace_labels("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n");
        assert_eq!(
            labels.get(NAMESPACE_NAME_LABEL).map(String::as_str),
            Some("team")
        );
        let labels = namespace_labels(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n  labels:\n    tier: web\n    kubernetes.io/metadata.name: other\n",
        );
        assert_eq!(labels.get("tier").map(String::as_str), Some("web"));
        assert_eq!(
            labels.get(NAMESPACE_NAME_LABEL).map(String::as_str),
            Some("team")
        );
    }
}
