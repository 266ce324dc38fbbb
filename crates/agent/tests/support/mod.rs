//! A small lab for the agent's tests: an underlay LAN (a Linux bridge in its own namespace) and
//! Nodes, each a namespace with a veth "NIC" on the LAN and a private Open vSwitch, plus the
//! agent binary run inside a Node's namespace. Everything is removed on drop, also on panic.
#![allow(dead_code)] // each test binary uses a different part

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ovstest::{Daemons, Ovs};

#[cfg(target_os = "linux")]
pub mod podnet;

/// Hang guard for waits on the agent or the kernel (not a timing threshold).
pub const HANG_GUARD: Duration = Duration::from_secs(60);

static NEXT: AtomicU32 = AtomicU32::new(0);

/// Runs a command, panicking with its output on failure; returns stdout.
pub fn run(args: &[&str]) -> String {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(
        out.status.success(),
        "{args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether a command succeeds.
pub fn succeeds(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether `node` reaches `target`: [`ping_all_answered`] with five pings.
pub fn ping(node: &TestNode, target: &str) -> bool {
    ping_all_answered(&node.netns, target, 5)
}

/// Single pings waited for at most this many times before a path counts as not ready.
const PING_READY_ATTEMPTS: u32 = 5;

/// Whether `netns` reaches `target`. First a readiness wait: single pings until one is answered,
/// at most [`PING_READY_ATTEMPTS`] (the first packet to a new peer can be lost while its
/// neighbour or the tunnel's resolves); the single pings it took are printed when more than
/// one. Then `count` pings, every one of which must be answered ([`ping_counts`]).
pub fn ping_all_answered(netns: &str, target: &str, count: u32) -> bool {
    let Some(tries) = (1..=PING_READY_ATTEMPTS).find(|_| ping_counts(netns, target, 1) == (1, 1))
    else {
        return false;
    };
    if tries > 1 {
        eprintln!("{netns} -> {target}: ready after {tries} single pings");
    }
    ping_counts(netns, target, count) == (u64::from(count), u64::from(count))
}

/// `ping -c<count>` from namespace `netns` to `target`, with a deadline (`-w 10`: ping waits
/// for every reply, so a late one on a loaded machine is not counted lost, and sends again for
/// a lost one; a single ping waits 2 s for its reply): the (transmitted, received) counts of
/// its summary line (see [`ping_summary`]).
pub fn ping_counts(netns: &str, target: &str, count: u32) -> (u64, u64) {
    // One ping waits up to 2 s for its reply; more wait until the deadline for every reply.
    let wait = if count == 1 { "-W2" } else { "-w10" };
    ping_summary(netns, target, &[&format!("-c{count}"), "-i0.2", wait])
}

/// Whether none of 3 pings from `netns` to `target` got a reply (each waited for 1 s): what a
/// blocked path shows. One reply is enough to say it is not blocked.
pub fn no_reply(netns: &str, target: &str) -> bool {
    ping_summary(netns, target, &["-c3", "-i0.2", "-W1"]).1 == 0
}

/// `ping ARGS target` in `netns`: the (transmitted, received) counts of its summary line.
/// Panics when ping printed no summary, so a ping that could not run (namespace or command
/// missing) is never taken for one that got no reply.
fn ping_summary(netns: &str, target: &str, args: &[&str]) -> (u64, u64) {
    let out = Command::new("ip")
        .args(["netns", "exec", netns, "ping"])
        .args(args)
        .arg(target)
        .output()
        .unwrap_or_else(|e| panic!("spawn ip netns exec {netns} ping: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout
        .lines()
        .find(|l| l.contains("packets transmitted"))
        .unwrap_or_else(|| {
            panic!(
                "ping {target} from {netns} did not run: {}{stdout}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let mut numbers = summary
        .split(',')
        .map(|part| part.split_whitespace().next().and_then(|n| n.parse().ok()));
    match (numbers.next().flatten(), numbers.next().flatten()) {
        (Some(sent), Some(received)) => (sent, received),
        _ => panic!("ping summary {summary:?}"),
    }
}

/// Polls `check` until it is true or the hang guard fires.
pub fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + HANG_GUARD;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Removes namespaces left by test processes that no longer exist.
fn sweep_dead_namespaces() {
    let Ok(entries) = fs::read_dir("/var/run/netns") else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("agt-") else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        if !Path::new("/proc").join(pid).exists() {
            let _ = Command::new("ip").args(["netns", "del", &name]).status();
        }
    }
}

/// The underlay LAN; Nodes are added to it.
pub struct Lan {
    pub id: String,
    pub underlay: String,
    namespaces: Vec<String>,
}

impl Lan {
    pub fn new() -> Lan {
        sweep_dead_namespaces();
        let id = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let underlay = format!("agt-{id}-u");
        run(&["ip", "netns", "add", &underlay]);
        run(&["ip", "-n", &underlay, "link", "set", "lo", "up"]);
        run(&[
            "ip", "-n", &underlay, "link", "add", "lan0", "type", "bridge",
        ]);
        run(&["ip", "-n", &underlay, "link", "set", "lan0", "up"]);
        run(&[
            "ip",
            "-n",
            &underlay,
            "addr",
            "add",
            "10.10.0.1/24",
            "dev",
            "lan0",
        ]);
        Lan {
            id,
            underlay: underlay.clone(),
            namespaces: vec![underlay],
        }
    }

    /// A Node namespace `n<index>` with NIC `eth0` (MAC `02:00:0a:0a:00:<10+index>`, IP
    /// `10.10.0.<10+index>/24`, default route via 10.10.0.1) on the LAN.
    pub fn node_netns(&mut self, index: u8) -> String {
        let ns = format!("agt-{}-n{index}", self.id);
        run(&["ip", "netns", "add", &ns]);
        self.namespaces.push(ns.clone());
        run(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
        let port = format!("u-n{index}");
        run(&[
            "ip",
            "-n",
            &self.underlay,
            "link",
            "add",
            &port,
            "type",
            "veth",
            "peer",
            "name",
            "eth0",
            "netns",
            &ns,
        ]);
        run(&[
            "ip",
            "-n",
            &self.underlay,
            "link",
            "set",
            &port,
            "master",
            "lan0",
            "up",
        ]);
        run(&[
            "ip",
            "netns",
            "exec",
            &self.underlay,
            "ethtool",
            "-K",
            &port,
            "tx",
            "off",
        ]);
        run(&[
            "ip", "netns", "exec", &ns, "ethtool", "-K", "eth0", "tx", "off",
        ]);
        run(&[
            "ip",
            "-n",
            &ns,
            "link",
            "set",
            "eth0",
            "address",
            &format!("02:00:0a:0a:00:{:02x}", 10 + index),
            "up",
        ]);
        run(&[
            "ip",
            "-n",
            &ns,
            "addr",
            "add",
            &format!("10.10.0.{}/24", 10 + index),
            "dev",
            "eth0",
        ]);
        run(&[
            "ip",
            "-n",
            &ns,
            "route",
            "add",
            "default",
            "via",
            "10.10.0.1",
        ]);
        run(&[
            "ip",
            "netns",
            "exec",
            &ns,
            "sysctl",
            "-qw",
            "net.ipv4.ip_forward=1",
            "net.ipv6.conf.eth0.disable_ipv6=1",
        ]);
        ns
    }
}

impl Lan {
    /// An empty namespace for a Pod, removed with the LAN; returns its name.
    pub fn pod_netns(&mut self, pod: &str) -> String {
        let ns = format!("agt-{}-{pod}", self.id);
        run(&["ip", "netns", "add", &ns]);
        self.namespaces.push(ns.clone());
        ns
    }
}

impl Drop for Lan {
    fn drop(&mut self) {
        for ns in &self.namespaces {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// One Node: its namespace, its OVS, its configuration and cluster directory.
pub struct TestNode {
    pub name: String,
    pub netns: String,
    pub dir: tempfile::TempDir,
    pub ovs: Ovs,
    agent: Option<Child>,
    runs: u32,
    /// The kubeconfig of a (fake) API server the agent uses instead of the cluster directory.
    kubeconfig: Option<PathBuf>,
    /// Extra environment variables of the agent's runs.
    agent_env: Vec<(String, String)>,
    /// Extra command-line arguments of the agent's runs.
    agent_args: Vec<String>,
}

/// The cluster directory's `default` Namespace and its Pods `client` and `server` on `n1`,
/// each labelled `app: <name>`, with their addresses (`(client, server)`) when given.
pub fn client_and_server_yaml(ips: Option<(&str, &str)>) -> String {
    let pod = |name: &str, ip: Option<&str>| {
        let status = ip
            .map(|ip| format!("status:\n  phase: Running\n  podIP: {ip}\n"))
            .unwrap_or_default();
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: default\n  labels:\n    app: {name}\nspec:\n  nodeName: n1\n{status}"
        )
    };
    [
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n".to_owned(),
        pod("client", ips.map(|(c, _)| c)),
        pod("server", ips.map(|(_, s)| s)),
    ]
    .join("---\n")
}

/// The Node objects of the cluster: `(name, Node IP, Pod CIDR)`. Each carries Antrea's MAC
/// annotation with the MAC [`Lan::node_netns`] gives the Node's NIC (`02:00:0a:0a:00:<last IP byte>`).
pub fn nodes_yaml(nodes: &[(&str, &str, &str)]) -> String {
    nodes
        .iter()
        .map(|(name, ip, cidr)| {
            let last: u8 = ip.rsplit('.').next().and_then(|b| b.parse().ok()).unwrap_or(0);
            format!(
                "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  annotations:\n    node.antrea.io/mac-address: \"02:00:0a:0a:00:{last:02x}\"\nspec:\n  podCIDR: {cidr}\nstatus:\n  addresses:\n  - type: InternalIP\n    address: {ip}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

/// Pod objects in namespace `default`: `(Pod name, Node name)`.
pub fn pods_yaml(pods: &[(&str, &str)]) -> String {
    pods.iter()
        .map(|(pod, node)| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {pod}\n  namespace: default\nspec:\n  nodeName: {node}\n"
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

impl TestNode {
    /// Starts OVS in `netns` and writes the agent's configuration (`extra` appended) and a
    /// cluster directory holding `nodes`.
    pub fn new(name: &str, netns: &str, extra: &str, nodes: &str) -> TestNode {
        let ovs =
            Ovs::start_with(Daemons::Full, Some(netns)).expect("start OVS in the Node namespace");
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("cluster")).unwrap();
        let node = TestNode {
            name: name.to_owned(),
            netns: netns.to_owned(),
            dir,
            ovs,
            agent: None,
            runs: 0,
            kubeconfig: None,
            agent_env: Vec::new(),
            agent_args: Vec::new(),
        };
        node.write_config(extra);
        node.write_nodes(nodes);
        node
    }

    pub fn config_path(&self) -> PathBuf {
        self.dir.path().join("antrea-agent.conf")
    }

    pub fn cluster_dir(&self) -> PathBuf {
        self.dir.path().join("cluster")
    }

    /// The agent's `apiLocalAccessDir`: its CA and loopback token for antctl, one per Node.
    pub fn api_local_access_dir(&self) -> PathBuf {
        self.dir.path().join("agent-api")
    }

    pub fn write_config(&self, extra: &str) {
        let text = format!(
            "ovsDatapathType: netdev\novsRunDir: {}\ncniSocket: {}/cni.sock\napiLocalAccessDir: {}\n{extra}",
            self.ovs.dir().display(),
            self.dir.path().display(),
            self.api_local_access_dir().display()
        );
        fs::write(self.config_path(), text).unwrap();
    }

    /// Replaces the cluster directory's Nodes atomically.
    pub fn write_nodes(&self, yaml: &str) {
        let tmp = self.cluster_dir().join(".nodes.yaml.tmp");
        fs::write(&tmp, yaml).unwrap();
        fs::rename(&tmp, self.cluster_dir().join("nodes.yaml")).unwrap();
    }

    /// Replaces the cluster directory's Pods atomically (see [`pods_yaml`]).
    pub fn write_pods(&self, yaml: &str) {
        let tmp = self.cluster_dir().join(".pods.yaml.tmp");
        fs::write(&tmp, yaml).unwrap();
        fs::rename(&tmp, self.cluster_dir().join("pods.yaml")).unwrap();
    }

    /// Replaces (or creates) the cluster directory file `name` atomically.
    pub fn write_cluster_file(&self, name: &str, text: &str) {
        let tmp = self.cluster_dir().join(format!(".{name}.tmp"));
        fs::write(&tmp, text).unwrap();
        fs::rename(&tmp, self.cluster_dir().join(name)).unwrap();
    }

    /// The NetworkPolicy controller's install lines of the agent's last run, one per burst of
    /// changes it applied ("NetworkPolicy: … flow mods").
    pub fn policy_installs(&self) -> Vec<String> {
        self.log(self.runs)
            .lines()
            .filter(|l| l.contains("NetworkPolicy: ") && l.contains(" flow mods"))
            .map(str::to_owned)
            .collect()
    }

    /// The log file of agent run `n` (1-based).
    pub fn log_path(&self, n: u32) -> PathBuf {
        self.dir.path().join(format!("agent-{n}.log"))
    }

    pub fn log(&self, n: u32) -> String {
        fs::read_to_string(self.log_path(n)).unwrap_or_default()
    }

    /// From now on the agent takes the cluster from the API server of `kubeconfig`.
    pub fn use_api(&mut self, kubeconfig: &Path) {
        self.kubeconfig = Some(kubeconfig.to_owned());
    }

    /// The agent's command line, run in the Node's namespace as this Node.
    fn agent_command(&self) -> Command {
        let mut command = Command::new("ip");
        command
            .args([
                "netns",
                "exec",
                &self.netns,
                env!("CARGO_BIN_EXE_antrea-agent"),
            ])
            .arg("--config")
            .arg(self.config_path());
        match &self.kubeconfig {
            Some(path) => command.arg("--kubeconfig").arg(path),
            None => command.arg("--cluster-dir").arg(self.cluster_dir()),
        };
        command.args(&self.agent_args);
        command.env("NODE_NAME", &self.name);
        command.envs(self.agent_env.iter().map(|(k, v)| (k, v)));
        command
    }

    /// From now on the agent runs with `args` added to its command line.
    pub fn add_agent_args(&mut self, args: &[&str]) {
        self.agent_args.extend(args.iter().map(|a| (*a).to_owned()));
    }

    /// From now on the agent runs with `key=value` in its environment.
    pub fn set_agent_env(&mut self, key: &str, value: &str) {
        self.agent_env.push((key.to_owned(), value.to_owned()));
    }

    /// Starts the agent in the Node's namespace; returns the run number.
    pub fn start_agent(&mut self) -> u32 {
        assert!(self.agent.is_none(), "agent already running");
        self.runs += 1;
        let log = fs::File::create(self.log_path(self.runs)).unwrap();
        let child = self
            .agent_command()
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn antrea-agent");
        self.agent = Some(child);
        self.runs
    }

    /// Starts the agent and waits for its "Node … up" line; returns that line.
    pub fn start_and_wait_up(&mut self) -> String {
        let run = self.start_agent();
        let needle = format!("Node {} up", self.name);
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            let log = self.log(run);
            if let Some(line) = log.lines().find(|l| l.contains(&needle)) {
                return line.to_owned();
            }
            if let Some(status) = self.agent.as_mut().and_then(|c| c.try_wait().unwrap()) {
                panic!("agent exited with {status} before the Node was up:\n{log}");
            }
            assert!(
                Instant::now() < deadline,
                "agent did not bring the Node up:\n{log}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends SIGTERM and waits for the agent to exit; returns whether it exited successfully.
    pub fn stop_agent(&mut self) -> bool {
        let mut child = self.agent.take().expect("agent running");
        run(&["kill", "-TERM", &child.id().to_string()]);
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status.success();
            }
            assert!(Instant::now() < deadline, "agent did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the running agent to exit on its own; returns its exit status.
    pub fn wait_agent_exit(&mut self) -> std::process::ExitStatus {
        let mut child = self.agent.take().expect("agent running");
        let deadline = Instant::now() + HANG_GUARD;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the agent did not exit:\n{}", self.log(self.runs));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The running agent's process id (`ip netns exec` runs the agent in its own process), to
    /// signal it while other threads talk to it.
    pub fn agent_pid(&self) -> u32 {
        self.agent.as_ref().expect("agent running").id()
    }

    /// Waits for an agent that was killed and forgets it.
    pub fn reap_agent(&mut self) {
        let mut child = self.agent.take().expect("agent started");
        child.wait().expect("reap the agent");
    }

    /// How many times the agent was started (the number of its last run).
    pub fn runs(&self) -> u32 {
        self.runs
    }

    /// Whether run `n` of the agent has logged that its CNI server listens.
    pub fn cni_listening(&self, n: u32) -> bool {
        self.log(n).contains("CNI server listening")
    }

    /// Runs the agent to completion (for start-up failures); returns (success, stderr).
    pub fn run_agent_to_exit(&self) -> (bool, String) {
        let out = self.agent_command().output().expect("run antrea-agent");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// `antctl` in the Node's namespace, where the agent API is, with this agent's loopback
    /// token and CA; its output.
    pub fn antctl(&self, args: &[&str]) -> String {
        let dir = self.api_local_access_dir().display().to_string();
        let mut full = vec![
            env!("CARGO_BIN_EXE_antctl"),
            "--local-access-dir",
            dir.as_str(),
        ];
        full.extend_from_slice(args);
        self.exec(&full)
    }

    /// [`TestNode::antctl`] that may fail: its exit status, stdout and stderr.
    pub fn antctl_output(&self, args: &[&str]) -> std::process::Output {
        let dir = self.api_local_access_dir();
        Command::new("ip")
            .args(["netns", "exec", &self.netns, env!("CARGO_BIN_EXE_antctl")])
            .arg("--local-access-dir")
            .arg(dir)
            .args(args)
            .output()
            .expect("run antctl")
    }

    /// A command run in the Node's namespace; returns stdout.
    pub fn exec(&self, args: &[&str]) -> String {
        let mut full = vec!["ip", "netns", "exec", &self.netns];
        full.extend_from_slice(args);
        run(&full)
    }

    pub fn vsctl(&self, args: &[&str]) -> String {
        self.ovs
            .vsctl(args)
            .unwrap_or_else(|e| panic!("ovs-vsctl {args:?}: {e}"))
            .trim()
            .to_owned()
    }

    /// The bridge's flows without counters or durations, sorted.
    pub fn flows(&self) -> Vec<String> {
        let dump = self
            .ovs
            .ofctl(&[
                "-O",
                "OpenFlow15",
                "--no-stats",
                "dump-flows",
                "{mgmt:br-int}",
            ])
            .expect("dump-flows");
        let mut flows: Vec<String> = dump
            .lines()
            .filter(|l| l.contains("actions="))
            .map(|l| l.trim().to_owned())
            .collect();
        flows.sort();
        flows
    }

    /// `ip -j ARGS` in the Node's namespace.
    pub fn ip_json(&self, args: &[&str]) -> serde_json::Value {
        let mut full = vec!["ip", "-n", &self.netns, "-j"];
        full.extend_from_slice(args);
        serde_json::from_str(&run(&full)).unwrap()
    }

    /// The IPv4 addresses of `dev` as `a.b.c.d/len`.
    pub fn addrs(&self, dev: &str) -> Vec<String> {
        let v = self.ip_json(&["-4", "addr", "show", "dev", dev]);
        v[0]["addr_info"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|i| format!("{}/{}", i["local"].as_str().unwrap(), i["prefixlen"]))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Routes with antrea's protocol number.
    pub fn antrea_routes(&self) -> Vec<String> {
        let out = run(&[
            "ip",
            "-n",
            &self.netns,
            "-4",
            "route",
            "show",
            "proto",
            "164",
        ]);
        out.lines().map(|l| l.trim().to_owned()).collect()
    }
}

impl TestNode {
    /// The agent's CNI socket.
    pub fn cni_socket(&self) -> PathBuf {
        self.dir.path().join("cni.sock")
    }

    /// The IPAM data directory the tests' network configuration names.
    pub fn ipam_dir(&self) -> PathBuf {
        self.dir.path().join("ipam")
    }

    /// The network configuration kubelet would pass (`prev` as `prevResult`).
    pub fn netconf(&self, prev: Option<&serde_json::Value>) -> serde_json::Value {
        let mut conf = serde_json::json!({
            "cniVersion": "1.0.0",
            "name": "antrea",
            "type": "antrea",
            "ipam": {"type": "host-local", "dataDir": self.ipam_dir()},
            "capabilities": {"dns": true},
        });
        if let Some(prev) = prev {
            conf["prevResult"] = prev.clone();
        }
        conf
    }

    /// Runs the real `antrea` plugin against this Node's agent, as containerd would; returns
    /// (exit success, stdout as JSON or Null when empty).
    pub fn cni(
        &self,
        command: &str,
        container: &str,
        pod: &str,
        pod_netns: &str,
        conf: &serde_json::Value,
    ) -> (bool, serde_json::Value) {
        self.cni_in("default", command, container, pod, pod_netns, conf)
    }

    /// [`TestNode::cni`] for a Pod of Kubernetes Namespace `namespace`.
    pub fn cni_in(
        &self,
        namespace: &str,
        command: &str,
        container: &str,
        pod: &str,
        pod_netns: &str,
        conf: &serde_json::Value,
    ) -> (bool, serde_json::Value) {
        use std::io::Write;
        let mut child = Command::new(plugin_binary())
            .env("CNI_COMMAND", command)
            .env("CNI_CONTAINERID", container)
            .env("CNI_NETNS", format!("/var/run/netns/{pod_netns}"))
            .env("CNI_IFNAME", "eth0")
            .env("CNI_PATH", "/opt/cni/bin")
            .env("CNI_ARGS", format!("IgnoreUnknown=1;K8S_POD_NAMESPACE={namespace};K8S_POD_NAME={pod};K8S_POD_INFRA_CONTAINER_ID={container}"))
            .env("ANTREA_CNI_SOCKET", format!("unix:{}", self.cni_socket().display()))
            // A call to a stopped agent fails after a short wait, not the default 30 s.
            .env("ANTREA_CNI_READY_WAIT", "2")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run the antrea plugin");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(conf.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let json = if text.trim().is_empty() {
            serde_json::Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
        };
        (out.status.success(), json)
    }
}

/// The `antrea` plugin binary of the `cni` crate, built on first use into the same target
/// directory and profile as this test (or benchmark).
pub fn plugin_binary() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let mut build = Command::new(env!("CARGO"));
            build.args(["build", "--quiet", "-p", "cni", "--bin", "antrea"]);
            // Benchmarks are built with optimizations and measure the plugin built the same way.
            if !cfg!(debug_assertions) {
                build.arg("--release");
            }
            let status = build.status().expect("cargo build the antrea plugin");
            assert!(status.success(), "building the antrea plugin failed");
            let exe = std::env::current_exe().unwrap();
            let profile_dir = exe
                .parent()
                .and_then(Path::parent)
                .expect("target/<profile>/deps/<test>");
            profile_dir.join("antrea")
        })
        .clone()
}

impl Drop for TestNode {
    fn drop(&mut self) {
        if let Some(mut child) = self.agent.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `ovsdb-client monitor` of the columns the agent writes, in CSV, until dropped: its output
/// lists the initial rows, then every change.
pub struct DbMonitor {
    children: Vec<(String, Child, PathBuf)>,
}

impl DbMonitor {
    pub fn start(ovs: &Ovs, dir: &Path) -> DbMonitor {
        let db = format!("unix:{}", ovs.db_socket().display());
        let tables = [
            (
                "Bridge",
                "name,datapath_type,protocols,fail_mode,other_config,external_ids,ports",
            ),
            ("Port", "name,interfaces,external_ids"),
            (
                "Interface",
                "name,type,options,ofport_request,mtu_request,mac,external_ids",
            ),
        ];
        let mut children = Vec::new();
        for (table, columns) in tables {
            let path = dir.join(format!("monitor-{table}.csv"));
            let out = fs::File::create(&path).unwrap();
            let child = Command::new("ovsdb-client")
                .args([
                    "--format=csv",
                    "monitor",
                    &db,
                    "Open_vSwitch",
                    table,
                    columns,
                ])
                .stdout(out)
                .stderr(Stdio::null())
                .spawn()
                .expect("ovsdb-client monitor");
            children.push((table.to_owned(), child, path));
        }
        for (table, _, path) in &children {
            wait_until(&format!("the initial {table} rows"), || {
                fs::read_to_string(path).is_ok_and(|t| t.contains("initial"))
            });
        }
        DbMonitor { children }
    }

    /// The change lines seen so far (`table: line`), initial rows left out.
    pub fn changes(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (table, _, path) in &self.children {
            let text = fs::read_to_string(path).unwrap_or_default();
            for line in text.lines() {
                let action = line.split(',').nth(1).unwrap_or("");
                if ["insert", "delete", "old", "new"].contains(&action) {
                    out.push(format!("{table}: {line}"));
                }
            }
        }
        out
    }
}

impl Drop for DbMonitor {
    fn drop(&mut self) {
        for (_, child, _) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Serves `fake` on 127.0.0.1 of network namespace `netns` (the listener is created by a
/// thread that joined it) and writes its kubeconfig to `kubeconfig`.
#[cfg(target_os = "linux")]
pub fn serve_in(
    runtime: &tokio::runtime::Runtime,
    fake: &fakeapi::FakeApiServer,
    netns: &str,
    kubeconfig: &Path,
) -> fakeapi::TcpServer {
    let server = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let ns = std::fs::File::open(format!("/var/run/netns/{netns}")).unwrap();
                nix::sched::setns(ns, nix::sched::CloneFlags::CLONE_NEWNET).unwrap();
                runtime.block_on(fake.serve_tcp()).unwrap()
            })
            .join()
            .unwrap()
    });
    server.write_kubeconfig(kubeconfig).unwrap();
    server
}
