//! Request paths: which endpoint (`/version`, discovery, OpenAPI, the review APIs, collection,
//! object) a path names.

use crate::resource::ResourceType;

/// A parsed request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/version`.
    Version,
    /// `/api`.
    CoreVersions,
    /// `/apis`.
    Groups,
    /// `/openapi/v2`.
    OpenApiV2,
    /// `/openapi/v3`.
    OpenApiV3Index,
    /// `/openapi/v3/api/v1`, `/openapi/v3/apis/{group}/{version}`.
    OpenApiV3 {
        /// API group ("" for core).
        group: String,
        /// API version.
        version: String,
    },
    /// `/apis/authentication.k8s.io/v1/tokenreviews`.
    TokenReviews,
    /// `/apis/authorization.k8s.io/v1/subjectaccessreviews`.
    SubjectAccessReviews,
    /// `/api/v1`, `/apis/{group}/{version}`.
    Resources {
        /// API group ("" for core).
        group: String,
        /// API version.
        version: String,
    },
    /// A collection: `.../{plural}` or `.../namespaces/{ns}/{plural}`.
    Collection {
        /// The resource.
        resource: ResourceType,
        /// Namespace from the path.
        namespace: Option<String>,
    },
    /// One object, optionally a subresource of it.
    Object {
        /// The resource.
        resource: ResourceType,
        /// Namespace from the path.
        namespace: Option<String>,
        /// Object name.
        name: String,
        /// Subresource (`status`), if any.
        subresource: Option<String>,
    },
}

/// Resolves `path` against the served `resources`; `None` when nothing is there.
pub fn parse(path: &str, resources: &[ResourceType]) -> Option<Route> {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match segments.as_slice() {
        ["version"] => return Some(Route::Version),
        ["api"] => return Some(Route::CoreVersions),
        ["apis"] => return Some(Route::Groups),
        ["openapi", "v2"] => return Some(Route::OpenApiV2),
        ["openapi", "v3"] => return Some(Route::OpenApiV3Index),
        ["openapi", "v3", "api", version] => {
            return Some(Route::OpenApiV3 {
                group: String::new(),
                version: (*version).to_owned(),
            });
        }
        ["openapi", "v3", "apis", group, version] => {
            return Some(Route::OpenApiV3 {
                group: (*group).to_owned(),
                version: (*version).to_owned(),
            });
        }
        ["apis", "authentication.k8s.io", "v1", "tokenreviews"] => {
            return Some(Route::TokenReviews);
        }
        ["apis", "authorization.k8s.io", "v1", "subjectaccessreviews"] => {
            return Some(Route::SubjectAccessReviews);
        }
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return None,
    };
    let find = |plural: &str| {
        resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .cloned()
    };
    let (resource, namespace, tail) = match rest {
        [] => {
            return Some(Route::Resources {
                group: group.to_owned(),
                version: version.to_owned(),
            });
        }
        ["namespaces", ns, plural, tail @ ..] if find(plural).is_some_and(|r| r.namespaced) => {
            (find(plural)?, Some((*ns).to_owned()), tail)
        }
        [plural, tail @ ..] => (find(plural)?, None, tail),
    };
    match tail {
        [] => Some(Route::Collection {
            resource,
            namespace,
        }),
        [name] => Some(Route::Object {
            resource,
            namespace,
            name: (*name).to_owned(),
            subresource: None,
        }),
        [name, sub] => Some(Route::Object {
            resource,
            namespace,
            name: (*name).to_owned(),
            subresource: Some((*sub).to_owned()),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(path: &str) -> Option<Route> {
        parse(path, &ResourceType::builtin())
    }

    #[test]
    fn namespaced_and_cluster_paths() {
        let pods = ResourceType::builtin()
            .into_iter()
            .find(|r| r.plural == "pods")
            .unwrap();
        assert_eq!(
            route("/api/v1/namespaces/ns1/pods/p/status"),
            Some(Route::Object {
                resource: pods.clone(),
                namespace: Some("ns1".into()),
                name: "p".into(),
                subresource: Some("status".into())
            })
        );
        assert_eq!(
            route("/api/v1/pods"),
            Some(Route::Collection {
                resource: pods,
                namespace: None
            })
        );
        let Some(Route::Object {
            resource,
            namespace: None,
            name,
            subresource: Some(sub),
        }) = route("/api/v1/namespaces/ns1/status")
        else {
            panic!("namespace status path misparsed");
        };
        assert_eq!(
            (resource.plural.as_str(), name.as_str(), sub.as_str()),
            ("namespaces", "ns1", "status")
        );
        assert!(matches!(
            route("/apis/networking.k8s.io/v1/namespaces/a/networkpolicies"),
            Some(Route::Collection {
                namespace: Some(_),
                ..
            })
        ));
        assert_eq!(route("/api/v1/widgets"), None);
        assert_eq!(route("/apis/discovery.k8s.io/v2/endpointslices"), None);
    }
}
