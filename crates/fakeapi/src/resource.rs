//! The kinds the fake serves: one [`ResourceType`] per group/version/resource, and the built-in
//! table (core/v1, discovery.k8s.io/v1, networking.k8s.io/v1, events.k8s.io/v1,
//! coordination.k8s.io/v1 Leases, the cluster-wide rbac.authorization.k8s.io/v1 kinds) with the
//! short names and categories the upstream apiserver advertises for them.

/// One REST resource: where it lives in the URL space and how its objects are shaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceType {
    /// API group; empty for the core group (`/api/v1`).
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Plural resource name used in URLs, e.g. `pods`.
    pub plural: String,
    /// `kind` of one object, e.g. `Pod`.
    pub kind: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Whether the resource has a `status` subresource: PUT/PATCH on the main resource then keep
    /// the stored `status`, and PUT/PATCH on `/status` change only `status`.
    pub has_status: bool,
    /// Short names advertised in discovery (`po` for pods), which kubectl resolves.
    pub short_names: Vec<String>,
    /// Categories advertised in discovery (`all` for pods and services: `kubectl get all`).
    pub categories: Vec<String>,
}

impl ResourceType {
    /// A resource type from its parts.
    pub fn new(
        group: &str,
        version: &str,
        plural: &str,
        kind: &str,
        namespaced: bool,
        has_status: bool,
    ) -> Self {
        Self {
            group: group.to_owned(),
            version: version.to_owned(),
            plural: plural.to_owned(),
            kind: kind.to_owned(),
            namespaced,
            has_status,
            short_names: Vec::new(),
            categories: Vec::new(),
        }
    }

    /// The same resource advertising `names` as its short names.
    pub fn with_short_names(mut self, names: &[&str]) -> Self {
        self.short_names = names.iter().map(|n| (*n).to_owned()).collect();
        self
    }

    /// The same resource in the discovery `categories`.
    pub fn in_categories(mut self, categories: &[&str]) -> Self {
        self.categories = categories.iter().map(|c| (*c).to_owned()).collect();
        self
    }

    /// The id (see [`ResourceType::id`]) of the resource serving k8s-openapi type `K`.
    pub(crate) fn id_of<K: k8s_openapi::Resource>() -> String {
        format!("{}/{}/{}", K::GROUP, K::VERSION, K::URL_PATH_SEGMENT)
    }

    /// Stable identifier `group/version/plural` used as the storage key prefix.
    pub fn id(&self) -> String {
        format!("{}/{}/{}", self.group, self.version, self.plural)
    }

    /// The `apiVersion` field value: `v1` for core, `group/version` otherwise.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The table of resources every fake server starts with.
    pub fn builtin() -> Vec<ResourceType> {
        vec![
            Self::new("", "v1", "nodes", "Node", false, true).with_short_names(&["no"]),
            Self::new("", "v1", "namespaces", "Namespace", false, true).with_short_names(&["ns"]),
            Self::new("", "v1", "pods", "Pod", true, true)
                .with_short_names(&["po"])
                .in_categories(&["all"]),
            Self::new("", "v1", "services", "Service", true, true)
                .with_short_names(&["svc"])
                .in_categories(&["all"]),
            Self::new("", "v1", "endpoints", "Endpoints", true, false).with_short_names(&["ep"]),
            Self::new("", "v1", "events", "Event", true, false).with_short_names(&["ev"]),
            Self::new("", "v1", "configmaps", "ConfigMap", true, false).with_short_names(&["cm"]),
            Self::new("", "v1", "secrets", "Secret", true, false),
            Self::new("", "v1", "serviceaccounts", "ServiceAccount", true, false)
                .with_short_names(&["sa"]),
            Self::new(
                "discovery.k8s.io",
                "v1",
                "endpointslices",
                "EndpointSlice",
                true,
                false,
            ),
            Self::new(
                "networking.k8s.io",
                "v1",
                "networkpolicies",
                "NetworkPolicy",
                true,
                false,
            )
            .with_short_names(&["netpol"]),
            Self::new("events.k8s.io", "v1", "events", "Event", true, false)
                .with_short_names(&["ev"]),
            Self::new("apps", "v1", "daemonsets", "DaemonSet", true, false)
                .with_short_names(&["ds"])
                .in_categories(&["all"]),
            Self::new("apps", "v1", "deployments", "Deployment", true, false)
                .with_short_names(&["deploy"])
                .in_categories(&["all"]),
            Self::new("coordination.k8s.io", "v1", "leases", "Lease", true, false),
            Self::new(
                "rbac.authorization.k8s.io",
                "v1",
                "clusterroles",
                "ClusterRole",
                false,
                false,
            ),
            Self::new(
                "rbac.authorization.k8s.io",
                "v1",
                "clusterrolebindings",
                "ClusterRoleBinding",
                false,
                false,
            ),
            Self::new(
                "rbac.authorization.k8s.io",
                "v1",
                "roles",
                "Role",
                true,
                false,
            ),
            Self::new(
                "rbac.authorization.k8s.io",
                "v1",
                "rolebindings",
                "RoleBinding",
                true,
                false,
            ),
        ]
    }
}
