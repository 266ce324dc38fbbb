//! [`HealthChecks`]: the `healthCheckNodePort` servers of `externalTrafficPolicy: Local`
//! Services, as kube-proxy runs them. A cloud load balancer probes each Node at the Service's
//! health check port and sends traffic only to Nodes that answer 200, the Nodes with a local
//! endpoint (a Node without one drops the Service's traffic from outside).
//!
//! One plain-HTTP listener per port on every address of the Node; every request is answered
//! with the Service and its local endpoint count, `200` with some and `503` with none:
//!
//! ```text
//! {"service":{"namespace":"default","name":"web"},"localEndpoints":1,"serviceProxyHealthy":true}
//! ```
//!
//! A listener lives while a Service has the port; the count is updated in place. A port that
//! cannot be bound (another process has it) is logged with the Service's name and tried again
//! at the next sync; the other Services' servers are unaffected. Each connection's headers must
//! arrive within [`HEADER_TIMEOUT`].

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use model::{Service, ServiceKey, TrafficPolicy};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long a client may take to send a request's headers.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// What one health check port answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthCheck {
    pub service: ServiceKey,
    /// The Service's ready local endpoints (distinct addresses).
    pub local_endpoints: usize,
}

impl HealthCheck {
    /// The health check `service` needs, if it has a `healthCheckNodePort`: its port and
    /// answer.
    pub fn of(service: &Service) -> Option<(u16, HealthCheck)> {
        let port = service.health_check_node_port?;
        let local: BTreeSet<Ipv4Addr> = service
            .ports
            .iter()
            .flat_map(|p| p.usable_endpoints(TrafficPolicy::Local))
            .filter(|e| e.conditions.ready)
            .map(|e| e.ip)
            .collect();
        Some((
            port,
            HealthCheck {
                service: service.key.clone(),
                local_endpoints: local.len(),
            },
        ))
    }

    fn response(&self) -> Response<Full<Bytes>> {
        let body = serde_json::json!({
            "service": {"namespace": self.service.namespace, "name": self.service.name},
            "localEndpoints": self.local_endpoints,
            "serviceProxyHealthy": true,
        });
        let status = if self.local_endpoints > 0 {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json"),
        );
        headers.insert(
            "x-content-type-options",
            hyper::header::HeaderValue::from_static("nosniff"),
        );
        response
    }
}

/// One port's server: its answer, updated in place, and the task serving it.
#[derive(Debug)]
struct Server {
    answer: watch::Sender<HealthCheck>,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The health check servers of one agent.
#[derive(Debug, Default)]
pub struct HealthChecks {
    servers: BTreeMap<u16, Server>,
}

impl HealthChecks {
    /// Makes the servers exactly `wanted`: a server per port, answering as given; a removed
    /// port is closed when this returns. Returns the ports that could not be bound (logged;
    /// tried again at the next call).
    pub async fn sync(&mut self, wanted: &BTreeMap<u16, HealthCheck>) -> Vec<u16> {
        let gone: Vec<u16> = self
            .servers
            .keys()
            .filter(|port| !wanted.contains_key(port))
            .copied()
            .collect();
        for port in gone {
            if let Some(mut server) = self.servers.remove(&port) {
                server.task.abort();
                // Once the task is gone, so is its listener: the port is closed on return.
                if let Err(error) = (&mut server.task).await
                    && error.is_panic()
                {
                    tracing::error!("health check server on port {port} had panicked: {error}");
                }
                tracing::info!(
                    "health check server on port {port} of Service {} stopped",
                    server.answer.borrow().service
                );
            }
        }
        let mut failed = Vec::new();
        for (port, check) in wanted {
            if let Some(server) = self.servers.get(port) {
                let changed = server.answer.send_if_modified(|answer| {
                    let changed = answer != check;
                    *answer = check.clone();
                    changed
                });
                if changed {
                    tracing::info!(
                        "health check of Service {} on port {port}: {} local endpoints",
                        check.service,
                        check.local_endpoints
                    );
                }
                continue;
            }
            match TcpListener::bind(SocketAddr::from((Ipv4Addr::UNSPECIFIED, *port))).await {
                Ok(listener) => {
                    let (answer, answers) = watch::channel(check.clone());
                    let task = tokio::spawn(serve(listener, answers));
                    tracing::info!(
                        "health check server of Service {} listening on port {port}: {} local endpoints",
                        check.service,
                        check.local_endpoints
                    );
                    self.servers.insert(*port, Server { answer, task });
                }
                Err(error) => {
                    tracing::warn!(
                        "health check server of Service {} cannot listen on port {port}: {error}; tried again at the next sync",
                        check.service
                    );
                    failed.push(*port);
                }
            }
        }
        failed
    }
}

/// Answers every request on `listener` with the current `answers` value.
async fn serve(listener: TcpListener, answers: watch::Receiver<HealthCheck>) {
    loop {
        let Ok((stream, peer)) = listener.accept().await else {
            continue;
        };
        let answers = answers.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |_: Request<hyper::body::Incoming>| {
                let response = answers.borrow().response();
                async move { Ok::<_, Infallible>(response) }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!("health check connection from {peer}: {error}");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use model::{Endpoint, EndpointConditions, Protocol, ServicePort, SessionAffinity};

    use super::*;

    fn endpoint(last: u8, is_local: bool, ready: bool) -> Endpoint {
        Endpoint {
            ip: Ipv4Addr::new(10, 244, 1, last),
            port: 8080,
            conditions: EndpointConditions {
                ready,
                serving: ready,
                terminating: false,
            },
            node: None,
            is_local,
        }
    }

    fn web(endpoints: Vec<Endpoint>) -> Service {
        Service {
            key: ServiceKey::new("default", "web"),
            cluster_ips: vec![Ipv4Addr::new(10, 96, 0, 10)],
            external_ips: Vec::new(),
            load_balancer_ips: Vec::new(),
            ports: vec![ServicePort {
                name: "http".into(),
                protocol: Protocol::Tcp,
                port: 80,
                node_port: Some(30080),
                endpoints,
            }],
            session_affinity: SessionAffinity::None,
            external_traffic_policy: TrafficPolicy::Local,
            internal_traffic_policy: TrafficPolicy::Cluster,
            health_check_node_port: Some(0),
        }
    }

    /// A free port, and a Service with it as its health check port.
    fn web_on_a_free_port(endpoints: Vec<Endpoint>) -> (u16, Service) {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut service = web(endpoints);
        service.health_check_node_port = Some(port);
        (port, service)
    }

    /// The status line and body a GET of `/` on `port` gets.
    fn get(port: u16) -> std::io::Result<(String, String)> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        stream.write_all(b"GET / HTTP/1.1\r\nHost: node\r\nConnection: close\r\n\r\n")?;
        let mut text = String::new();
        stream.read_to_string(&mut text)?;
        let status = text.lines().next().unwrap_or_default().to_owned();
        let body = text.split("\r\n\r\n").nth(1).unwrap_or_default().to_owned();
        Ok((status, body))
    }

    fn wanted(service: &Service) -> BTreeMap<u16, HealthCheck> {
        HealthCheck::of(service).into_iter().collect()
    }

    #[test]
    fn only_ready_local_endpoints_count_each_address_once() {
        let mut service = web(vec![
            endpoint(10, true, true),
            endpoint(11, false, true),
            endpoint(12, true, false),
        ]);
        service.ports.push(ServicePort {
            port: 443,
            ..service.ports[0].clone()
        });
        assert_eq!(HealthCheck::of(&service).unwrap().1.local_endpoints, 1);
        service.health_check_node_port = None;
        assert_eq!(HealthCheck::of(&service), None);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_200_with_local_endpoints_503_without_and_stops_with_the_service() {
        let (port, mut service) = web_on_a_free_port(vec![endpoint(10, true, true)]);
        let mut checks = HealthChecks::default();
        assert!(checks.sync(&wanted(&service)).await.is_empty());
        let (status, body) = tokio::task::spawn_blocking(move || get(port))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert_eq!(
            body,
            r#"{"localEndpoints":1,"service":{"name":"web","namespace":"default"},"serviceProxyHealthy":true}"#
        );

        // The endpoint moves to another Node: the same listener answers 503.
        service.ports[0].endpoints = vec![endpoint(10, false, true)];
        assert!(checks.sync(&wanted(&service)).await.is_empty());
        let (status, body) = tokio::task::spawn_blocking(move || get(port))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status, "HTTP/1.1 503 Service Unavailable");
        assert!(body.contains(r#""localEndpoints":0"#), "{body}");

        // The Service gone (or no longer Local): nothing listens once the sync returns.
        assert!(checks.sync(&BTreeMap::new()).await.is_empty());
        let refused = tokio::task::spawn_blocking(move || get(port))
            .await
            .unwrap();
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused),
            "{refused:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_port_taken_by_someone_else_is_reported_and_the_others_still_serve() {
        let taken = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
        let taken_port = taken.local_addr().unwrap().port();
        let (port, service) = web_on_a_free_port(vec![endpoint(10, true, true)]);
        let mut other = web(Vec::new());
        other.key = ServiceKey::new("default", "other");
        other.health_check_node_port = Some(taken_port);
        let mut both = wanted(&service);
        both.extend(wanted(&other));
        let mut checks = HealthChecks::default();
        assert_eq!(checks.sync(&both).await, [taken_port]);
        let (status, _) = tokio::task::spawn_blocking(move || get(port))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status, "HTTP/1.1 200 OK");
        // Freed, the next sync binds it.
        drop(taken);
        assert!(checks.sync(&both).await.is_empty());
        let (status, _) = tokio::task::spawn_blocking(move || get(taken_port))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(status, "HTTP/1.1 503 Service Unavailable");
    }
}
