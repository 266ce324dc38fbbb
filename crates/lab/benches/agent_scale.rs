//! The whole agent at scale (issue 12, benchmark (c)), root, Linux only: the resident memory
//! of one Node's `antrea-agent` process, with its Open vSwitch datapath, while the cluster of
//! issue 12's benchmark (a) is in the lab's fake API server. Everything goes through the
//! `antrea-lab` binary as an operator would run it, with release builds of the agent, the CNI
//! plugin, the controller and the fake API server, which the benchmark builds first.
//!
//! For each mode, controller (`up --controller`: the agent takes its NetworkPolicy from the
//! lab's `antrea-controller`) and, as the same run's baseline, local (the lab's default: the
//! agent watches every Namespace, Pod and NetworkPolicy and computes policy itself):
//!
//! 1. `antrea-lab up --api fake [--controller] --nodes 1 --pods-per-node 100`; the agent's
//!    VmRSS and br-int's flow count once up;
//! 2. the cluster of `crates/controller/benches/support/cluster.rs` (included by path) created
//!    over the fake API server's Unix socket by a few concurrent clients: 1,000 Namespaces,
//!    100,000 Pods (none on the lab's Node), 50,000 NetworkPolicies; then the lab Node's 100
//!    Pods (Namespace `default`) get the generator's labels, `default` its team label (`t0`),
//!    and 50 of its policies go into `default`. So the Node's span is 50 policies whose peers
//!    are every front-end Pod of the cluster;
//! 3. br-int's flow count polled until it has gained at least the policy flows the scenario
//!    implies ([`Scenario::policy_flows_floor`]) and then not changed for [`STEADY`];
//! 4. the agent's VmRSS (held), split into its file-backed part (`RssFile`: mostly the pages of
//!    the executable's code) and the rest (`RssAnon`: the heap, the stacks), and VmHWM (peak),
//!    the flows, the load and convergence times; `antrea-lab down`.
//!
//! `SCALE` (default 1.0) multiplies the number of generated Namespaces (each keeps its 100
//! Pods and 50 policies), e.g. `SCALE=0.05` for a quick run of 50 Namespaces. The lab's own 100
//! Pods and 50 policies do not scale.
//!
//! `MODES=controller` (or `local`) measures one mode only. `AGENT_BIN=PATH` runs another agent
//! executable (`up --agent-bin`), e.g. a script that starts the agent under `heaptrack` to see
//! what the held memory is.
//!
//! Run: `cargo bench -p lab --bench agent_scale` as root (not in CI).

#[cfg(target_os = "linux")]
fn main() {
    bench::run();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("the agent_scale benchmark runs on Linux only");
}

#[cfg(target_os = "linux")]
mod support;

#[cfg(target_os = "linux")]
#[allow(
    dead_code,
    reason = "shared with the controller's benchmarks, which load it whole in their own process"
)]
#[path = "../../controller/benches/support/cluster.rs"]
mod cluster;

#[cfg(target_os = "linux")]
mod bench {
    use super::support;
    use std::path::Path;
    use std::process::Command;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::thread;
    use std::time::{Duration, Instant};

    use lab::host::http;
    use lab::host::ovs::NodeOvs;
    use lab::host::process::read_pid;
    use lab::layout::Layout;
    use serde_json::json;

    use super::cluster::{self, NAMESPACES, PODS_PER_NAMESPACE, POLICIES_PER_NAMESPACE, mib};

    const STATE: &str = "/run/antrea-lab-agent-scale";
    /// The lab's one Node, whose agent is measured.
    const NODE: &str = "lab-n1";
    /// Pods on the lab's Node, in Namespace `default`.
    const LAB_PODS: usize = 100;
    /// Concurrent clients loading the cluster.
    const CLIENTS: usize = 4;
    /// How often br-int's flows are counted while waiting.
    const POLL: Duration = Duration::from_millis(250);
    /// How long the flow count must stay the same, once at its floor, to count as converged.
    const STEADY: Duration = Duration::from_secs(10);
    /// How long the agent may take to converge after the load.
    const CONVERGE_DEADLINE: Duration = Duration::from_secs(1800);
    /// Issue 12's goal for the agent's whole RSS in controller mode.
    const GOAL_MIB: f64 = 64.0;

    /// The generated cluster at `SCALE`.
    struct Scenario {
        namespaces: usize,
    }

    impl Scenario {
        fn from_env() -> Scenario {
            let scale: f64 = std::env::var("SCALE").map_or(1.0, |s| {
                s.parse()
                    .unwrap_or_else(|e| panic!("SCALE={s:?} is not a number: {e}"))
            });
            assert!(
                scale.is_finite() && scale > 0.0,
                "SCALE must be positive, not {scale}"
            );
            Scenario {
                namespaces: ((NAMESPACES as f64 * scale).round() as usize).max(1),
            }
        }

        fn pods(&self) -> usize {
            self.namespaces * PODS_PER_NAMESPACE
        }

        fn policies(&self) -> usize {
            self.namespaces * POLICIES_PER_NAMESPACE
        }

        /// The fewest flows the Node's policy adds (the renderer's conjunctive form, see
        /// `pipeline::render::policy`): one ingress peer flow per front-end Pod of the cluster
        /// (every team is a peer of some policy in `default`, and `default`'s own front-ends
        /// are team `t0`'s), one applied-to flow and one isolation flow per lab Pod (each is
        /// selected by one of `default`'s policies), and one `conj_id` flow per rule. The port
        /// flows, shared by every rule, are not counted.
        fn policy_flows_floor(&self) -> u64 {
            let front_ends = self.pods() / 2 + LAB_PODS / 2;
            (front_ends + 2 * LAB_PODS + POLICIES_PER_NAMESPACE) as u64
        }
    }

    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Mode {
        Controller,
        Local,
    }

    impl Mode {
        fn name(self) -> &'static str {
            match self {
                Mode::Controller => "controller",
                Mode::Local => "baseline: local",
            }
        }
    }

    /// One mode's numbers.
    struct Measured {
        mode: Mode,
        rss_start_kib: u64,
        rss_held_kib: u64,
        rss_held_file_kib: u64,
        hwm_kib: u64,
        flows_start: u64,
        flows: u64,
        load: Duration,
        converged_after: Duration,
        controller_rss_kib: Option<u64>,
    }

    fn lab(args: &[&str]) -> String {
        support::lab(STATE, args)
    }

    /// The agent, plugin, controller and fake API server, release build, beside antrea-lab.
    fn build_binaries() {
        support::build_release_binaries(
            &["agent", "cni", "controller", "fakeapi"],
            &[
                "antrea-agent",
                "antrea",
                "antrea-controller",
                "antrea-fake-apiserver",
            ],
        );
    }

    /// Runs `send(0..count)` on [`CLIENTS`] threads; the first error stops them all.
    fn in_parallel(count: usize, send: impl Fn(usize) -> Result<(), String> + Sync) {
        let next = AtomicUsize::new(0);
        let failed = AtomicBool::new(false);
        let first_error = Mutex::new(None);
        thread::scope(|s| {
            for _ in 0..CLIENTS {
                s.spawn(|| {
                    while !failed.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            break;
                        }
                        if let Err(e) = send(i) {
                            failed.store(true, Ordering::Relaxed);
                            first_error.lock().unwrap().get_or_insert(e);
                        }
                    }
                });
            }
        });
        if let Some(e) = first_error.into_inner().unwrap() {
            panic!("loading the cluster: {e}");
        }
    }

    fn create(socket: &Path, path: &str, object: &impl serde::Serialize) -> Result<(), String> {
        let body = serde_json::to_vec(object).map_err(|e| format!("POST {path}: {e}"))?;
        let answer = http::request(socket, "POST", path, Some(&body)).map_err(|e| e.to_string())?;
        match answer.status {
            201 => Ok(()),
            status => Err(format!("POST {path}: status {status}: {}", answer.text())),
        }
    }

    fn merge_patch(socket: &Path, path: &str, patch: &serde_json::Value) -> Result<(), String> {
        let answer = http::merge_patch(socket, path, patch.to_string().as_bytes())
            .map_err(|e| e.to_string())?;
        match answer.status {
            200 => Ok(()),
            status => Err(format!("PATCH {path}: status {status}: {}", answer.text())),
        }
    }

    /// Creates the scenario's cluster in the fake API server at `socket` and puts the lab's
    /// Pods into it.
    fn load_cluster(socket: &Path, scenario: &Scenario) {
        in_parallel(scenario.namespaces, |n| {
            create(socket, "/api/v1/namespaces", &cluster::namespace(n))
        });
        in_parallel(scenario.pods(), |k| {
            let (n, i) = (k / PODS_PER_NAMESPACE, k % PODS_PER_NAMESPACE);
            create(
                socket,
                &format!("/api/v1/namespaces/ns{n}/pods"),
                &cluster::pod(n, i),
            )
        });
        in_parallel(scenario.policies(), |k| {
            let (n, j) = (k / POLICIES_PER_NAMESPACE, k % POLICIES_PER_NAMESPACE);
            create(
                socket,
                &format!("/apis/networking.k8s.io/v1/namespaces/ns{n}/networkpolicies"),
                &cluster::policy(n, j),
            )
        });
        // The lab's Node takes the part of `ns0` and its Pods: `default` gets team t0 (the
        // lab does not create it), lab-n1-p<i> the generator's labels, and `default` the
        // policies of `ns0`.
        let mut default = cluster::namespace(0);
        default.metadata.name = Some("default".into());
        create(socket, "/api/v1/namespaces", &default)
            .unwrap_or_else(|e| panic!("loading the cluster: {e}"));
        in_parallel(LAB_PODS, |i| {
            let labels = cluster::pod(0, i + 1).metadata.labels;
            merge_patch(
                socket,
                &format!("/api/v1/namespaces/default/pods/{NODE}-p{}", i + 1),
                &json!({"metadata": {"labels": labels}}),
            )
        });
        in_parallel(POLICIES_PER_NAMESPACE, |j| {
            let mut policy = cluster::policy(0, j);
            policy.metadata.namespace = Some("default".into());
            create(
                socket,
                "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
                &policy,
            )
        });
    }

    /// Polls br-int's flow count until it is at least `floor` and has not changed for
    /// [`STEADY`]; returns it and when it was first seen.
    fn converge(ovs: &NodeOvs, floor: u64) -> (u64, Duration) {
        let start = Instant::now();
        let mut seen: Option<(u64, Duration)> = None;
        loop {
            let count = ovs
                .flow_count("br-int")
                .expect("br-int's flows are counted");
            let now = start.elapsed();
            match seen {
                Some((last, since)) if last == count => {
                    if count >= floor && now - since >= STEADY {
                        return (count, since);
                    }
                }
                _ => seen = Some((count, now)),
            }
            assert!(
                now < CONVERGE_DEADLINE,
                "the agent did not converge within {CONVERGE_DEADLINE:?}: {count} flows, at least {floor} expected"
            );
            thread::sleep(POLL);
        }
    }

    fn measure(mode: Mode, scenario: &Scenario) -> Measured {
        let _ = Command::new(env!("CARGO_BIN_EXE_antrea-lab"))
            .args(["--state-dir", STATE, "down"])
            .output();
        let mut up = vec![
            "up",
            "--api",
            "fake",
            "--nodes",
            "1",
            "--pods-per-node",
            "100",
        ];
        if mode == Mode::Controller {
            up.push("--controller");
        }
        let agent_bin = std::env::var("AGENT_BIN").ok();
        if let Some(bin) = &agent_bin {
            up.extend(["--agent-bin", bin]);
        }
        println!("{}: {}", mode.name(), lab(&up).trim());
        let layout = Layout::new(STATE);
        let agent = read_pid(&layout.agent_pidfile(NODE)).expect("the agent's pidfile");
        let ovs = NodeOvs::new(&layout, NODE);
        let rss_start_kib = support::status_kib(agent, "VmRSS");
        let flows_start = ovs
            .flow_count("br-int")
            .expect("br-int's flows are counted");

        let loading = Instant::now();
        load_cluster(&layout.api_socket(), scenario);
        let load = loading.elapsed();
        let floor = flows_start + scenario.policy_flows_floor();
        let (flows, converged_after) = converge(&ovs, floor);

        let measured = Measured {
            mode,
            rss_start_kib,
            rss_held_kib: support::status_kib(agent, "VmRSS"),
            rss_held_file_kib: support::status_kib(agent, "RssFile"),
            hwm_kib: support::status_kib(agent, "VmHWM"),
            flows_start,
            flows,
            load,
            converged_after,
            controller_rss_kib: read_pid(&layout.controller_pidfile())
                .map(|pid| support::status_kib(pid, "VmRSS")),
        };
        println!(
            "  loaded in {:.1} s; converged {:.1} s after the load: {flows} flows (at least {floor} expected)",
            load.as_secs_f64(),
            converged_after.as_secs_f64()
        );
        lab(&["down"]);
        measured
    }

    pub fn run() {
        let scenario = Scenario::from_env();
        build_binaries();
        println!(
            "cluster: {} Namespaces, {} Pods, {} NetworkPolicies; the lab: 1 Node ({NODE}), \
             {LAB_PODS} Pods in default (team t0) with {POLICIES_PER_NAMESPACE} policies",
            scenario.namespaces,
            scenario.pods(),
            scenario.policies()
        );
        let modes = std::env::var("MODES").unwrap_or_else(|_| "controller,local".to_owned());
        let results: Vec<Measured> = [Mode::Controller, Mode::Local]
            .into_iter()
            .filter(|mode| {
                modes
                    .split(',')
                    .map(str::trim)
                    .any(|m| !m.is_empty() && mode.name().contains(m))
            })
            .map(|mode| measure(mode, &scenario))
            .collect();
        assert!(!results.is_empty(), "MODES={modes:?} names no mode");

        println!(
            "| mode | RSS at start | RSS held | of which file-backed | peak (VmHWM) | flows (policy) | load | converged after the load |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|---:|");
        for m in &results {
            println!(
                "| {} | {:.1} MiB | **{:.1} MiB** | {:.1} MiB | {:.1} MiB | {} ({}) | {:.1} s | {:.1} s |",
                m.mode.name(),
                mib(m.rss_start_kib),
                mib(m.rss_held_kib),
                mib(m.rss_held_file_kib),
                mib(m.hwm_kib),
                m.flows,
                m.flows - m.flows_start,
                m.load.as_secs_f64(),
                m.converged_after.as_secs_f64()
            );
        }
        for m in &results {
            if let Some(kib) = m.controller_rss_kib {
                println!(
                    "antrea-controller VmRSS ({}): {:.1} MiB",
                    m.mode.name(),
                    mib(kib)
                );
            }
        }
        if let Some(controller) = results.iter().find(|m| m.mode == Mode::Controller) {
            let held = mib(controller.rss_held_kib);
            println!(
                "goal: the agent's RSS held in controller mode <= {GOAL_MIB} MiB: {} ({held:.1} MiB)",
                if held <= GOAL_MIB { "met" } else { "NOT met" }
            );
        }
    }
}
