//! The agent's life: configuration, the cluster source, waiting for this Node, bring-up, the
//! controllers and the CNI server as supervised [`Tasks`], and a graceful stop that leaves the
//! datapath in place, when the caller's shutdown token is cancelled (SIGTERM/SIGINT in a
//! console, Stop/Shutdown from the Windows service control manager) or when a task fails (the
//! run then ends with [`AgentError::Task`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use controlplane::Delivery;
use hostnet::HostNetwork;
use prometheus_client::registry::Registry;
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use crate::apiserver::{
    self, AgentApi, AgentFacts, ApiAuth, READY_CNI, READY_NODE, READY_REFLECTORS, ServeLimits,
    ServingIdentity, local_access,
};
use crate::cluster::{ClusterSource, DirectorySource, POLL_INTERVAL};
use crate::cniserver::AddOutcome;
use crate::cniserver::{CniMetrics, CniService, PodConfigurator};
use crate::config::{AgentConfig, Platform, PolicyComputation, node_name_from_environment};
use crate::controller::{
    FromOutside, NetworkPolicyController, PeerController, PolicyInput, PolicyStateFile,
    ProxyController, ServiceCidr, ServiceSyncMetrics, forward_deliveries, peers_of,
};
use crate::datapath::Datapath;
use crate::datapath::ovs::{ConnectionMetrics, RunningNode, bring_up};
use crate::error::AgentError;
use crate::flows::{ConntrackFlushMetrics, DesiredFlowMetrics, ServiceRejects};
use crate::kubernetes::{ApiServices, Kinds, KubernetesSession, NodeWait, PolicyFeed, SYNC_WAIT};
use crate::node::NodeInfo;
use crate::supervise::{Supervise, SupervisionPlan};
use crate::tasks::{Ending, Requeue, RequeueMetrics, Tasks};

/// How long to wait for this Node's object (Antrea waits 60 s for the Pod CIDR).
pub const NODE_WAIT: Duration = Duration::from_secs(60);

/// Where the cluster's Nodes and Pods come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClusterChoice {
    /// The Kubernetes API: this kubeconfig, else the configuration's
    /// `clientConnection.kubeconfig`, else the in-cluster service account.
    Kubernetes {
        /// `--kubeconfig`.
        kubeconfig: Option<PathBuf>,
    },
    /// A directory of Node and Pod YAML files (the lab's stand-in for the API).
    Directory(PathBuf),
}

/// What the command line gives.
#[derive(Debug, Clone)]
pub struct Options {
    /// `antrea-agent.conf`.
    pub config: PathBuf,
    /// The cluster source.
    pub cluster: ClusterChoice,
    /// The log file (`--log-file`), when there is one (the support bundle holds it).
    pub log_file: Option<PathBuf>,
}

/// Loads the configuration, logging what was ignored.
pub fn load_config(path: &std::path::Path) -> Result<AgentConfig, AgentError> {
    let loaded = AgentConfig::load(path, Platform::current())?;
    for warning in &loaded.warnings {
        tracing::warn!("{}: {warning}", path.display());
    }
    tracing::info!("configuration {} loaded", path.display());
    Ok(loaded.config)
}

/// Reads the cluster directory until this Node is there with a Pod CIDR and an InternalIP.
pub async fn wait_for_node(
    source: &mut DirectorySource,
    name: &str,
    dir: &std::path::Path,
) -> Result<NodeInfo, AgentError> {
    let start = Instant::now();
    let mut last_log = None::<Instant>;
    loop {
        let outcome = source.poll();
        for problem in &outcome.problems {
            tracing::warn!("{problem}");
        }
        let reason = match source.store().node(name) {
            Some(node) => match NodeInfo::from_node(&node) {
                Ok(info) => {
                    tracing::info!("Node {name}: IP {}, Pod CIDR {}", info.ip, info.pod_cidr);
                    return Ok(info);
                }
                Err(reason) => reason.to_string(),
            },
            None => "no such Node object".to_owned(),
        };
        if start.elapsed() >= NODE_WAIT {
            return Err(AgentError::NodeNotReady {
                node: name.to_owned(),
                dir: dir.to_owned(),
                waited: NODE_WAIT,
                reason,
            });
        }
        if last_log.is_none_or(|t| t.elapsed() >= Duration::from_secs(5)) {
            tracing::info!("waiting for Node {name} in {}: {reason}", dir.display());
            last_log = Some(Instant::now());
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// Runs the agent until `shutdown` is cancelled. A stop while waiting for the Node ends the run
/// at once; bring-up is never cut short (it rolls back on its own failures), so a stop during it
/// takes effect when it is done.
pub async fn run(options: Options, shutdown: CancellationToken) -> Result<(), AgentError> {
    let config = load_config(&options.config)?;
    let node_name = node_name_from_environment(Platform::current())?;
    tracing::info!("Node name {node_name}");
    let agent_api = Arc::new(AgentApi::default());
    agent_api.know_agent(AgentFacts {
        config: config.clone(),
        config_path: options.config.clone(),
        log_file: options.log_file.clone(),
    });
    let identity = ServingIdentity::from_config(&config.api, &node_name)?;
    let loopback_token =
        local_access::publish(&config.api.local_access_dir, identity.ca_pem.as_deref())?;
    // Without an API server only the loopback token opens the API beyond its probes.
    let auth = Arc::new(match options.cluster {
        ClusterChoice::Directory(_) => ApiAuth::loopback_only(&loopback_token),
        ClusterChoice::Kubernetes { .. } => ApiAuth::with_api_server(&loopback_token),
    });
    let listener = apiserver::listen(config.api.bind_address, config.api_port).await?;
    tracing::info!(
        "agent API on https://{}:{} (local access in {})",
        config.api.bind_address,
        config.api_port,
        config.api.local_access_dir.display()
    );
    let mut tasks = Tasks::new();
    tasks.spawn(
        "agent API",
        Ending::AtStop,
        apiserver::serve(
            listener,
            identity.config,
            agent_api.clone(),
            auth.clone(),
            ServeLimits::default(),
            tasks.stop_token(),
        ),
    );
    let (info, source, api) = match options.cluster {
        ClusterChoice::Directory(_)
            if config.policy_computation == PolicyComputation::Controller =>
        {
            return Err(AgentError::ControllerMode {
                reason: "antrea-controller is reached through the Kubernetes API; a cluster \
                         directory has none"
                    .to_owned(),
            });
        }
        ClusterChoice::Directory(dir) => {
            let mut source = DirectorySource::new(&dir);
            let info = tokio::select! {
                info = wait_for_node(&mut source, &node_name, &dir) => info?,
                () = shutdown.cancelled() => {
                    tracing::info!("stopped before the Node was ready");
                    return Ok(());
                }
            };
            (info, ClusterSource::Directory(source), None)
        }
        ClusterChoice::Kubernetes { kubeconfig } => {
            let api = KubernetesSession::connect(&config, kubeconfig, &node_name).await?;
            auth.use_client(api.client().clone());
            let info = tokio::select! {
                info = api.wait_for_node(NodeWait::default()) => info?,
                () = shutdown.cancelled() => {
                    tracing::info!("stopped before the Node was ready");
                    return Ok(());
                }
            };
            let source = api.listed_source(SYNC_WAIT).await?;
            let controller = match config.policy_computation {
                PolicyComputation::Local => None,
                PolicyComputation::Controller => Some(crate::kubernetes::link_to_controller(
                    &config.controller,
                    api.client(),
                    &node_name,
                )),
            };
            let api = ApiRun::start(api, source.store(), controller).await;
            (info, ClusterSource::Kubernetes(Box::new(source)), Some(api))
        }
    };
    #[cfg(target_os = "linux")]
    {
        let host = Arc::new(hostnet::linux::LinuxHost::current().await?);
        run_node(
            &config, &info, source, api, host, agent_api, tasks, shutdown,
        )
        .await
    }
    #[cfg(windows)]
    {
        let host = Arc::new(windows_host(&info)?);
        run_node(
            &config, &info, source, api, host, agent_api, tasks, shutdown,
        )
        .await
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        drop((config, info, source, api, agent_api, tasks, shutdown));
        Err(AgentError::UnsupportedPlatform)
    }
}

/// The Windows host backend over HNS (`computenetwork.dll`, loaded at run time: a host without
/// it fails here with one error naming the DLL), IP Helper, WMI NetNat and the firewall COM API.
#[cfg(windows)]
pub fn windows_host(
    info: &NodeInfo,
) -> Result<
    hostnet::windows::WindowsHost<
        hcn::HcnClient,
        winos::NativeIpHelper,
        winos::WmiNetNat,
        winos::ComFirewall,
    >,
    AgentError,
> {
    let hcn = hcn::HcnClient::new().map_err(|source| hostnet::Error::Hns {
        op: "loading the Host Compute Network API".into(),
        source,
    })?;
    Ok(hostnet::windows::WindowsHost::new(
        Arc::new(hcn),
        Arc::new(winos::NativeIpHelper::new()),
        Arc::new(winos::WmiNetNat::new()),
        Arc::new(winos::ComFirewall::new()),
        hostnet::windows::WindowsSettings::new(info.pod_cidr),
    ))
}

/// What antrea-controller's transport hands the agent in controller mode, and what the agent
/// hands back.
#[derive(Debug)]
pub struct ControllerLink {
    /// The controller's deliveries for this Node, in order.
    pub deliveries: mpsc::Receiver<Delivery>,
    /// Notified when a delivery came out of order: the transport should ask for a fresh
    /// snapshot. The last good view stays enforced meanwhile.
    pub resync: Arc<Notify>,
}

/// Where the NetworkPolicy controller's inputs come from on the API server's side.
#[derive(Debug)]
pub enum PolicySource {
    /// `policyComputation: local`: Namespaces, Pods and NetworkPolicies from the reflectors.
    Objects(Box<PolicyFeed>),
    /// `policyComputation: controller`: what antrea-controller sends.
    Controller(ControllerLink),
}

/// The API server's side of a run: the session, its services (shared reflectors, Pod Events)
/// and the NetworkPolicy inputs, from those reflectors (the cluster source holds only this
/// Node's Pods; policy peers are everywhere) or from antrea-controller.
#[derive(Debug)]
pub struct ApiRun {
    /// The session.
    pub session: KubernetesSession,
    /// The shared reflectors and the Pod Event reporter.
    pub services: ApiServices,
    /// Feeds the Pod Event reporter.
    pub adds: mpsc::UnboundedSender<AddOutcome>,
    /// The NetworkPolicy controller's inputs.
    pub policy: PolicySource,
}

impl ApiRun {
    /// Starts the session's services and waits (at most [`SYNC_WAIT`]) for the shared
    /// reflectors' first lists, so that the first flows hold the cluster's NetworkPolicies.
    /// With `controller` (controller mode) the policy comes from it, and Namespaces, Pods of
    /// other Nodes and NetworkPolicies are not watched.
    pub async fn start(
        session: KubernetesSession,
        store: crate::cluster::Store,
        controller: Option<ControllerLink>,
    ) -> ApiRun {
        let kinds = match controller {
            Some(_) => Kinds::Services,
            None => Kinds::PolicyAndServices,
        };
        let (services, adds) = session.start_services(store, kinds);
        match tokio::time::timeout(SYNC_WAIT, services.reflectors.wait_synced()).await {
            Ok(true) => tracing::info!("shared reflectors synced"),
            _ => tracing::warn!(
                "shared reflectors not synced after {SYNC_WAIT:?} ({:?}); NetworkPolicies \
                 not yet listed are applied when they arrive",
                services.reflectors.synced()
            ),
        }
        let policy = match (controller, &services.reflectors.policy) {
            (Some(link), _) => PolicySource::Controller(link),
            (None, Some(reflectors)) => {
                PolicySource::Objects(Box::new(PolicyFeed::new(reflectors)))
            }
            (None, None) => unreachable!("the policy kinds are watched without a controller"),
        };
        ApiRun {
            session,
            services,
            adds,
            policy,
        }
    }
}

/// Brings the Node up with `host` (publishing its annotations when `api` is given) and runs
/// the controllers and the host's supervision, beside the `tasks` already running, until
/// `shutdown` is cancelled or a task fails.
#[allow(clippy::too_many_arguments)]
pub async fn run_node<H: HostNetwork + Supervise + 'static>(
    config: &AgentConfig,
    info: &NodeInfo,
    source: ClusterSource,
    mut api: Option<ApiRun>,
    host: Arc<H>,
    agent_api: Arc<AgentApi>,
    tasks: Tasks,
    shutdown: CancellationToken,
) -> Result<(), AgentError> {
    let policy = match &mut api {
        Some(api) => match &mut api.policy {
            PolicySource::Objects(feed) => local_policy(&info.name, feed.changes()),
            PolicySource::Controller(link) => {
                let state = PolicyStateFile::new(&config.policy_state_file);
                received_policy(&info.name, state, link).await
            }
        },
        None => local_policy(&info.name, PolicyInput::of_store(&source.store())),
    };
    let mut policy = policy;
    let peers = peers_of(&source.store(), &info.name);
    let mut proxy = proxy_of(config, api.as_ref(), &info.name);
    let services = match (&mut proxy, &api) {
        (Some(proxy), Some(api)) => {
            let reflectors = &api.services.reflectors;
            proxy.first_round(&reflectors.services, &reflectors.endpoint_slices)
        }
        _ => Vec::new(),
    };
    let node = bring_up(config, info, &peers, policy.snapshot(), &services, host).await?;
    report_bring_up(&node);
    agent_api.readiness().set(READY_NODE, true);
    if let Some(api) = &api {
        api.session
            .publish_annotations(config, node.datapath.node())
            .await?;
    }
    serve(
        config, node, policy, proxy, source, api, &agent_api, tasks, shutdown,
    )
    .await
}

/// The NetworkPolicy controller computing from `inputs`.
fn local_policy(node: &str, inputs: Vec<PolicyInput>) -> NetworkPolicyController {
    let mut policy = NetworkPolicyController::new(node);
    for input in &inputs {
        policy.apply(input);
    }
    policy
}

/// The NetworkPolicy controller enforcing what antrea-controller sends, from the view kept in
/// `state`. With no view kept it waits (at most [`SYNC_WAIT`]) for the controller's first
/// delivery, so that the first flows hold it; without one the Node starts with no
/// NetworkPolicy, and enforces the view when it comes.
async fn received_policy(
    node: &str,
    state: PolicyStateFile,
    link: &mut ControllerLink,
) -> NetworkPolicyController {
    let mut policy = NetworkPolicyController::given(node, state, link.resync.clone());
    if policy.has_view() {
        return policy;
    }
    match tokio::time::timeout(SYNC_WAIT, link.deliveries.recv()).await {
        Ok(Some(delivery)) => {
            policy.apply(&PolicyInput::Delivery(Arc::new(delivery)));
            policy.keep_view().await;
        }
        Ok(None) => tracing::warn!(
            "the controller's deliveries ended before the first: no NetworkPolicy enforced"
        ),
        Err(_) => tracing::warn!(
            "no NetworkPolicy from the controller within {SYNC_WAIT:?} and none kept: Pods \
             are not isolated until the controller's first view arrives"
        ),
    }
    policy
}

/// The Service proxy, when `antreaProxy.enable` is on and the API server is the source (the
/// cluster directory has no Services).
fn proxy_of(config: &AgentConfig, api: Option<&ApiRun>, node: &str) -> Option<ProxyController> {
    match (config.antrea_proxy.enable, api) {
        (true, Some(_)) => Some(ProxyController::new(
            node,
            ServiceCidr::new(config.antrea_proxy.proxy_all, config.service_cidr),
            FromOutside::new(
                config.antrea_proxy.proxy_all,
                config.antrea_proxy.node_port_addresses.clone(),
            ),
        )),
        (true, None) => {
            tracing::info!("Services are not load-balanced: the cluster directory has none");
            None
        }
        (false, _) => {
            tracing::info!("Services are not load-balanced: antreaProxy.enable is false");
            None
        }
    }
}

/// One line saying what bring-up wrote, so a restart can be seen to change nothing.
fn report_bring_up<H>(node: &RunningNode<H>) {
    let (writes, mods, host) = (
        node.datapath.bridge().writes(),
        node.datapath.flows().mods(),
        node.host_changes,
    );
    if writes == 0 && mods == 0 && host == 0 {
        tracing::info!(
            "Node {} up: unchanged (0 OVSDB writes, 0 flow mods, 0 host changes)",
            node.info.name
        );
    } else {
        tracing::info!(
            "Node {} up: {writes} OVSDB writes, {mods} flow mods, {host} host changes",
            node.info.name
        );
    }
}

/// Runs the CNI server, the controllers (the Service proxy among them when there is one) and the host's supervision as supervised `tasks` until
/// `shutdown` is cancelled or one of them fails (panics, returns an error, or ends while it
/// should run). Either way the stop is the same: the CNI server stops accepting and finishes the
/// requests in flight, the sources stop, the controllers finish their current work, and the
/// datapath stays as it is. After a failure the run ends with [`AgentError::Task`] naming the
/// task and the cause.
#[allow(clippy::too_many_arguments)]
async fn serve<H: HostNetwork + Supervise + 'static>(
    config: &AgentConfig,
    node: RunningNode<H>,
    policy: NetworkPolicyController,
    proxy: Option<ProxyController>,
    source: ClusterSource,
    api: Option<ApiRun>,
    agent_api: &AgentApi,
    mut tasks: Tasks,
    shutdown: CancellationToken,
) -> Result<(), AgentError> {
    let store = source.store();
    let RunningNode {
        datapath,
        host,
        pod_mtu,
        info,
        uplink,
        takeover,
        ..
    } = node;
    let pods = Arc::new(PodConfigurator::new(datapath.clone(), pod_mtu));
    let report = pods.reconcile(&store, &info.name).await?;
    tracing::info!(
        "Pods on the bridge: {} kept, {} removed{}",
        report.kept.len(),
        report.removed.len(),
        report
            .released
            .map(|ips| format!(", {} address(es) of gone containers released", ips.len()))
            .unwrap_or_default()
    );

    // Before the CNI server listens: the first HNS pass relies on no ADD being in flight.
    let mut registry = Registry::default();
    let api_server = api
        .as_ref()
        .and_then(|api| api.session.address())
        .map(str::to_owned);
    let plan = SupervisionPlan::new(config, uplink, takeover, api_server);
    let supervision = host
        .supervise(&plan, &mut registry, pods.clone(), tasks.stop_token())
        .await;
    // Its parts may end (the takeover watchdog after its watch, nothing at all on Linux).
    tasks.spawn("host supervision", Ending::MayEnd, supervision.join());
    let requeue = RequeueMetrics::register(&mut registry);
    let cni_metrics = CniMetrics::register(&mut registry);
    let sync_metrics = ServiceSyncMetrics::register(&mut registry);
    DesiredFlowMetrics::register(&mut registry, datapath.flows().cache());
    ConntrackFlushMetrics::register(&mut registry, datapath.flows().conntrack_flush_counts());
    let connections = ConnectionMetrics::register(&mut registry);
    agent_api.add_registry(registry);
    let (stop, watched) = (tasks.stop_token(), datapath.clone());
    tasks.spawn("OVS connection metrics", Ending::MayEnd, async move {
        stop.run_until_cancelled(connections.follow(&watched)).await;
    });

    let (events_tx, mut events_rx) = mpsc::channel(256);
    let (peer_tx, peer_rx) = mpsc::channel(256);
    let (policy_tx, policy_rx) = mpsc::channel(256);
    let stop = tasks.stop_token();
    tasks.spawn("cluster source", Ending::AtStop, async move {
        stop.run_until_cancelled(source.run(events_tx)).await;
    });
    let peers = PeerController::new(&info.name, datapath.clone());
    tasks.spawn(
        "peer controller",
        Ending::AtStop,
        peers.run(store.clone(), peer_rx, Requeue::new("peers", &requeue)),
    );
    let (queries_tx, queries_rx) = mpsc::channel(8);
    agent_api.answer_policy_with(queries_tx);
    agent_api.read_pipeline_from(datapath.flows().connection().clone());
    agent_api.read_ports_from(datapath.bridge().clone(), datapath.node().clone());
    tasks.spawn(
        "NetworkPolicy controller",
        Ending::AtStop,
        policy.run(
            datapath.clone(),
            policy_rx,
            queries_rx,
            Requeue::new("networkpolicy", &requeue),
        ),
    );
    let mut service = CniService::new(pods, cni_metrics);
    // NetworkPolicy's objects come from the API server's reflectors when there is one, else
    // from the cluster directory's events (it holds every Pod, Namespace and policy).
    let (api_services, policy_events) = match api {
        Some(api) => {
            service = service.clone().report_adds_to(api.adds);
            agent_api
                .readiness()
                .probe(READY_REFLECTORS, api.services.reflectors.synced_probe());
            let stop = tasks.stop_token();
            match api.policy {
                PolicySource::Objects(feed) => {
                    tasks.spawn("NetworkPolicy feed", Ending::AtStop, async move {
                        stop.run_until_cancelled(feed.run(policy_tx)).await;
                    });
                }
                // The transport may end (the controller gone): the last view stays enforced.
                PolicySource::Controller(link) => {
                    tasks.spawn("controller deliveries", Ending::MayEnd, async move {
                        stop.run_until_cancelled(forward_deliveries(link.deliveries, policy_tx))
                            .await;
                    });
                }
            }
            if let Some(proxy) = proxy {
                let rejects = ServiceRejects::new(datapath.flows().connection().clone());
                tasks.spawn(
                    "Service rejections",
                    Ending::AtStop,
                    rejects.run(tasks.stop_token()),
                );
                let reflectors = &api.services.reflectors;
                tasks.spawn(
                    "proxy controller",
                    Ending::AtStop,
                    proxy.run(
                        datapath.clone(),
                        reflectors.services.clone(),
                        reflectors.endpoint_slices.clone(),
                        Requeue::new("proxy", &requeue),
                        sync_metrics,
                        tasks.stop_token(),
                    ),
                );
            }
            (Some(api.services), None)
        }
        None => (None, Some(policy_tx)),
    };
    // Every event goes to the peer controller, and what matters to policy to its controller.
    // It ends when the source ends (its events close) or a controller is gone.
    tasks.spawn("event fan-out", Ending::AtStop, async move {
        while let Some(event) = events_rx.recv().await {
            if let (Some(policy_tx), Some(input)) = (&policy_events, PolicyInput::of_event(&event))
                && policy_tx.send(input).await.is_err()
            {
                return;
            }
            if peer_tx.send(event).await.is_err() {
                return;
            }
        }
    });

    // The CNI socket appears only now: its existence tells the runtime the Node is ready.
    let listener = match listen_cni(&config.cni_socket).await {
        Ok(listener) => listener,
        Err(error) => {
            if let Err(stopped) = tasks.stop().await {
                tracing::error!("while stopping after the CNI socket failed: {stopped}");
            }
            return Err(error);
        }
    };
    tracing::info!("CNI server listening on {}", config.cni_socket);
    agent_api.readiness().set(READY_CNI, true);
    tasks.spawn(
        "CNI server",
        Ending::AtStop,
        cni::rpc::serve_on(
            service.clone(),
            Some(service),
            listener,
            tasks.stop_token().cancelled_owned(),
        ),
    );

    tokio::select! {
        () = shutdown.cancelled() => tracing::info!(
            "stopping: no new CNI requests, finishing those in flight; the datapath stays in place"
        ),
        task = tasks.failed() => tracing::error!(
            "stopping because the {task} task failed: no new CNI requests, finishing those in \
             flight; the datapath stays in place"
        ),
    }
    let stopped = tasks.stop().await;
    drop(api_services);
    datapath.flows().connection().close();
    tracing::info!("stopped");
    stopped
}

/// Listens on the CNI endpoint (mode 0600 / SYSTEM+Administrators), creating a socket's
/// directory when needed.
async fn listen_cni(endpoint: &localipc::Endpoint) -> Result<localipc::Listener, AgentError> {
    if let localipc::Endpoint::Unix(path) = endpoint
        && let Some(dir) = path.parent()
    {
        std::fs::create_dir_all(dir).map_err(|source| AgentError::CniSocket {
            endpoint: endpoint.to_string(),
            source,
        })?;
    }
    localipc::listen(endpoint, localipc::Access::Administrators)
        .await
        .map_err(|source| AgentError::CniSocket {
            endpoint: endpoint.to_string(),
            source,
        })
}

/// Waits for SIGTERM or SIGINT (Ctrl-C): the console's way to stop [`run`].
pub async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => tracing::info!("SIGTERM received"),
                    _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT received"),
                }
            }
            Err(error) => {
                tracing::warn!("cannot watch SIGTERM ({error}); stopping on SIGINT only");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("Ctrl-C received");
    }
}
