//! The agent API on `apiPort` (HTTPS, HTTP/1.1, on `apiBindAddress`): `/livez` (the process
//! answers), `/readyz` (200 once every [`Readiness`] condition holds, else 503 naming those
//! that do not — what a DaemonSet's readiness probe reads), `/metrics` (Prometheus text: the
//! registries the agent's parts add — the HNS healing metrics on Windows — and the per-rule
//! NetworkPolicy metrics), `/v1/networkpolicies`
//! (`?pod=namespace/name` for one Pod; a JSON [`PolicyReport`], what `antctl` shows) and
//! `/v1/pipeline` (a JSON [`PipelineReport`]: the bridge's tables and their flow counts),
//! `/v1/podinterfaces` (JSON [`PodInterfaceReport`]s: each Pod's port, OpenFlow port, address
//! and MAC as the CNI server recorded them), `/v1/ovsflows` (`?table=NAME`, `?pod=ns/name`; a
//! JSON [`FlowsReport`]: the switch's flows with table names), `/v1/tracepacket`
//! (`?pod=ns/name&destination=IP[:port]&protocol=tcp|udp|icmp`; a JSON [`TraceReport`]:
//! `ofproto/trace` per table and its verdict), `/v1/supportbundle` (a tar.gz: log, config,
//! OVSDB, flows, groups, HNS on Windows), `/v1/featuregates` (JSON [`FeatureGateReport`]s) and
//! `/v1/version` (a JSON [`VersionReport`]). Bad parameters get 400 (an unknown Pod 404) with
//! one line saying why. It starts before the agent waits for its Node, so a probe gets an answer from the first moment.
//! The probes are open; every other path needs a bearer token ([`auth`]): 401 without one the
//! agent accepts, 403 when its holder may not `get` the path.

mod agent_facts;
mod auth;
mod error;
pub mod local_access;
mod ovs_flows;
mod packet_trace;
mod pipeline_report;
mod pod_interfaces;
mod policy_metrics;
pub mod query;
mod readiness;
mod serve;
mod support_bundle;
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

pub use agent_facts::{AgentFacts, FeatureGateReport, VersionReport};
pub use auth::{ApiAuth, Verdict};
pub use error::ApiSetupError;
pub use ovs_flows::{FlowReport, FlowsReport};
pub use packet_trace::{
    TraceDestination, TraceProtocol, TraceReport, TraceStep, Verdict as TraceVerdict,
};
pub use pipeline_report::{PipelineReport, TableReport};
pub use pod_interfaces::PodInterfaceReport;
pub use policy_metrics::PolicyRuleMetrics;
pub use readiness::Readiness;
pub use serve::{ServeLimits, listen, serve};
pub use tls::ServingIdentity;

use crate::cluster::ObjectKey;
use crate::controller::{PolicyQuery, PolicyReport};
use crate::ovs::OvsBridge;
use crate::ovs::unixctl::VswitchdControl;
use model::NodeNetwork;
use ovs_flows::FlowFilter;
use pipeline::layout::TableGraph;
use query::{parameter, pod_parameter};

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
    node: OnceLock<NodeView>,
    facts: OnceLock<AgentFacts>,
}

/// The Node's bridge as the API reads it: its OVSDB rows and the network it realises.
#[derive(Debug)]
struct NodeView {
    bridge: OvsBridge,
    network: NodeNetwork,
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
            node: OnceLock::new(),
            facts: OnceLock::new(),
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

    /// From now on the API reads the Pods' ports from `bridge`, on the Node `network`.
    pub fn read_ports_from(&self, bridge: OvsBridge, network: NodeNetwork) {
        let _ = self.node.set(NodeView { bridge, network });
    }

    /// The agent's configuration and files, known from its start.
    pub fn know_agent(&self, facts: AgentFacts) {
        let _ = self.facts.set(facts);
    }

    fn facts(&self) -> Result<&AgentFacts, Reply> {
        self.facts
            .get()
            .ok_or_else(|| Reply::unavailable("the agent's configuration is not loaded yet"))
    }

    fn node_view(&self) -> Result<&NodeView, Reply> {
        self.node
            .get()
            .ok_or_else(|| Reply::unavailable("the bridge is not up yet"))
    }

    fn connection(&self) -> Result<&OfConnection, Reply> {
        self.switch
            .get()
            .ok_or_else(|| Reply::unavailable("the bridge's OpenFlow connection is not up yet"))
    }

    /// The Pods' interfaces.
    async fn pod_interfaces(&self) -> Result<Vec<PodInterfaceReport>, Reply> {
        let node = self.node_view()?;
        bounded("the Pods' ports", pod_interfaces::read(&node.bridge)).await
    }

    /// The interface of the Pod the `pod` parameter names, if it names one.
    async fn pod_of_query(&self, query: Option<&str>) -> Result<Option<PodInterfaceReport>, Reply> {
        let Some(key) = pod_parameter(query).map_err(Reply::bad_request)? else {
            return Ok(None);
        };
        let interfaces = self.pod_interfaces().await?;
        pod_interfaces::find(&interfaces, &key.namespace, &key.name)
            .cloned()
            .map(Some)
            .map_err(Reply::not_found)
    }

    /// `/v1/ovsflows`.
    async fn ovs_flows(&self, query: Option<&str>) -> Result<FlowsReport, Reply> {
        let table = match parameter(query, "table").map_err(Reply::bad_request)? {
            Some(name) => Some(
                ovs_flows::table_id(TableGraph::standard(), &name).map_err(Reply::bad_request)?,
            ),
            None => None,
        };
        let pod = self.pod_of_query(query).await?;
        let conn = self.connection()?;
        let filter = FlowFilter {
            table,
            pod: pod.as_ref(),
        };
        bounded("the flow dump", async {
            FlowsReport::read(conn, &filter)
                .await
                .map_err(|e| format!("the bridge's flows not read: {e}"))
        })
        .await
    }

    /// `/v1/tracepacket`.
    async fn trace_packet(&self, query: Option<&str>) -> Result<TraceReport, Reply> {
        let destination = parameter(query, "destination")
            .map_err(Reply::bad_request)?
            .ok_or_else(|| Reply::bad_request("give destination=IP[:port]".to_owned()))?;
        let destination = TraceDestination::parse(&destination).map_err(Reply::bad_request)?;
        let protocol = parameter(query, "protocol")
            .map_err(Reply::bad_request)?
            .map(|p| TraceProtocol::parse(&p))
            .transpose()
            .map_err(Reply::bad_request)?;
        let pod = self
            .pod_of_query(query)
            .await?
            .ok_or_else(|| Reply::bad_request("give pod=namespace/name".to_owned()))?;
        let facts = self.facts()?;
        let gateway_mac = self.node_view()?.network.gateway_mac;
        let flow = packet_trace::packet_flow(&pod, gateway_mac, destination, protocol)
            .map_err(Reply::bad_request)?;
        let conn = self.connection()?;
        let ports = bounded("the port list", async {
            conn.port_desc()
                .await
                .map_err(|e| format!("the bridge's ports not read: {e}"))
        })
        .await?;
        let names = ports.into_iter().map(|p| (p.port_no, p.name)).collect();
        let config = &facts.config;
        let vswitchd = VswitchdControl::new(config.platform, &config.ovs_run_dir);
        let bridge = config.ovs_bridge.as_str();
        let trace = bounded(
            "ofproto/trace",
            vswitchd.call("ofproto/trace", &[bridge, &flow, "--ct-next", "trk,new"]),
        )
        .await?;
        Ok(TraceReport::parse(
            TableGraph::standard(),
            bridge,
            flow,
            trace,
            &names,
        ))
    }

    /// `/v1/supportbundle`.
    async fn support_bundle(&self) -> Result<Vec<u8>, Reply> {
        let sources = support_bundle::BundleSources {
            facts: self.facts()?,
            conn: self.switch.get(),
            bridge: self.node.get().map(|n| &n.bridge),
        };
        support_bundle::collect(&sources)
            .await
            .map_err(|reason| Reply(StatusCode::INTERNAL_SERVER_ERROR, reason))
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
                    Err(reason) => return Reply::bad_request(reason).response(),
                };
                json_reply(self.policy_report(pod).await)
            }
            "/v1/pipeline" => json_reply(self.pipeline_report().await),
            "/v1/podinterfaces" => checked_json(self.pod_interfaces().await),
            "/v1/ovsflows" => checked_json(self.ovs_flows(request.uri().query()).await),
            "/v1/tracepacket" => checked_json(self.trace_packet(request.uri().query()).await),
            "/v1/supportbundle" => match self.support_bundle().await {
                Ok(bytes) => {
                    let mut response = Response::new(Full::new(Bytes::from(bytes)));
                    response.headers_mut().insert(
                        header::CONTENT_TYPE,
                        header::HeaderValue::from_static("application/gzip"),
                    );
                    response
                }
                Err(error) => error.response(),
            },
            "/v1/featuregates" => checked_json(self.facts().map(AgentFacts::feature_gates)),
            "/v1/version" => checked_json(Ok::<_, Reply>(VersionReport::this_build())),
            other => reply(
                StatusCode::NOT_FOUND,
                "text/plain",
                format!(
                    "no {other} here: /livez, /readyz, /metrics, {}\n",
                    V1_PATHS.join(", ")
                ),
            ),
        }
    }
}

/// The `/v1` paths.
const V1_PATHS: &[&str] = &[
    "/v1/networkpolicies",
    "/v1/pipeline",
    "/v1/podinterfaces",
    "/v1/ovsflows",
    "/v1/tracepacket",
    "/v1/supportbundle",
    "/v1/featuregates",
    "/v1/version",
];

/// An answer other than 200: its status and one line saying why.
#[derive(Debug)]
struct Reply(StatusCode, String);

impl Reply {
    fn bad_request(reason: String) -> Reply {
        Reply(StatusCode::BAD_REQUEST, reason)
    }

    fn not_found(reason: String) -> Reply {
        Reply(StatusCode::NOT_FOUND, reason)
    }

    fn unavailable(reason: &str) -> Reply {
        Reply(StatusCode::SERVICE_UNAVAILABLE, reason.to_owned())
    }

    fn response(self) -> Response<Full<Bytes>> {
        reply(self.0, "text/plain", format!("{}\n", self.1))
    }
}

impl From<String> for Reply {
    /// The switch or a store could not answer.
    fn from(reason: String) -> Reply {
        Reply(StatusCode::SERVICE_UNAVAILABLE, reason)
    }
}

/// `part`, given at most [`SWITCH_ANSWER`].
async fn bounded<T>(
    what: &str,
    part: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, Reply> {
    match tokio::time::timeout(SWITCH_ANSWER, part).await {
        Ok(result) => result.map_err(Reply::from),
        Err(_) => Err(Reply::from(format!(
            "{what}: no answer within {SWITCH_ANSWER:?}"
        ))),
    }
}

/// `document` as JSON, or the reply saying why there is none.
fn checked_json<T: serde::Serialize>(document: Result<T, Reply>) -> Response<Full<Bytes>> {
    match document {
        Ok(document) => json_reply(Ok(document)),
        Err(error) => error.response(),
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
