//! The Services of the pipeline's scale benchmarks: Service `i` of 10,000 with one TCP port and
//! [`ENDPOINTS`] endpoints.
#![allow(dead_code)] // each benchmark uses a different part

use std::net::Ipv4Addr;

use model::{
    Endpoint, EndpointConditions, Protocol, Service, ServiceKey, ServicePort, SessionAffinity,
    TrafficPolicy,
};

/// Endpoints per Service.
pub const ENDPOINTS: usize = 10;

/// Service `i`: cluster IP `10.96.x.y`, TCP port 80, endpoints on 8080 spread over
/// `10.244.0.0/16` (`generation` shifts the first endpoint, for the change).
pub fn service(i: usize, generation: usize) -> Service {
    let endpoints = (0..ENDPOINTS)
        .map(|j| {
            let n = i * ENDPOINTS + j + if j == 0 { generation * 7919 } else { 0 };
            Endpoint {
                ip: Ipv4Addr::new(10, 244, (n / 250 % 256) as u8, (n % 250 + 2) as u8),
                port: 8080,
                conditions: EndpointConditions {
                    ready: true,
                    serving: true,
                    terminating: false,
                },
                node: Some(format!("n{}", n % 50)),
                is_local: n.is_multiple_of(50),
            }
        })
        .collect();
    Service {
        key: ServiceKey::new(format!("ns{}", i / 100), format!("svc{i}")),
        cluster_ips: vec![Ipv4Addr::new(10, 96, (i / 250) as u8, (i % 250 + 1) as u8)],
        external_ips: Vec::new(),
        load_balancer_ips: Vec::new(),
        ports: vec![ServicePort {
            name: "http".to_owned(),
            protocol: Protocol::Tcp,
            port: 80,
            node_port: None,
            endpoints,
        }],
        session_affinity: SessionAffinity::None,
        external_traffic_policy: TrafficPolicy::Cluster,
        internal_traffic_policy: TrafficPolicy::Cluster,
        health_check_node_port: None,
    }
}
