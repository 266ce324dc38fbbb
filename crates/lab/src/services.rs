//! The lab's Services (`up --api fake`): which Services exist, their cluster IPs, ports, node
//! ports, traffic policies and load-balancer IPs, which Pods each selects (through the labels
//! [`pod_labels`] gives every Pod) or, for `kube-dns`, which Pod the lab names in its
//! EndpointSlice, and the DNS names the lab's DNS answerer serves for them.
//! Pure data derived from the topology, so `up` creates exactly what `check` probes.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;

use crate::plan::{NodePlan, PodPlan, SERVE_PORT_NAME, Topology};

/// The Service CIDR the agents route into the datapath (`serviceCIDR`): Kubernetes' default,
/// which holds every cluster IP below.
pub const SERVICE_CIDR: Ipv4Net = Ipv4Net::new_assert(Ipv4Addr::new(10, 96, 0, 0), 12);
/// The cluster DNS domain.
pub const CLUSTER_DOMAIN: &str = "cluster.local";
/// The DNS Service's name and namespace, as in a kubeadm cluster.
pub const DNS_SERVICE: (&str, &str) = ("kube-system", "kube-dns");
/// The DNS Service's cluster IP: what every Pod's resolv.conf names (kubelet's `clusterDNS`).
pub const DNS_IP: Ipv4Addr = Ipv4Addr::new(10, 96, 0, 10);
/// The DNS port, UDP and TCP.
pub const DNS_PORT: u16 = 53;
/// The Service port of every lab Service that reaches `serve`.
pub const WEB_PORT: u16 = 80;
/// `lab-web`: Pod 1 of each of the first [`WEB_BACKEND_NODES`] Nodes.
pub const WEB_SERVICE: &str = "lab-web";
/// `lab-web`'s cluster IP.
pub const WEB_IP: Ipv4Addr = Ipv4Addr::new(10, 96, 0, 20);
/// `lab-web`'s backends are Pod 1 of each of the first this many Nodes.
pub const WEB_BACKEND_NODES: u8 = 3;
/// The NodePort Service (`externalTrafficPolicy: Cluster`), whose one endpoint is `lab-n1-p1`.
pub const NODE_PORT_SERVICE: &str = "lab-nodeport";
/// Its cluster IP.
pub const NODE_PORT_IP: Ipv4Addr = Ipv4Addr::new(10, 96, 0, 30);
/// Its node port.
pub const NODE_PORT: u16 = 30080;
/// The NodePort Service with `externalTrafficPolicy: Local`, whose endpoints are Pod 1 of
/// every Node.
pub const LOCAL_NODE_PORT_SERVICE: &str = "lab-etp-local";
/// Its cluster IP.
pub const LOCAL_NODE_PORT_IP: Ipv4Addr = Ipv4Addr::new(10, 96, 0, 31);
/// Its node port.
pub const LOCAL_NODE_PORT: u16 = 30081;
/// The LoadBalancer Service, whose one endpoint is Pod 1 of the last Node.
pub const LB_SERVICE: &str = "lab-lb";
/// Its cluster IP.
pub const LB_CLUSTER_IP: Ipv4Addr = Ipv4Addr::new(10, 96, 0, 40);
/// Its node port (a LoadBalancer Service has one).
pub const LB_NODE_PORT: u16 = 30082;
/// Its `status.loadBalancer.ingress` IP, outside the LAN; `lab-ext` routes it to [`LB_NODE`].
pub const LB_IP: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 10);
/// The Node `lab-ext` sends load-balancer traffic to (what a cloud load balancer or a BGP
/// speaker would do for the outside).
pub const LB_NODE: NodePlan = NodePlan { index: 1 };

/// The label every Pod carries with its own name, so a Service can select exactly one Pod.
pub const POD_LABEL: &str = "antrea-lab/pod";
/// The label `lab-web` selects.
pub const WEB_LABEL: &str = "antrea-lab/service";
/// The label Pod 1 of every Node carries (`true`): the endpoints of the ETP Local Service.
pub const NODE_FIRST_LABEL: &str = "antrea-lab/first-on-node";

/// A Service's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceType {
    /// `ClusterIP`.
    ClusterIp,
    /// `NodePort`.
    NodePort,
    /// `LoadBalancer`.
    LoadBalancer,
}

impl ServiceType {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceType::ClusterIp => "ClusterIP",
            ServiceType::NodePort => "NodePort",
            ServiceType::LoadBalancer => "LoadBalancer",
        }
    }
}

/// A transport protocol of a Service port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Transport {
    /// TCP.
    Tcp,
    /// UDP.
    Udp,
}

impl Transport {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Transport::Tcp => "TCP",
            Transport::Udp => "UDP",
        }
    }

    /// The protocol word of an OpenFlow match (`tcp`, `udp`).
    pub fn flow_word(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Udp => "udp",
        }
    }
}

/// Where a Service port sends traffic on its endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetPort {
    /// A container port by name.
    Named(&'static str),
    /// A port number.
    Number(u16),
}

/// How a Service gets its endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoints {
    /// It selects the Pods of its namespace with this label (key, value); the API server's
    /// EndpointSlice controller makes its slices.
    Selector(&'static str, String),
    /// It has no selector and the lab writes its one EndpointSlice naming this Pod, as for a
    /// Service whose endpoints it cannot select (`kube-dns` lives in `kube-system`, its Pod in
    /// `default`, and a selector only reaches Pods of the Service's own namespace).
    Pod(PodPlan),
}

/// One port of a lab Service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabServicePort {
    /// The port's name.
    pub name: &'static str,
    /// Its protocol.
    pub transport: Transport,
    /// The Service port.
    pub port: u16,
    /// The endpoints' port.
    pub target: TargetPort,
    /// The node port (NodePort and LoadBalancer Services).
    pub node_port: Option<u16>,
}

/// One Service the lab creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabService {
    /// Its name.
    pub name: String,
    /// Its namespace.
    pub namespace: &'static str,
    /// Its type.
    pub service_type: ServiceType,
    /// Its cluster IP (the fake API server allocates none).
    pub cluster_ip: Ipv4Addr,
    /// Its ports.
    pub ports: Vec<LabServicePort>,
    /// Where its endpoints come from.
    pub endpoints: Endpoints,
    /// `externalTrafficPolicy: Local` (otherwise `Cluster`, the default, left unset).
    pub external_traffic_local: bool,
    /// The `status.loadBalancer.ingress` IP (LoadBalancer Services).
    pub load_balancer_ip: Option<Ipv4Addr>,
}

impl LabService {
    /// Its DNS name, `<name>.<namespace>.svc.cluster.local`.
    pub fn dns_name(&self) -> String {
        format!("{}.{}.svc.{CLUSTER_DOMAIN}", self.name, self.namespace)
    }
}

fn web_port(node_port: Option<u16>) -> LabServicePort {
    LabServicePort {
        name: "http",
        transport: Transport::Tcp,
        port: WEB_PORT,
        target: TargetPort::Named(SERVE_PORT_NAME),
        node_port,
    }
}

fn web_service(
    name: &str,
    service_type: ServiceType,
    cluster_ip: Ipv4Addr,
    node_port: Option<u16>,
    endpoints: Endpoints,
) -> LabService {
    LabService {
        name: name.to_owned(),
        namespace: "default",
        service_type,
        cluster_ip,
        ports: vec![web_port(node_port)],
        endpoints,
        external_traffic_local: false,
        load_balancer_ip: None,
    }
}

/// The Pod that runs the DNS answerer: the last Pod of the last Node.
pub fn dns_pod(topology: &Topology) -> PodPlan {
    PodPlan {
        node: topology.nodes,
        index: topology.pods_per_node,
    }
}

/// The per-Node ClusterIP Service of `node`: `lab-local-nK`, cluster IP 10.96.1.K, whose only
/// endpoint is Pod 1 of that Node.
pub fn node_local_service(node: NodePlan) -> LabService {
    web_service(
        &format!("lab-local-n{}", node.index),
        ServiceType::ClusterIp,
        Ipv4Addr::new(10, 96, 1, node.index),
        None,
        Endpoints::Selector(POD_LABEL, first_pod(node).name()),
    )
}

/// Pod 1 of `node`.
pub fn first_pod(node: NodePlan) -> PodPlan {
    PodPlan {
        node: node.index,
        index: 1,
    }
}

/// Every Service of a lab of `topology`, in creation order.
pub fn lab_services(topology: &Topology) -> Vec<LabService> {
    let last_node = NodePlan {
        index: topology.nodes,
    };
    let mut services = vec![
        LabService {
            name: DNS_SERVICE.1.to_owned(),
            namespace: DNS_SERVICE.0,
            service_type: ServiceType::ClusterIp,
            cluster_ip: DNS_IP,
            ports: vec![
                LabServicePort {
                    name: "dns",
                    transport: Transport::Udp,
                    port: DNS_PORT,
                    target: TargetPort::Number(DNS_PORT),
                    node_port: None,
                },
                LabServicePort {
                    name: "dns-tcp",
                    transport: Transport::Tcp,
                    port: DNS_PORT,
                    target: TargetPort::Number(DNS_PORT),
                    node_port: None,
                },
            ],
            endpoints: Endpoints::Pod(dns_pod(topology)),
            external_traffic_local: false,
            load_balancer_ip: None,
        },
        web_service(
            WEB_SERVICE,
            ServiceType::ClusterIp,
            WEB_IP,
            None,
            Endpoints::Selector(WEB_LABEL, WEB_SERVICE.to_owned()),
        ),
    ];
    services.extend(topology.nodes().map(node_local_service));
    services.push(web_service(
        NODE_PORT_SERVICE,
        ServiceType::NodePort,
        NODE_PORT_IP,
        Some(NODE_PORT),
        Endpoints::Selector(POD_LABEL, first_pod(NodePlan { index: 1 }).name()),
    ));
    services.push(LabService {
        external_traffic_local: true,
        ..web_service(
            LOCAL_NODE_PORT_SERVICE,
            ServiceType::NodePort,
            LOCAL_NODE_PORT_IP,
            Some(LOCAL_NODE_PORT),
            Endpoints::Selector(NODE_FIRST_LABEL, "true".to_owned()),
        )
    });
    services.push(LabService {
        load_balancer_ip: Some(LB_IP),
        ..web_service(
            LB_SERVICE,
            ServiceType::LoadBalancer,
            LB_CLUSTER_IP,
            Some(LB_NODE_PORT),
            Endpoints::Selector(POD_LABEL, first_pod(last_node).name()),
        )
    });
    services
}

/// The labels of `pod`: its own name, `lab-web`'s label on Pod 1 of the first
/// [`WEB_BACKEND_NODES`] Nodes, and [`NODE_FIRST_LABEL`] on Pod 1 of every Node.
pub fn pod_labels(pod: PodPlan) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::from([(POD_LABEL.to_owned(), pod.name())]);
    if pod.index == 1 {
        labels.insert(NODE_FIRST_LABEL.to_owned(), "true".to_owned());
        if pod.node <= WEB_BACKEND_NODES {
            labels.insert(WEB_LABEL.to_owned(), WEB_SERVICE.to_owned());
        }
    }
    labels
}

/// The A records the DNS answerer serves: each Service's name and cluster IP, sorted.
pub fn dns_records(services: &[LabService]) -> Vec<(String, Ipv4Addr)> {
    let mut records: Vec<_> = services
        .iter()
        .map(|s| (s.dns_name(), s.cluster_ip))
        .collect();
    records.sort();
    records
}

/// The Pods' DNS search list for namespace `namespace`.
pub fn dns_search(namespace: &str) -> Vec<String> {
    vec![
        format!("{namespace}.svc.{CLUSTER_DOMAIN}"),
        format!("svc.{CLUSTER_DOMAIN}"),
        CLUSTER_DOMAIN.to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Encap, Wiring};

    fn two_by_two() -> Topology {
        Topology::new(2, 2, Encap::Geneve, Wiring::Agent).unwrap()
    }

    #[test]
    fn every_cluster_ip_is_distinct_and_inside_the_service_cidr() {
        let services = lab_services(&Topology::new(80, 1, Encap::Geneve, Wiring::Agent).unwrap());
        let mut ips: Vec<Ipv4Addr> = services.iter().map(|s| s.cluster_ip).collect();
        assert!(ips.iter().all(|ip| SERVICE_CIDR.contains(ip)), "{ips:?}");
        ips.sort();
        ips.dedup();
        assert_eq!(ips.len(), services.len());
        assert!(!SERVICE_CIDR.contains(&LB_IP));
    }

    #[test]
    fn a_two_by_two_lab_has_its_services_and_their_endpoints() {
        let services = lab_services(&two_by_two());
        let names: Vec<(&str, &str)> = services
            .iter()
            .map(|s| (s.namespace, s.name.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("kube-system", "kube-dns"),
                ("default", "lab-web"),
                ("default", "lab-local-n1"),
                ("default", "lab-local-n2"),
                ("default", "lab-nodeport"),
                ("default", "lab-etp-local"),
                ("default", "lab-lb"),
            ]
        );
        assert_eq!(
            services[0].endpoints,
            Endpoints::Pod(PodPlan { node: 2, index: 2 })
        );
        assert_eq!(services[0].cluster_ip, DNS_IP);
        assert_eq!(
            services[3].endpoints,
            Endpoints::Selector(POD_LABEL, "lab-n2-p1".to_owned())
        );
        assert_eq!(services[3].cluster_ip, Ipv4Addr::new(10, 96, 1, 2));
        assert_eq!(
            services[6].endpoints,
            Endpoints::Selector(POD_LABEL, "lab-n2-p1".to_owned())
        );
        assert!(services[5].external_traffic_local);
        assert_eq!(services[6].load_balancer_ip, Some(LB_IP));
    }

    #[test]
    fn labels_let_each_service_select_what_it_should() {
        let p11 = pod_labels(PodPlan { node: 1, index: 1 });
        assert_eq!(p11[POD_LABEL], "lab-n1-p1");
        assert_eq!(p11[WEB_LABEL], "lab-web");
        assert_eq!(p11[NODE_FIRST_LABEL], "true");
        let p41 = pod_labels(PodPlan { node: 4, index: 1 });
        assert!(!p41.contains_key(WEB_LABEL));
        assert_eq!(p41[NODE_FIRST_LABEL], "true");
        assert_eq!(pod_labels(PodPlan { node: 1, index: 2 }).len(), 1);
    }

    #[test]
    fn dns_names_are_the_cluster_ones() {
        let records = dns_records(&lab_services(&two_by_two()));
        assert!(records.contains(&("kube-dns.kube-system.svc.cluster.local".to_owned(), DNS_IP)));
        assert!(records.contains(&(
            "lab-local-n1.default.svc.cluster.local".to_owned(),
            Ipv4Addr::new(10, 96, 1, 1)
        )));
        assert_eq!(
            dns_search("default"),
            [
                "default.svc.cluster.local",
                "svc.cluster.local",
                "cluster.local"
            ]
        );
    }
}
