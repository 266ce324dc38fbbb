//! The `truthtable` lab in controller mode, for the tests that judge it with real packets: the
//! support LAN's two Nodes (n1 with Namespaces x and y, n2 with z, Geneve between them) run the
//! real agent with `policyComputation: controller`, and a third LAN host (10.10.0.13) runs the
//! real `antrea-controller` binary. The objects live in one fake API server, served inside each
//! of the three namespaces; each agent presents a token bound to its `antrea-agent-<node>` Pod
//! of ServiceAccount `kube-system/antrea-agent`, as kubelet would mount it.
//!
//! The test changes the objects the fake holds ([`ControllerLab::hold`]) and then waits until
//! each agent enforces what the controller computes from them ([`ControllerLab::wait_enforced`]):
//! the expected view of each Node is computed here with `controller::SpanComputation` fed the
//! objects as the fake stores them, and compared with what the agent persisted.
#![allow(dead_code)] // each test binary uses a different part

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use controller::SpanComputation;
use controlplane::NodeView;
use fakeapi::{FakeApiServer, TcpServer};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod as KubePod, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use truthtable::{Cluster, PORTS, Pod, Scenario, Verdict, judge};

use crate::support::podnet::{add_lab_pods, probe_cells, serve};
use crate::support::{HANG_GUARD, Lan, TestNode, serve_in, wait_until};

/// The controller's host on the LAN ([`Lan::node_netns`] 3) and where it serves the agents.
pub const CONTROLLER_ADDRESS: &str = "10.10.0.13:10349";
/// How many more rounds an allowed cell that was blocked is probed in before it fails (as in
/// the standalone truth table).
pub const REPROBES: usize = 4;
/// The agents' ServiceAccount, the only one whose tokens the controller lets watch a span.
const AGENT_NAMESPACE: &str = "kube-system";
const AGENT_SERVICE_ACCOUNT: &str = "antrea-agent";
/// The lab's Nodes: name, Node IP, Pod CIDR.
const NODES: [(&str, &str, &str); 2] = [
    ("n1", "10.10.0.11", "10.244.1.0/24"),
    ("n2", "10.10.0.12", "10.244.2.0/24"),
];

/// The `antrea-controller` binary of the `controller` crate, built on first use into the
/// target directory and profile of the agent binary the tests run (beside it).
pub fn controller_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let mut build = Command::new(env!("CARGO"));
            build.args([
                "build",
                "--quiet",
                "-p",
                "controller",
                "--bin",
                "antrea-controller",
            ]);
            if !cfg!(debug_assertions) {
                build.arg("--release");
            }
            let status = build.status().expect("cargo build antrea-controller");
            assert!(status.success(), "building antrea-controller failed");
            Path::new(env!("CARGO_BIN_EXE_antrea-agent")).with_file_name("antrea-controller")
        })
        .clone()
}

/// The `antrea-controller` process on its LAN host, run after run.
pub struct Controller {
    netns: String,
    kubeconfig: PathBuf,
    dir: tempfile::TempDir,
    child: Option<Child>,
    runs: u32,
}

impl Controller {
    /// The controller of network namespace `netns`, not started; its kubeconfig is to be
    /// written at [`Controller::kubeconfig`].
    fn new(netns: &str) -> Controller {
        let dir = tempfile::tempdir().unwrap();
        Controller {
            netns: netns.to_owned(),
            kubeconfig: dir.path().join("kubeconfig"),
            dir,
            child: None,
            runs: 0,
        }
    }

    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }

    /// The number of the last run.
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// Starts the controller (one replica, Lease identity `ctl`, serving on
    /// [`CONTROLLER_ADDRESS`] with a certificate for its IP); returns the run number.
    pub fn start(&mut self) -> u32 {
        assert!(self.child.is_none(), "the controller is already running");
        self.runs += 1;
        let log = fs::File::create(self.log_path(self.runs)).unwrap();
        let (ip, _) = CONTROLLER_ADDRESS.split_once(':').unwrap();
        let child = Command::new("ip")
            .args(["netns", "exec", &self.netns])
            .arg(controller_binary())
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(["--bind-address", CONTROLLER_ADDRESS, "--tls-san", ip])
            .args(["--identity", "ctl", "--lease-duration-seconds", "6"])
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn antrea-controller");
        self.child = Some(child);
        self.runs
    }

    /// SIGKILL (`ip netns exec` runs the controller in its own process): the controller
    /// vanishes without closing anything.
    pub fn kill(&mut self) {
        let mut child = self.child.take().expect("the controller is running");
        child.kill().expect("SIGKILL antrea-controller");
        child.wait().expect("reap antrea-controller");
    }

    /// Panics with the log when the running controller has exited.
    fn assert_running(&mut self) {
        if let Some(status) = self.child.as_mut().and_then(|c| c.try_wait().unwrap()) {
            panic!(
                "antrea-controller exited ({status}):\n{}",
                self.log(self.runs)
            );
        }
    }

    pub fn log_path(&self, run: u32) -> PathBuf {
        self.dir.path().join(format!("controller-{run}.log"))
    }

    pub fn log(&self, run: u32) -> String {
        fs::read_to_string(self.log_path(run)).unwrap_or_default()
    }
}

impl Drop for Controller {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// An object of the fake: `(resource plural, namespace, name)`.
type ObjectId = (&'static str, String, String);

/// The lab in controller mode. Fields drop in order: the processes first, the namespaces last.
pub struct ControllerLab {
    pub controller: Controller,
    pub nodes: Vec<TestNode>,
    /// The network namespace of each lab Pod (the sources of the probes).
    pub netns: BTreeMap<Pod, String>,
    /// Serves the fake API server and the Pods' ports, and runs the probes.
    pub runtime: Runtime,
    pub fake: FakeApiServer,
    servers: Vec<TcpServer>,
    /// The lab objects (Namespaces, Pods, NetworkPolicies) the fake was last given.
    held: BTreeMap<ObjectId, Value>,
    /// The agents' own Pods, which the controller sees as well.
    agent_pods: Vec<ObjectId>,
    pub lan: Lan,
}

impl ControllerLab {
    /// The whole lab, up: the controller serving, both agents up on their first view, the nine
    /// Pods added through the plugin and serving [`PORTS`], the fake holding them with their
    /// addresses and no NetworkPolicy.
    pub fn start() -> ControllerLab {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let mut lan = Lan::new();
        let node_netns = [lan.node_netns(1), lan.node_netns(2)];
        let controller_netns = lan.node_netns(3);
        let fake = FakeApiServer::new();
        for (name, ip, cidr) in NODES {
            fake.insert_json(
                &fake
                    .resource_of::<k8s_openapi::api::core::v1::Node>()
                    .unwrap(),
                json!({
                    "apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name},
                    "spec": {"podCIDR": cidr},
                    "status": {"addresses": [{"type": "InternalIP", "address": ip}]},
                }),
            )
            .unwrap();
        }
        let service_account: ServiceAccount = serde_json::from_value(json!({
            "metadata": {"name": AGENT_SERVICE_ACCOUNT, "namespace": AGENT_NAMESPACE},
        }))
        .unwrap();
        fake.insert(&service_account).unwrap();
        let mut agent_pods = Vec::new();
        for (name, _, _) in NODES {
            let pod = format!("antrea-agent-{name}");
            let object: KubePod = serde_json::from_value(json!({
                "metadata": {"name": pod, "namespace": AGENT_NAMESPACE, "labels": {"app": "antrea", "component": "antrea-agent"}},
                "spec": {
                    "nodeName": name, "hostNetwork": true, "serviceAccountName": AGENT_SERVICE_ACCOUNT,
                    "containers": [{"name": "antrea-agent", "image": "antrea/antrea-agent"}],
                },
            }))
            .unwrap();
            fake.insert(&object).unwrap();
            agent_pods.push(("pods", AGENT_NAMESPACE.to_owned(), pod));
        }

        let controller = Controller::new(&controller_netns);
        let mut servers = vec![serve_in(
            &runtime,
            &fake,
            &controller_netns,
            controller.kubeconfig(),
        )];
        let mut nodes = Vec::new();
        for ((name, _, _), netns) in NODES.iter().zip(&node_netns) {
            let mut node = TestNode::new(name, netns, "", "");
            let dir = node.dir.path().to_owned();
            node.write_config(&format!(
                "trafficEncapMode: encap\npolicyComputation: controller\n\
                 controllerAddresses: [\"{CONTROLLER_ADDRESS}\"]\n\
                 controllerTokenFile: {}\npolicyStateFile: {}\n",
                dir.join("token").display(),
                dir.join("policy-state.json").display()
            ));
            let kubeconfig = dir.join("kubeconfig");
            servers.push(serve_in(&runtime, &fake, netns, &kubeconfig));
            node.use_api(&kubeconfig);
            let token = fake
                .issue_pod_bound_token(
                    AGENT_NAMESPACE,
                    AGENT_SERVICE_ACCOUNT,
                    &format!("antrea-agent-{name}"),
                )
                .unwrap();
            let token_file = dir.join("token");
            fs::write(&token_file, token).unwrap();
            fs::set_permissions(&token_file, fs::Permissions::from_mode(0o600)).unwrap();
            nodes.push(node);
        }
        let mut lab = ControllerLab {
            controller,
            nodes,
            netns: BTreeMap::new(),
            runtime,
            fake,
            servers,
            held: BTreeMap::new(),
            agent_pods,
            lan,
        };
        // The Pods exist before their sandboxes; their addresses come with ADD.
        lab.hold(&Cluster::new(&[]), false, &[]);

        // Agents without a kept view wait for the controller's first view before they bring
        // their Node up: the controller serves first.
        lab.controller.start();
        wait_until(
            "antrea-controller to publish its CA in kube-system/antrea-ca",
            || {
                lab.controller.assert_running();
                lab.fake
                    .get::<ConfigMap>(AGENT_NAMESPACE, "antrea-ca")
                    .unwrap()
                    .and_then(|cm| cm.data)
                    .is_some_and(|data| data.contains_key("ca.crt"))
            },
        );
        for n in &mut lab.nodes {
            n.start_and_wait_up();
            let socket = n.cni_socket();
            wait_until("the CNI socket", || socket.exists());
        }
        for n in &lab.nodes {
            let added = add_lab_pods(&mut lab.lan, n);
            lab.netns.extend(added);
        }
        lab.hold(&Cluster::new(&[]), true, &[]);
        let served: Vec<_> = PORTS.iter().map(|p| (p.protocol, p.number)).collect();
        for p in truthtable::model::pods() {
            serve(&lab.runtime, &lab.netns[&p], &served);
        }
        lab
    }

    /// Makes the fake hold exactly the lab's Namespaces and Pods as `cluster` labels them (Pods
    /// with their addresses when `with_ips`) and `policies`: what changed since the last call
    /// is replaced or created, NetworkPolicies no longer there are deleted, the rest is left
    /// alone (no write, no watch event).
    pub fn hold(&mut self, cluster: &Cluster, with_ips: bool, policies: &[truthtable::Policy]) {
        let mut wanted = BTreeMap::new();
        for object in cluster
            .objects(with_ips)
            .into_iter()
            .chain(policies.iter().map(|p| p.object()))
        {
            wanted.insert(object_id(&object), object);
        }
        for (id, object) in &wanted {
            if self.held.get(id) != Some(object) {
                let resource = self.resource(id.0);
                self.fake
                    .insert_json(&resource, object.clone())
                    .unwrap_or_else(|e| panic!("write {id:?} to the fake API server: {e}"));
            }
        }
        for id in self.held.keys().filter(|id| !wanted.contains_key(*id)) {
            let resource = self.resource(id.0);
            self.fake
                .delete_json(&resource, &id.1, &id.2)
                .unwrap_or_else(|e| panic!("delete {id:?} from the fake API server: {e}"));
        }
        self.held = wanted;
    }

    /// [`ControllerLab::hold`] for `scenario`'s labels and policies, Pods with their addresses.
    pub fn hold_scenario(&mut self, scenario: &Scenario) {
        self.hold(&scenario.cluster(), true, &scenario.policies);
    }

    fn resource(&self, plural: &str) -> fakeapi::ResourceType {
        match plural {
            "namespaces" => self.fake.resource_of::<Namespace>(),
            "pods" => self.fake.resource_of::<KubePod>(),
            "networkpolicies" => self.fake.resource_of::<NetworkPolicy>(),
            other => panic!("the lab holds no {other}"),
        }
        .unwrap()
    }

    /// What the controller computes for each Node from the objects the fake holds now: a
    /// `SpanComputation` fed every Namespace, Pod (the agents' own included) and
    /// NetworkPolicy as stored, each Node's view built from its `watch` updates.
    pub fn expected_views(&self) -> BTreeMap<String, NodeView> {
        let mut computation = SpanComputation::default();
        let stored = |id: &ObjectId| {
            self.fake
                .get_json(&self.resource(id.0), &id.1, &id.2)
                .unwrap_or_else(|| panic!("{id:?} is not in the fake API server"))
        };
        for id in self.held.keys().chain(&self.agent_pods) {
            let object = stored(id);
            let fed = match id.0 {
                "namespaces" => computation.upsert_namespace(&from_json(object)),
                "pods" => computation.upsert_pod(&from_json(object)),
                _ => computation.upsert_policy(&from_json(object)),
            };
            fed.unwrap_or_else(|e| panic!("the span computation refuses {id:?}: {e}"));
        }
        self.nodes
            .iter()
            .map(|n| {
                let mut view = NodeView::default();
                for update in computation.watch(&n.name) {
                    view.apply(&update).expect("watch gives a view in order");
                }
                (n.name.clone(), view)
            })
            .collect()
    }

    /// The view node `n` persisted last (`policyStateFile`), if it reads as one.
    pub fn kept_view(&self, n: &TestNode) -> Option<NodeView> {
        let text = fs::read(state_file(n)).ok()?;
        serde_json::from_slice(&text).ok()
    }

    /// Waits until every agent enforces what the controller computes from the fake's objects
    /// now ([`ControllerLab::expected_views`]), for `what`; returns the views.
    ///
    /// Install lines cannot tell it (a Node outside a change's span gets nothing, so installs
    /// nothing). What is sound, given how the agent's NetworkPolicy loop works: after each
    /// burst of deliveries it writes the view to `policyStateFile` and only then installs the
    /// burst's flows, and it answers a policy query (`antctl get networkpolicies`) only
    /// between installs. So once the file holds the expected view, a query asked afterwards is
    /// answered after that view's install has finished: the flows are in the switch. Then the
    /// switch's datapath flow cache is revalidated against them (`revalidator/wait`), or
    /// traffic seen before could still match a cached flow of the previous policy.
    pub fn wait_enforced(&mut self, what: &str) -> BTreeMap<String, NodeView> {
        self.controller.assert_running();
        let views = self.expected_views();
        for n in &self.nodes {
            let want = &views[&n.name];
            let deadline = Instant::now() + HANG_GUARD;
            while self.kept_view(n).as_ref() != Some(want) {
                if Instant::now() >= deadline {
                    let kept = fs::read_to_string(state_file(n)).unwrap_or_default();
                    panic!(
                        "{}'s policyStateFile never held the controller's view for {what:?}\n\
                         expected: {}\nkept: {kept}\nagent log:\n{}\ncontroller log:\n{}",
                        n.name,
                        serde_json::to_string(want).unwrap(),
                        n.log(n.runs()),
                        self.controller.log(self.controller.runs)
                    );
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            n.antctl(&["get", "networkpolicies"]);
        }
        for n in &self.nodes {
            n.ovs
                .appctl(&["revalidator/wait"])
                .unwrap_or_else(|e| panic!("{}: revalidator/wait: {e}", n.name));
        }
        views
    }

    /// Each agent's install lines in its current run: compared before and after probing, they
    /// show the enforced policy did not change meanwhile.
    pub fn installs(&self) -> Vec<usize> {
        self.nodes
            .iter()
            .map(|n| n.policy_installs().len())
            .collect()
    }

    /// Fails unless nothing was installed since `installs` and every agent still keeps
    /// `views`: the probes of `what` saw the policy waited for, not one that came after it.
    pub fn assert_unchanged_since(
        &self,
        what: &str,
        installs: &[usize],
        views: &BTreeMap<String, NodeView>,
    ) {
        assert_eq!(
            self.installs(),
            installs,
            "an agent installed NetworkPolicy while {what:?} was probed: the view waited for was \
             not the controller's last"
        );
        for n in &self.nodes {
            assert_eq!(
                self.kept_view(n).as_ref(),
                Some(&views[&n.name]),
                "{}'s view changed while {what:?} was probed",
                n.name
            );
        }
    }

    /// Every source probes every destination on every port, judged against `scenario`'s
    /// expected table (the standalone truth table's).
    pub fn judge(&self, scenario: &Scenario) -> Verdict {
        judge(&scenario.expected(), REPROBES, |cells| {
            probe_cells(&self.runtime, &self.netns, cells)
        })
    }

    /// The node named `name`.
    pub fn node(&mut self, name: &str) -> &mut TestNode {
        self.nodes
            .iter_mut()
            .find(|n| n.name == name)
            .unwrap_or_else(|| panic!("no Node {name}"))
    }

    /// Stops both agents (SIGTERM); each must exit successfully.
    pub fn stop_agents(&mut self) {
        for n in &mut self.nodes {
            assert!(n.stop_agent(), "{}'s agent did not stop cleanly", n.name);
        }
    }
}

/// Where node `n`'s agent keeps the last view received.
pub fn state_file(n: &TestNode) -> PathBuf {
    n.dir.path().join("policy-state.json")
}

fn object_id(object: &Value) -> ObjectId {
    let plural = match object["kind"].as_str() {
        Some("Namespace") => "namespaces",
        Some("Pod") => "pods",
        Some("NetworkPolicy") => "networkpolicies",
        other => panic!("the lab holds no {other:?}"),
    };
    let text = |field: &str| {
        object["metadata"][field]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    (plural, text("namespace"), text("name"))
}

fn from_json<K: serde::de::DeserializeOwned>(object: Value) -> K {
    serde_json::from_value(object).unwrap_or_else(|e| panic!("a stored object: {e}"))
}
