//! The JSON schemas of the built-in kinds, generated from k8s-openapi's `JsonSchema`
//! implementations (named as upstream, `io.k8s.api.core.v1.Pod`), with the
//! `x-kubernetes-group-version-kind` extension clients use to find a kind's schema.

use crate::resource::ResourceType;
use k8s_openapi::api::{apps, coordination, core, discovery, events, networking, rbac};
use k8s_openapi::schemars::{JsonSchema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

/// Where references point: OpenAPI v3 components or OpenAPI v2 definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// `#/components/schemas/…`.
    V3,
    /// `#/definitions/…`.
    V2,
}

impl Flavor {
    /// The prefix of a `$ref` to a named schema.
    pub fn ref_prefix(self) -> &'static str {
        match self {
            Self::V3 => "#/components/schemas/",
            Self::V2 => "#/definitions/",
        }
    }
}

/// Named schemas of a set of kinds and everything they reference.
#[derive(Debug)]
pub struct Schemas {
    generator: SchemaGenerator,
    /// The kinds added: resource and its schema name.
    kinds: Vec<(ResourceType, String)>,
}

impl Schemas {
    /// An empty set whose references use `flavor`.
    pub fn new(flavor: Flavor) -> Self {
        let settings = match flavor {
            Flavor::V3 => SchemaSettings::openapi3(),
            Flavor::V2 => SchemaSettings::draft07().with(|s| {
                s.definitions_path = "/definitions".into();
                s.meta_schema = None;
            }),
        };
        Self {
            generator: settings.into_generator(),
            kinds: Vec::new(),
        }
    }

    /// Adds `resource`'s kind; returns its schema name, `None` for a kind without a schema
    /// (a custom resource).
    pub fn add(&mut self, resource: &ResourceType) -> Option<String> {
        let name = match (
            resource.group.as_str(),
            resource.version.as_str(),
            resource.kind.as_str(),
        ) {
            ("", "v1", "Node") => self.named::<core::v1::Node>(),
            ("", "v1", "Namespace") => self.named::<core::v1::Namespace>(),
            ("", "v1", "Pod") => self.named::<core::v1::Pod>(),
            ("", "v1", "Service") => self.named::<core::v1::Service>(),
            ("", "v1", "Endpoints") => self.named::<core::v1::Endpoints>(),
            ("", "v1", "Event") => self.named::<core::v1::Event>(),
            ("", "v1", "ConfigMap") => self.named::<core::v1::ConfigMap>(),
            ("", "v1", "ServiceAccount") => self.named::<core::v1::ServiceAccount>(),
            ("discovery.k8s.io", "v1", "EndpointSlice") => {
                self.named::<discovery::v1::EndpointSlice>()
            }
            ("networking.k8s.io", "v1", "NetworkPolicy") => {
                self.named::<networking::v1::NetworkPolicy>()
            }
            ("events.k8s.io", "v1", "Event") => self.named::<events::v1::Event>(),
            ("apps", "v1", "DaemonSet") => self.named::<apps::v1::DaemonSet>(),
            ("apps", "v1", "Deployment") => self.named::<apps::v1::Deployment>(),
            ("coordination.k8s.io", "v1", "Lease") => self.named::<coordination::v1::Lease>(),
            ("rbac.authorization.k8s.io", "v1", "ClusterRole") => {
                self.named::<rbac::v1::ClusterRole>()
            }
            ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding") => {
                self.named::<rbac::v1::ClusterRoleBinding>()
            }
            ("rbac.authorization.k8s.io", "v1", "Role") => self.named::<rbac::v1::Role>(),
            ("rbac.authorization.k8s.io", "v1", "RoleBinding") => {
                self.named::<rbac::v1::RoleBinding>()
            }
            _ => return None,
        };
        if !self.kinds.iter().any(|(r, _)| r == resource) {
            self.kinds.push((resource.clone(), name.clone()));
        }
        Some(name)
    }

    fn named<K: JsonSchema>(&mut self) -> String {
        self.generator.subschema_for::<K>();
        K::schema_name().into_owned()
    }

    /// Every named schema, the added kinds tagged with their group, version and kind.
    pub fn into_definitions(mut self) -> Map<String, Value> {
        let mut definitions = self.generator.take_definitions(true);
        for (resource, name) in &self.kinds {
            if let Some(Value::Object(schema)) = definitions.get_mut(name) {
                schema.insert(
                    "x-kubernetes-group-version-kind".into(),
                    json!([{"group": resource.group, "version": resource.version, "kind": resource.kind}]),
                );
            }
        }
        definitions
    }
}
