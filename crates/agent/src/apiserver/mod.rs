//! The agent API on `apiPort` (HTTPS, HTTP/1.1, on `apiBindAddress`): `/livez` (the process
//! answers), `/readyz` (200 once every [`Readiness`] condition holds, else 503 naming those
//! that do not — what a DaemonSet's readiness probe reads), `/metrics` (Prometheus text: the
//! registries the agent's parts add — the HNS healing metrics on Windows — and the per-rule
//! NetworkPolicy metrics), `/v1/networkpolicies`
//! (`?pod=namespace/name` for one Pod; a JSON [`PolicyReport`], what `antctl` shows) and
//! `/v1/pipeline` (a JSON [`PipelineReport`]: the bridge's tables and their flow counts). It
//! starts before the agent waits for its Node, so a probe gets an answer from the first moment.
//! The probes are open; every other path needs a bearer token ([`auth`]): 401 without one the
//! agent accepts, 403 when its holder may not `get` the path.

mod auth;
mod error;
pub mod local_access;
mod pipeline_report;
mod policy_metrics;
mod readiness;
mod serve;
mod tls;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use openflow::conn::OfConnection;
use prometheus_client::encoding::text;
use prometheus_client::registry::Registry;
use tokio::sync::{mpsc, oneshot};

pub use auth::{ApiAuth, Verdict};
pub use error::ApiSetupError;
pub use pipeline_report::{PipelineReport, TableReport};
pub use policy_metrics::PolicyRuleMetrics;
pub use readiness::Readiness;
pub use serve::{ServeLimits, listen, serve};
pub use tls::ServingIdentity;

use crate::cluster::ObjectKey;
use crate::controller::{PolicyQuery, PolicyReport};

/// The readiness flag set once bring-up is done.
pub const READY_NODE: &str = "node";
/// The readiness flag set once the CNI server listens.
pub const READY_CNI: &str = "cni-server";
/// The readiness probe of the shared reflectors (Kubernetes mode).
pub const READY_REFLECTORS: &str = "reflectors";

/// How long a request waits for the NetworkPolicy controller (busy installing a large bundle).
const POLICY_ANSWER: Duration = Duration::from_secs(10);
/// How long a request waits for the switch's flow dump.
const SWITCH_ANSWER: Duration = Duration::from_secs(10);

/// What the API serves; shared by the agent's stages, which report into it.
#[derive(Debug)]
pub struct AgentApi {
    readiness: Readiness,
    registries: Mutex<Vec<Registry>>,
    rules: Arc<PolicyRuleMetrics>,
    policy: OnceLock<mpsc::Sender<PolicyQuery>>,
    switch: OnceLock<OfConnection>,
}

impl Default for AgentApi {
    fn default() -> AgentApi {
        let rules = Arc::new(PolicyRuleMetrics::default());
        let mut registry = Registry::default();
        registry.register_collector(Box::new(rules.clone()));
        AgentApi {
            readiness: Readiness::waiting_for(&[READY_NODE, READY_CNI]),
            registries: Mutex::new(vec![registry]),
            rules,
            policy: OnceLock::new(),
            switch: OnceLock::new(),
        }
    }
}

impl AgentApi {
    /// The conditions `/readyz` reports.
    pub fn readiness(&self) -> &Readiness {
        &self.readiness
    }

    /// Adds a part's registry to those `/metrics` encodes (each part of the agent registers
    /// its metrics in a registry of its own, then hands it over).
    pub fn add_registry(&self, registry: Registry) {
        self.registries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(registry);
    }

    /// From now on NetworkPolicy questions go to the controller behind `queries`.
    pub fn answer_policy_with(&self, queries: mpsc::Sender<PolicyQuery>) {
        let _ = self.policy.set(queries);
    }

    /// From now on `/v1/pipeline` reads the bridge through `conn`.
    pub fn read_pipeline_from(&self, conn: OfConnection) {
        let _ = self.switch.set(conn);
    }

    /// The bridge's tables and their flows, read from the switch.
    pub async fn pipeline_report(&self) -> Result<PipelineReport, String> {
        let conn = self
            .switch
            .get()
            .ok_or("the bridge's OpenFlow connection is not up yet")?;
        match tokio::time::timeout(SWITCH_ANSWER, PipelineReport::read(conn)).await {
            Ok(Ok(report)) => Ok(report),
            Ok(Err(error)) => Err(format!("the bridge's flows not read: {error}")),
            Err(_) => Err(format!(
                "the switch did not answer the flow dump within {SWITCH_ANSWER:?}"
            )),
        }
    }

    /// The NetworkPolicy controller's report.
    pub async fn policy_report(&self, pod: Option<ObjectKey>) -> Result<PolicyReport, String> {
        let queries = self
            .policy
            .get()
            .ok_or("the NetworkPolicy controller is not running yet")?;
        let (reply, answer) = oneshot::channel();
        queries
            .send(PolicyQuery { pod, reply })
            .await
            .map_err(|_| "the NetworkPolicy controller has stopped")?;
        match tokio::time::timeout(POLICY_ANSWER, answer).await {
            Ok(Ok(report)) => report,
            Ok(Err(_)) => Err("the NetworkPolicy controller has stopped".to_owned()),
            Err(_) => Err(format!(
                "the NetworkPolicy controller did not answer within {POLICY_ANSWER:?}"
            )),
        }
    }

    /// The Prometheus text of every metric, the per-rule ones refreshed first.
    async fn metrics(&self) -> String {
        match self.policy_report(None).await {
            Ok(report) => self.rules.update(report.rules),
            Err(reason) => tracing::debug!("NetworkPolicy rule metrics not refreshed: {reason}"),
        }
        let mut text = String::new();
        let registries = self
            .registries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let encoded = registries
            .iter()
            .try_for_each(|registry| text::encode_registry(&mut text, registry))
            .and_then(|()| text::encode_eof(&mut text));
        if let Err(error) = encoded {
            tracing::warn!("metrics not encoded: {error}");
        }
        text
    }

    async fn handle(
        &self,
        auth: &ApiAuth,
        limits: &ServeLimits,
        request: Request<Incoming>,
    ) -> Response<Full<Bytes>> {
        if let Some(length) = content_length(&request)
            && length > limits.max_body_bytes
        {
            let mut response = reply(
                StatusCode::PAYLOAD_TOO_LARGE,
                "text/plain",
                format!(
                    "a body of {length} bytes; the agent API takes at most {}\n",
                    limits.max_body_bytes
                ),
            );
            response.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
            return response;
        }
        if request.method() != Method::GET {
            return reply(
                StatusCode::METHOD_NOT_ALLOWED,
                "text/plain",
                "only GET\n".into(),
            );
        }
        let path = request.uri().path();
        if !OPEN_PATHS.contains(&path) {
            match auth.check(request.headers(), path).await {
                Verdict::Allowed => {}
                Verdict::Unauthenticated(reason) => {
                    let mut response = reply(
                        StatusCode::UNAUTHORIZED,
                        "text/plain",
                        format!("{reason}\n"),
                    );
                    response.headers_mut().insert(
                        header::WWW_AUTHENTICATE,
                        header::HeaderValue::from_static("Bearer"),
                    );
                    return response;
                }
                Verdict::Forbidden(reason) => {
                    return reply(StatusCode::FORBIDDEN, "text/plain", format!("{reason}\n"));
                }
                Verdict::Unavailable(reason) => {
                    return reply(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "text/plain",
                        format!("{reason}\n"),
                    );
                }
            }
        }
        match path {
            "/livez" => reply(StatusCode::OK, "text/plain", "ok\n".into()),
            "/readyz" => {
                let unready = self.readiness.unready();
                if unready.is_empty() {
                    reply(StatusCode::OK, "text/plain", "ok\n".into())
                } else {
                    let text = format!("not ready: {}\n", unready.join(", "));
                    reply(StatusCode::SERVICE_UNAVAILABLE, "text/plain", text)
                }
            }
            "/metrics" => reply(
                StatusCode::OK,
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                self.metrics().await,
            ),
            "/v1/networkpolicies" => {
                let pod = match pod_parameter(request.uri().query()) {
                    Ok(pod) => pod,
                    Err(reason) => return reply(StatusCode::BAD_REQUEST, "text/plain", reason),
                };
                json_reply(self.policy_report(pod).await)
            }
            "/v1/pipeline" => json_reply(self.pipeline_report().await),
            other => reply(
                StatusCode::NOT_FOUND,
                "text/plain",
                format!(
                    "no {other} here: /livez, /readyz, /metrics, /v1/networkpolicies, /v1/pipeline\n"
                ),
            ),
        }
    }
}

/// The paths served without credentials: the probes.
const OPEN_PATHS: &[&str] = &["/livez", "/readyz"];

/// The body length a request announces, if any.
fn content_length(request: &Request<Incoming>) -> Option<u64> {
    request
        .headers()
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

/// The `pod=namespace/name` parameter, if any.
fn pod_parameter(query: Option<&str>) -> Result<Option<ObjectKey>, String> {
    let Some(query) = query else { return Ok(None) };
    for pair in query.split('&') {
        if let Some(value) = pair.strip_prefix("pod=") {
            return match value.split_once("%2F").or_else(|| value.split_once('/')) {
                Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() => {
                    Ok(Some(ObjectKey::new(namespace, name)))
                }
                _ => Err(format!("pod={value}: expected namespace/name\n")),
            };
        }
    }
    Ok(None)
}

/// `document` as JSON, or 503 with why there is none.
fn json_reply<T: serde::Serialize>(document: Result<T, String>) -> Response<Full<Bytes>> {
    match document {
        Ok(document) => match serde_json::to_string_pretty(&document) {
            Ok(json) => reply(StatusCode::OK, "application/json", json),
            Err(error) => reply(
                StatusCode::INTERNAL_SERVER_ERROR,
                "text/plain",
                format!("{error}\n"),
            ),
        },
        Err(reason) => reply(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            format!("{reason}\n"),
        ),
    }
}

fn reply(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = header::HeaderValue::from_str(content_type) {
        response.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pod_parameter_is_namespace_slash_name() {
        assert_eq!(pod_parameter(None), Ok(None));
        assert_eq!(pod_parameter(Some("x=1")), Ok(None));
        assert_eq!(
            pod_parameter(Some("pod=x%2Fa")),
            Ok(Some(ObjectKey::new("x", "a")))
        );
        assert_eq!(
            pod_parameter(Some("pod=x/a")),
            Ok(Some(ObjectKey::new("x", "a")))
        );
        assert!(pod_parameter(Some("pod=a")).is_err());
        assert!(pod_parameter(Some("pod=/a")).is_err());
    }
}
