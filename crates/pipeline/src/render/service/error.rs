//! [`ServiceError`]: a Service the renderer refuses, with the Service's name and what is wrong.
//! A refused Service renders nothing; the Services already installed are not touched.

use model::{Protocol, ServiceKey};

/// Why a Service cannot be rendered.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ServiceError {
    #[error("Service {service}: port {name:?} has port number 0")]
    ZeroPort { service: ServiceKey, name: String },
    #[error("Service {service}: port {name:?} has an endpoint {ip} with target port 0")]
    ZeroTargetPort {
        service: ServiceKey,
        name: String,
        ip: std::net::Ipv4Addr,
    },
    #[error("Service {service} lists {protocol}/{port} twice")]
    DuplicatePort {
        service: ServiceKey,
        protocol: Protocol,
        port: u16,
    },
    #[error("Service {service} lists frontend IP {ip} twice")]
    DuplicateFrontend {
        service: ServiceKey,
        ip: std::net::Ipv4Addr,
    },
    #[error("Service {service}: ClientIP affinity with a timeout of 0 seconds")]
    ZeroAffinityTimeout { service: ServiceKey },
}
