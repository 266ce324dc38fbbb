//! [`FromOutside`]: what the host needs so that Service traffic from outside reaches the
//! datapath (proxyAll): the NodePorts it DNATs to the virtual NodePort IP (on the Node
//! addresses `nodePortAddresses` allows, or all of them), and the `/32` routes via the gateway
//! of that IP and of the Services' external and load-balancer IPs (traffic routed to the Node
//! for them goes on to the datapath). Both follow the Services the datapath holds; with
//! proxyAll off there is nothing, so whatever an earlier run left goes.

use std::collections::BTreeSet;

use ipnet::Ipv4Net;
use model::{Protocol, Service, VIRTUAL_NODE_PORT_IP};

/// The host's part of Service traffic from outside, for some set of Services.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutsideTraffic {
    /// Every NodePort, each (protocol, port) once.
    pub node_ports: BTreeSet<(Protocol, u16)>,
    /// The `/32`s to route into the datapath: 169.254.0.252 with any NodePort, and each
    /// external and load-balancer IP.
    pub routes: BTreeSet<Ipv4Net>,
}

/// Whether (and on which addresses) the Node serves Service traffic from outside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromOutside {
    proxy_all: bool,
    node_port_addresses: Vec<Ipv4Net>,
}

impl FromOutside {
    /// With `proxy_all` off nothing; otherwise NodePorts on `node_port_addresses` (empty:
    /// every Node address).
    pub fn new(proxy_all: bool, node_port_addresses: Vec<Ipv4Net>) -> FromOutside {
        FromOutside {
            proxy_all,
            node_port_addresses,
        }
    }

    /// The addresses NodePorts are served on (empty: all of the Node's).
    pub fn node_port_addresses(&self) -> &[Ipv4Net] {
        &self.node_port_addresses
    }

    /// What `services` need from the host.
    pub fn wanted<'a>(&self, services: impl IntoIterator<Item = &'a Service>) -> OutsideTraffic {
        let mut wanted = OutsideTraffic::default();
        if !self.proxy_all {
            return wanted;
        }
        for service in services {
            wanted.node_ports.extend(
                service
                    .ports
                    .iter()
                    .filter_map(|p| p.node_port.map(|node_port| (p.protocol, node_port))),
            );
            wanted
                .routes
                .extend(service.outside_ips().into_iter().map(Ipv4Net::from));
        }
        if !wanted.node_ports.is_empty() {
            wanted.routes.insert(Ipv4Net::from(VIRTUAL_NODE_PORT_IP));
        }
        wanted
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use model::{ServiceKey, ServicePort, SessionAffinity, TrafficPolicy};

    use super::*;

    fn service(name: &str, node_ports: &[(Protocol, u16)], outside: &[[u8; 4]]) -> Service {
        Service {
            key: ServiceKey::new("default", name),
            cluster_ips: vec![Ipv4Addr::new(10, 96, 0, 10)],
            external_ips: outside.iter().map(|o| Ipv4Addr::from(*o)).collect(),
            load_balancer_ips: vec![Ipv4Addr::new(10, 96, 0, 10)],
            ports: node_ports
                .iter()
                .map(|(protocol, node_port)| ServicePort {
                    name: String::new(),
                    protocol: *protocol,
                    port: 80,
                    node_port: Some(*node_port),
                    endpoints: Vec::new(),
                })
                .collect(),
            session_affinity: SessionAffinity::None,
            external_traffic_policy: TrafficPolicy::Cluster,
            internal_traffic_policy: TrafficPolicy::Cluster,
            health_check_node_port: None,
        }
    }

    fn net(text: &str) -> Ipv4Net {
        text.parse().unwrap()
    }

    #[test]
    fn node_ports_and_outside_ips_of_every_service_each_once() {
        let a = service("a", &[(Protocol::Tcp, 30080), (Protocol::Udp, 30080)], &[]);
        let b = service(
            "b",
            &[(Protocol::Tcp, 30081)],
            &[[192, 0, 2, 10], [192, 0, 2, 10]],
        );
        let wanted = FromOutside::new(true, Vec::new()).wanted([&a, &b]);
        assert_eq!(
            wanted.node_ports.into_iter().collect::<Vec<_>>(),
            [
                (Protocol::Tcp, 30080),
                (Protocol::Tcp, 30081),
                (Protocol::Udp, 30080)
            ]
        );
        // The cluster IP listed as a load-balancer IP is routed by the Service CIDR, not here.
        assert_eq!(
            wanted.routes.into_iter().collect::<Vec<_>>(),
            [net("169.254.0.252/32"), net("192.0.2.10/32")]
        );
    }

    #[test]
    fn without_node_ports_169_254_0_252_is_not_routed_and_with_proxy_all_off_nothing_is() {
        let b = service("b", &[], &[[192, 0, 2, 10]]);
        let wanted = FromOutside::new(true, Vec::new()).wanted([&b]);
        assert_eq!(
            wanted.routes.into_iter().collect::<Vec<_>>(),
            [net("192.0.2.10/32")]
        );
        let a = service("a", &[(Protocol::Tcp, 30080)], &[[192, 0, 2, 10]]);
        assert_eq!(
            FromOutside::new(false, Vec::new()).wanted([&a]),
            OutsideTraffic::default()
        );
    }
}
