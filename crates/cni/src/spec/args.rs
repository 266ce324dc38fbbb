//! `CNI_ARGS`: `KEY=VALUE` pairs separated by `;`, and the Kubernetes keys runtimes put there.

use super::{CniError, code};

/// The parsed pairs of `CNI_ARGS`, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CniArgs {
    /// Every `(key, value)` pair.
    pub pairs: Vec<(String, String)>,
}

/// The Pod identity kubelet/containerd pass in `CNI_ARGS`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct K8sArgs {
    /// `K8S_POD_NAME`.
    pub pod_name: String,
    /// `K8S_POD_NAMESPACE`.
    pub pod_namespace: String,
    /// `K8S_POD_INFRA_CONTAINER_ID`.
    pub infra_container_id: String,
}

impl CniArgs {
    /// Parses `CNI_ARGS`. Empty segments are skipped; a segment without `=` is an
    /// invalid-environment error (code 4).
    pub fn parse(text: &str) -> Result<CniArgs, CniError> {
        let mut pairs = Vec::new();
        for segment in text.split(';').filter(|s| !s.is_empty()) {
            let (k, v) = segment.split_once('=').ok_or_else(|| {
                CniError::new(
                    code::INVALID_ENVIRONMENT_VARIABLES,
                    format!("CNI_ARGS: invalid pair {segment:?}"),
                )
            })?;
            pairs.push((k.to_owned(), v.to_owned()));
        }
        Ok(CniArgs { pairs })
    }

    /// The value of `key`, if present (the last one wins).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The Kubernetes keys; absent ones are empty.
    pub fn k8s(&self) -> K8sArgs {
        let get = |k| self.get(k).unwrap_or_default().to_owned();
        K8sArgs {
            pod_name: get("K8S_POD_NAME"),
            pod_namespace: get("K8S_POD_NAMESPACE"),
            infra_container_id: get("K8S_POD_INFRA_CONTAINER_ID"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kubernetes_args() {
        let a = CniArgs::parse("IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=abc;")
            .unwrap();
        assert_eq!(a.get("IgnoreUnknown"), Some("1"));
        assert_eq!(
            a.k8s(),
            K8sArgs {
                pod_name: "web-0".into(),
                pod_namespace: "default".into(),
                infra_container_id: "abc".into()
            }
        );
        assert_eq!(CniArgs::parse("").unwrap().k8s(), K8sArgs::default());
        assert_eq!(CniArgs::parse("A=b=c").unwrap().get("A"), Some("b=c"));
    }

    #[test]
    fn rejects_a_pair_without_equals() {
        assert_eq!(
            CniArgs::parse("A=1;junk").unwrap_err().code,
            code::INVALID_ENVIRONMENT_VARIABLES
        );
    }
}
