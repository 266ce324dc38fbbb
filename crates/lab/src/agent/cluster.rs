//! The cluster's objects: `v1` Nodes (name, MAC annotation, podCIDR, InternalIP), Pods (name,
//! labels, nodeName, the named `serve` port, podIP, Ready) and the lab's Services (see
//! [`crate::services`]), each with its file name in the cluster directory and its collection in
//! the Kubernetes API. In the directory each is written atomically (a hidden temporary file
//! renamed into place), so an agent polling the directory never reads half a file.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::plan::{SERVE_PORT, SERVE_PORT_NAME};
use crate::services::{Endpoints, LabService, TargetPort};

/// `metadata`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metadata {
    /// The object's name.
    pub name: String,
    /// The namespace (Pods and Services).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Labels (a Service's backends carry the label it selects).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Annotations (Nodes: Antrea's `node.antrea.io/mac-address`, the NIC's MAC, which a peer
    /// needs to forward to this Node directly in noEncap mode).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The Node annotation with the transport NIC's MAC address.
pub const MAC_ANNOTATION: &str = "node.antrea.io/mac-address";

/// A `v1` Node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeObject {
    /// `v1`.
    pub api_version: String,
    /// `Node`.
    pub kind: String,
    /// Name.
    pub metadata: Metadata,
    /// podCIDR(s).
    pub spec: NodeSpec,
    /// Addresses.
    pub status: NodeStatus,
}

/// `Node.spec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSpec {
    /// The Node's Pod CIDR.
    #[serde(rename = "podCIDR")]
    pub pod_cidr: String,
    /// The same, as the list newer clusters fill in.
    #[serde(rename = "podCIDRs")]
    pub pod_cidrs: Vec<String>,
}

/// `Node.status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeStatus {
    /// `InternalIP` (the Node IP) and `Hostname`.
    pub addresses: Vec<NodeAddress>,
}

/// One `Node.status.addresses` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeAddress {
    /// `InternalIP` or `Hostname`.
    #[serde(rename = "type")]
    pub address_type: String,
    /// The value.
    pub address: String,
}

/// A `v1` Pod.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodObject {
    /// `v1`.
    pub api_version: String,
    /// `Pod`.
    pub kind: String,
    /// Name and namespace.
    pub metadata: Metadata,
    /// nodeName and one container.
    pub spec: PodSpec,
    /// podIP(s).
    pub status: PodStatus,
}

/// `Pod.spec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    /// The Node the Pod runs on.
    pub node_name: String,
    /// One container (the lab's `serve` answerer), since the API requires at least one.
    pub containers: Vec<Container>,
}

/// `Pod.spec.containers[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Container {
    /// Container name.
    pub name: String,
    /// Image (descriptive only).
    pub image: String,
    /// The `serve` answerer's port, named so a Service can target it by name.
    pub ports: Vec<ContainerPort>,
}

/// `Pod.spec.containers[].ports[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerPort {
    /// The port's name.
    pub name: String,
    /// The port number.
    pub container_port: u16,
    /// `TCP`.
    pub protocol: String,
}

/// `Pod.status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodStatus {
    /// `Running`.
    pub phase: String,
    /// The Node IP.
    #[serde(rename = "hostIP")]
    pub host_ip: String,
    /// The Pod IP.
    #[serde(rename = "podIP")]
    pub pod_ip: String,
    /// The same, as a list.
    #[serde(rename = "podIPs")]
    pub pod_ips: Vec<PodIp>,
    /// `Ready`: `True` (what the EndpointSlice controller reads for the endpoint's readiness).
    pub conditions: Vec<PodCondition>,
}

/// One `Pod.status.conditions` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodCondition {
    /// The condition type.
    #[serde(rename = "type")]
    pub condition_type: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
}

/// A `v1` Service.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceObject {
    /// `v1`.
    pub api_version: String,
    /// `Service`.
    pub kind: String,
    /// Name and namespace.
    pub metadata: Metadata,
    /// Type, cluster IP, selector, ports, traffic policy.
    pub spec: ServiceSpec,
    /// The load balancer's ingress IP (LoadBalancer Services).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ServiceStatus>,
}

/// `Service.spec`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceSpec {
    /// `ClusterIP`, `NodePort` or `LoadBalancer`.
    #[serde(rename = "type")]
    pub service_type: String,
    /// The cluster IP (the fake API server allocates none, so the lab chooses it).
    #[serde(rename = "clusterIP")]
    pub cluster_ip: String,
    /// The same, as a list.
    #[serde(rename = "clusterIPs")]
    pub cluster_ips: Vec<String>,
    /// The labels of the Pods it selects (none: its EndpointSlices are written by hand).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub selector: BTreeMap<String, String>,
    /// Its ports.
    pub ports: Vec<ServicePort>,
    /// `Local` when set (unset: `Cluster`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_traffic_policy: Option<String>,
}

/// `Service.spec.ports[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    /// The port's name.
    pub name: String,
    /// `TCP` or `UDP`.
    pub protocol: String,
    /// The Service port.
    pub port: u16,
    /// The Pods' container port, by name or number.
    pub target_port: TargetPortValue,
    /// The node port (NodePort and LoadBalancer Services).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_port: Option<u16>,
}

/// `targetPort`: the API's IntOrString.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum TargetPortValue {
    /// A container port's name.
    Name(String),
    /// A port number.
    Number(u16),
}

/// `Service.status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceStatus {
    /// `loadBalancer`.
    pub load_balancer: LoadBalancerStatus,
}

/// `Service.status.loadBalancer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadBalancerStatus {
    /// `ingress`: the load balancer's addresses.
    pub ingress: Vec<PodIp>,
}

/// A `discovery.k8s.io/v1` EndpointSlice the lab writes for a Service without a selector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointSliceObject {
    /// `discovery.k8s.io/v1`.
    pub api_version: String,
    /// `EndpointSlice`.
    pub kind: String,
    /// Name, namespace and the `kubernetes.io/service-name` label.
    pub metadata: Metadata,
    /// `IPv4`.
    pub address_type: String,
    /// Its endpoints.
    pub endpoints: Vec<SliceEndpoint>,
    /// Its ports: the Service's, by name, with the target port's number.
    pub ports: Vec<SlicePort>,
}

/// `EndpointSlice.endpoints[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SliceEndpoint {
    /// The Pod's address.
    pub addresses: Vec<String>,
    /// `ready: true`.
    pub conditions: BTreeMap<String, bool>,
    /// The Pod's Node.
    pub node_name: String,
}

/// `EndpointSlice.ports[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlicePort {
    /// The Service port's name.
    pub name: String,
    /// `TCP` or `UDP`.
    pub protocol: String,
    /// The endpoint's port.
    pub port: u16,
}

/// The label naming an EndpointSlice's Service.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";

/// One `Pod.status.podIPs` or `Service.status.loadBalancer.ingress` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodIp {
    /// The address.
    pub ip: String,
}

/// An object the lab publishes: where it goes in the cluster directory and in the API.
pub trait ClusterObject: Serialize {
    /// The file name in the cluster directory.
    fn file_name(&self) -> String;
    /// The API path of its collection, where it is created (`POST`).
    fn collection_path(&self) -> String;
}

impl ClusterObject for NodeObject {
    fn file_name(&self) -> String {
        format!("node-{}.yaml", self.metadata.name)
    }

    fn collection_path(&self) -> String {
        "/api/v1/nodes".to_owned()
    }
}

impl ClusterObject for PodObject {
    fn file_name(&self) -> String {
        format!("pod-{}.yaml", self.metadata.name)
    }

    fn collection_path(&self) -> String {
        format!(
            "/api/v1/namespaces/{}/pods",
            self.metadata.namespace.as_deref().unwrap_or("default")
        )
    }
}

impl ClusterObject for ServiceObject {
    fn file_name(&self) -> String {
        format!("service-{}.yaml", self.metadata.name)
    }

    fn collection_path(&self) -> String {
        format!(
            "/api/v1/namespaces/{}/services",
            self.metadata.namespace.as_deref().unwrap_or("default")
        )
    }
}

impl ClusterObject for EndpointSliceObject {
    fn file_name(&self) -> String {
        format!("endpointslice-{}.yaml", self.metadata.name)
    }

    fn collection_path(&self) -> String {
        format!(
            "/apis/discovery.k8s.io/v1/namespaces/{}/endpointslices",
            self.metadata.namespace.as_deref().unwrap_or("default")
        )
    }
}

impl EndpointSliceObject {
    /// The slice of `service` (a Service without a selector) with one ready endpoint: `ip` on
    /// `node`; `None` for a Service whose port names a target port by name (only a selector's
    /// Pods resolve names).
    pub fn of(service: &LabService, ip: Ipv4Addr, node: &str) -> Option<EndpointSliceObject> {
        let ports = service
            .ports
            .iter()
            .map(|p| match p.target {
                TargetPort::Number(port) => Some(SlicePort {
                    name: p.name.into(),
                    protocol: p.transport.as_str().into(),
                    port,
                }),
                TargetPort::Named(_) => None,
            })
            .collect::<Option<Vec<_>>>()?;
        Some(EndpointSliceObject {
            api_version: "discovery.k8s.io/v1".into(),
            kind: "EndpointSlice".into(),
            metadata: Metadata {
                name: format!("{}-lab", service.name),
                namespace: Some(service.namespace.to_owned()),
                labels: BTreeMap::from([(SERVICE_NAME_LABEL.to_owned(), service.name.clone())]),
                annotations: BTreeMap::new(),
            },
            address_type: "IPv4".into(),
            endpoints: vec![SliceEndpoint {
                addresses: vec![ip.to_string()],
                conditions: BTreeMap::from([("ready".to_owned(), true)]),
                node_name: node.to_owned(),
            }],
            ports,
        })
    }
}

impl NodeObject {
    /// A lab Node; `mac` is its NIC's MAC (`02:00:0a:0a:00:0b`).
    pub fn new(name: &str, pod_cidr: &str, node_ip: Ipv4Addr, mac: &str) -> NodeObject {
        NodeObject {
            api_version: "v1".into(),
            kind: "Node".into(),
            metadata: Metadata {
                name: name.into(),
                namespace: None,
                labels: BTreeMap::new(),
                annotations: BTreeMap::from([(MAC_ANNOTATION.to_owned(), mac.to_owned())]),
            },
            spec: NodeSpec {
                pod_cidr: pod_cidr.into(),
                pod_cidrs: vec![pod_cidr.into()],
            },
            status: NodeStatus {
                addresses: vec![
                    NodeAddress {
                        address_type: "InternalIP".into(),
                        address: node_ip.to_string(),
                    },
                    NodeAddress {
                        address_type: "Hostname".into(),
                        address: name.into(),
                    },
                ],
            },
        }
    }
}

impl PodObject {
    /// A lab Pod in namespace `default` with `labels` (see [`crate::services::pod_labels`]),
    /// running on `node` and Ready.
    pub fn new(
        name: &str,
        node: &str,
        node_ip: Ipv4Addr,
        pod_ip: Ipv4Addr,
        labels: BTreeMap<String, String>,
    ) -> PodObject {
        PodObject {
            api_version: "v1".into(),
            kind: "Pod".into(),
            metadata: Metadata {
                name: name.into(),
                namespace: Some("default".into()),
                labels,
                annotations: BTreeMap::new(),
            },
            spec: PodSpec {
                node_name: node.into(),
                containers: vec![Container {
                    name: "serve".into(),
                    image: "antrea-lab serve".into(),
                    ports: vec![ContainerPort {
                        name: SERVE_PORT_NAME.into(),
                        container_port: SERVE_PORT,
                        protocol: "TCP".into(),
                    }],
                }],
            },
            status: PodStatus {
                phase: "Running".into(),
                host_ip: node_ip.to_string(),
                pod_ip: pod_ip.to_string(),
                pod_ips: vec![PodIp {
                    ip: pod_ip.to_string(),
                }],
                conditions: vec![PodCondition {
                    condition_type: "Ready".into(),
                    status: "True".into(),
                }],
            },
        }
    }
}

impl ServiceObject {
    /// The object of the lab Service `service`.
    pub fn of(service: &LabService) -> ServiceObject {
        let selector = match &service.endpoints {
            Endpoints::Selector(key, value) => BTreeMap::from([((*key).to_owned(), value.clone())]),
            Endpoints::Pod(_) => BTreeMap::new(),
        };
        ServiceObject {
            api_version: "v1".into(),
            kind: "Service".into(),
            metadata: Metadata {
                name: service.name.clone(),
                namespace: Some(service.namespace.to_owned()),
                labels: BTreeMap::new(),
                annotations: BTreeMap::new(),
            },
            spec: ServiceSpec {
                service_type: service.service_type.as_str().into(),
                cluster_ip: service.cluster_ip.to_string(),
                cluster_ips: vec![service.cluster_ip.to_string()],
                selector,
                ports: service
                    .ports
                    .iter()
                    .map(|p| ServicePort {
                        name: p.name.into(),
                        protocol: p.transport.as_str().into(),
                        port: p.port,
                        target_port: match &p.target {
                            TargetPort::Named(name) => TargetPortValue::Name((*name).into()),
                            TargetPort::Number(number) => TargetPortValue::Number(*number),
                        },
                        node_port: p.node_port,
                    })
                    .collect(),
                external_traffic_policy: service.external_traffic_local.then(|| "Local".into()),
            },
            status: service.load_balancer_ip.map(|ip| ServiceStatus {
                load_balancer: LoadBalancerStatus {
                    ingress: vec![PodIp { ip: ip.to_string() }],
                },
            }),
        }
    }
}

/// Writes `object` as YAML to `dir/file_name` through a hidden temporary file (which the
/// agent's directory source ignores) and a rename.
pub fn write_object<T: Serialize>(dir: &Path, file_name: &str, object: &T) -> io::Result<PathBuf> {
    let text = serde_saphyr::to_string(object)
        .map_err(|e| io::Error::other(format!("{file_name}: {e}")))?;
    let path = dir.join(file_name);
    let tmp = dir.join(format!(".{file_name}.tmp"));
    fs::write(&tmp, text)?;
    fs::rename(&tmp, &path)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn yaml_value<T: Serialize>(object: &T) -> serde_json::Value {
        serde_saphyr::from_str(&serde_saphyr::to_string(object).unwrap()).unwrap()
    }

    #[test]
    fn node_object_is_a_v1_node() {
        let n = NodeObject::new(
            "lab-n2",
            "10.244.2.0/24",
            Ipv4Addr::new(10, 10, 0, 12),
            "02:00:0a:0a:00:0c",
        );
        assert_eq!(n.file_name(), "node-lab-n2.yaml");
        assert_eq!(n.collection_path(), "/api/v1/nodes");
        assert_eq!(
            yaml_value(&n),
            json!({"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": "lab-n2",
                                "annotations": {"node.antrea.io/mac-address": "02:00:0a:0a:00:0c"}},
                   "spec": {"podCIDR": "10.244.2.0/24", "podCIDRs": ["10.244.2.0/24"]},
                   "status": {"addresses": [{"type": "InternalIP", "address": "10.10.0.12"},
                                            {"type": "Hostname", "address": "lab-n2"}]}})
        );
    }

    #[test]
    fn pod_object_is_a_v1_pod() {
        let p = PodObject::new(
            "lab-n1-p2",
            "lab-n1",
            Ipv4Addr::new(10, 10, 0, 11),
            Ipv4Addr::new(10, 244, 1, 3),
            BTreeMap::new(),
        );
        assert_eq!(p.file_name(), "pod-lab-n1-p2.yaml");
        assert_eq!(p.collection_path(), "/api/v1/namespaces/default/pods");
        assert_eq!(
            yaml_value(&p),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "lab-n1-p2", "namespace": "default"},
                   "spec": {"nodeName": "lab-n1", "containers": [{"name": "serve", "image": "antrea-lab serve",
                            "ports": [{"name": "serve", "containerPort": 8080, "protocol": "TCP"}]}]},
                   "status": {"phase": "Running", "hostIP": "10.10.0.11", "podIP": "10.244.1.3",
                              "podIPs": [{"ip": "10.244.1.3"}],
                              "conditions": [{"type": "Ready", "status": "True"}]}})
        );
        let backend = PodObject::new(
            "lab-n1-p1",
            "lab-n1",
            Ipv4Addr::new(10, 10, 0, 11),
            Ipv4Addr::new(10, 244, 1, 2),
            crate::services::pod_labels(crate::plan::PodPlan { node: 1, index: 1 }),
        );
        assert_eq!(
            yaml_value(&backend)["metadata"]["labels"],
            json!({"antrea-lab/service": "lab-web", "antrea-lab/pod": "lab-n1-p1",
                   "antrea-lab/first-on-node": "true"})
        );
    }

    #[test]
    fn lab_services_are_v1_services() {
        use crate::plan::{Encap, Topology, Wiring};
        let services = crate::services::lab_services(
            &Topology::new(2, 2, Encap::Geneve, Wiring::Agent).unwrap(),
        );
        let object = |name: &str| {
            let s = services.iter().find(|s| s.name == name).unwrap();
            ServiceObject::of(s)
        };
        let web = object("lab-web");
        assert_eq!(web.file_name(), "service-lab-web.yaml");
        assert_eq!(web.collection_path(), "/api/v1/namespaces/default/services");
        assert_eq!(
            yaml_value(&web),
            json!({"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": "lab-web", "namespace": "default"},
                   "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.20", "clusterIPs": ["10.96.0.20"],
                            "selector": {"antrea-lab/service": "lab-web"},
                            "ports": [{"name": "http", "protocol": "TCP", "port": 80, "targetPort": "serve"}]}})
        );
        let dns = object("kube-dns");
        assert_eq!(
            dns.collection_path(),
            "/api/v1/namespaces/kube-system/services"
        );
        assert_eq!(
            yaml_value(&dns)["spec"]["ports"],
            json!([{"name": "dns", "protocol": "UDP", "port": 53, "targetPort": 53},
                   {"name": "dns-tcp", "protocol": "TCP", "port": 53, "targetPort": 53}])
        );
        let local = yaml_value(&object("lab-etp-local"));
        assert_eq!(local["spec"]["type"], "NodePort");
        assert_eq!(local["spec"]["externalTrafficPolicy"], "Local");
        assert_eq!(local["spec"]["ports"][0]["nodePort"], 30081);
        let lb = yaml_value(&object("lab-lb"));
        assert_eq!(lb["spec"]["type"], "LoadBalancer");
        assert_eq!(
            lb["status"],
            json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}})
        );
    }

    #[test]
    fn write_object_leaves_only_the_final_file() {
        let dir =
            std::env::temp_dir().join(format!("antrea-lab-cluster-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let n = NodeObject::new(
            "lab-n1",
            "10.244.1.0/24",
            Ipv4Addr::new(10, 10, 0, 11),
            "02:00:0a:0a:00:0b",
        );
        let path = write_object(&dir, &n.file_name(), &n).unwrap();
        let names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["node-lab-n1.yaml"]);
        assert_eq!(
            yaml_value(&n),
            serde_saphyr::from_str::<serde_json::Value>(&fs::read_to_string(path).unwrap())
                .unwrap()
        );
        fs::remove_dir_all(&dir).unwrap();
    }
}
