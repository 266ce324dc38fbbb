//! CNI ADD latency: the `antrea` plugin into a running agent (IPAM, veth, OVS port, OpenFlow
//! port, the Pod's flows confirmed by the switch) against Debian's reference `bridge` plugin with
//! `host-local` IPAM (IPAM, veth, Linux bridge port), on the same machine in the same run. Both
//! plugins are run by `ip netns exec <Node namespace>` as a runtime in the Node would, into Pod
//! namespaces of the same kind; the clock covers the plugin process from exec to its result.
//! Right after each ADD (off the clock) the Pod pings its gateway with one packet, which must be
//! answered. Phases: 100 sequential Pods, then 20 in parallel, alternating the contenders.
//! Then where the sequential ADDs' time went: the agent's steps (medians of the times its log
//! lines give) and each plugin's process alone (`VERSION`, which needs no agent).
//! Run as root: `cargo bench -p agent --bench cni_add`.

#[cfg(target_os = "linux")]
#[path = "../tests/support/mod.rs"]
mod support;

#[cfg(target_os = "linux")]
fn main() {
    bench::main();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("cni_add: Linux only");
}

#[cfg(target_os = "linux")]
mod bench {
    use std::io::Write;
    use std::path::Path;
    use std::process::{Command, Output, Stdio};
    use std::time::{Duration, Instant};

    use serde_json::{Value, json};

    use super::support::{Lan, TestNode, nodes_yaml, plugin_binary, run, succeeds};

    const SEQUENTIAL: usize = 100;
    const PARALLEL: usize = 20;
    const REFERENCE_PLUGIN: &str = "/usr/lib/cni/bridge";

    /// One contender: how to run its plugin and where its Pods' gateway is.
    struct Contender {
        name: &'static str,
        binary: String,
        node_netns: String,
        conf: Value,
        extra_env: Vec<(String, String)>,
        gateway: &'static str,
    }

    impl Contender {
        /// Runs the plugin in the Node's namespace with `env` and `stdin`: (latency, output).
        fn exec(&self, env: &[(&str, String)], stdin: &[u8]) -> (Duration, Output) {
            let start = Instant::now();
            let mut child = Command::new("ip")
                .args(["netns", "exec", &self.node_netns, &self.binary])
                .envs(env.iter().map(|(k, v)| (k, v)))
                .envs(self.extra_env.iter().map(|(k, v)| (k, v)))
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run the plugin");
            child.stdin.take().unwrap().write_all(stdin).unwrap();
            let out = child.wait_with_output().unwrap();
            (start.elapsed(), out)
        }

        /// ADD for `pod` in namespace `netns`: (latency, result). Panics on failure.
        fn add(&self, pod: &str, netns: &str) -> (Duration, Value) {
            let env = [
                ("CNI_COMMAND", "ADD".to_owned()),
                ("CNI_CONTAINERID", format!("c-{pod}")),
                ("CNI_NETNS", format!("/var/run/netns/{netns}")),
                ("CNI_IFNAME", "eth0".to_owned()),
                ("CNI_PATH", "/usr/lib/cni".to_owned()),
                (
                    "CNI_ARGS",
                    format!("IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME={pod}"),
                ),
            ];
            let (elapsed, out) = self.exec(&env, self.conf.to_string().as_bytes());
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{} ADD {pod}: {text}{}",
                self.name,
                String::from_utf8_lossy(&out.stderr)
            );
            (elapsed, serde_json::from_str(&text).expect("result JSON"))
        }

        /// `VERSION` (the process alone: exec, start, answer): its latency.
        fn version(&self) -> Duration {
            let env = [("CNI_COMMAND", "VERSION".to_owned())];
            let (elapsed, out) = self.exec(&env, br#"{"cniVersion":"1.0.0"}"#);
            assert!(out.status.success(), "{} VERSION failed", self.name);
            elapsed
        }

        /// One echo request from the Pod to its gateway, answered.
        fn first_ping(&self, netns: &str) -> bool {
            succeeds(&[
                "ip",
                "netns",
                "exec",
                netns,
                "ping",
                "-c1",
                "-W5",
                self.gateway,
            ])
        }
    }

    /// Latencies of one contender in one phase, and how many first pings were answered.
    #[derive(Default)]
    struct Samples {
        latencies: Vec<Duration>,
        answered: usize,
    }

    impl Samples {
        fn percentile(&self, p: f64) -> Duration {
            let mut v = self.latencies.clone();
            v.sort();
            let rank = ((p / 100.0) * v.len() as f64).ceil() as usize;
            v[rank.clamp(1, v.len()) - 1]
        }
    }

    /// The medians of the step times in the agent's `CNI ADD <pod> ... ready, total T ms
    /// (step t, ...)` lines for the Pods `pods`: `[("total", T), (step, t)...]`, in the order
    /// the lines name them.
    fn step_medians(log: &str, pods: &[String]) -> Vec<(String, f64)> {
        let mut steps: Vec<(String, Vec<f64>)> = Vec::new();
        for line in log.lines() {
            let Some((_, rest)) = line.split_once("CNI ADD default/") else {
                continue;
            };
            let pod = rest.split(' ').next().unwrap_or_default();
            if !pods.iter().any(|p| p == pod) {
                continue;
            }
            let Some((_, timing)) = rest.split_once(" ready, total ") else {
                continue;
            };
            let (total, inner) = timing.split_once(" ms (").expect("timed ADD line");
            let (inner, parts) = match inner.split_once(") [parts ended at: ") {
                Some((steps, parts)) => (steps, parts.trim_end_matches(']')),
                None => (inner.trim_end_matches(')'), ""),
            };
            let mut fields = vec![("total", total)];
            for step in inner.split(", ") {
                fields.push(step.split_once(' ').expect("step and time"));
            }
            for part in parts.split(", ").filter(|p| !p.is_empty()) {
                let (name, ended) = part.split_once(' ').expect("part and time");
                fields.push((name, ended));
            }
            for (name, value) in fields {
                let value: f64 = value.parse().expect("milliseconds");
                match steps.iter_mut().find(|(n, _)| n == name) {
                    Some((_, values)) => values.push(value),
                    None => steps.push((name.to_owned(), vec![value])),
                }
            }
        }
        steps
            .into_iter()
            .map(|(name, mut values)| {
                values.sort_by(f64::total_cmp);
                (name, values[values.len() / 2])
            })
            .collect()
    }

    fn ms(d: Duration) -> String {
        format!("{:.1} ms", d.as_secs_f64() * 1000.0)
    }

    /// The reference: a Linux bridge `cni-ref0` (gateway 10.99.0.1) with host-local IPAM.
    fn reference(node_netns: &str, data_dir: &Path) -> Contender {
        Contender {
            name: "bridge + host-local",
            binary: REFERENCE_PLUGIN.to_owned(),
            node_netns: node_netns.to_owned(),
            conf: json!({
                "cniVersion": "1.0.0",
                "name": "refnet",
                "type": "bridge",
                "bridge": "cni-ref0",
                "isGateway": true,
                "ipMasq": false,
                "ipam": {"type": "host-local", "subnet": "10.99.0.0/24", "dataDir": data_dir},
            }),
            extra_env: Vec::new(),
            gateway: "10.99.0.1",
        }
    }

    fn antrea(node: &TestNode) -> Contender {
        Contender {
            name: "antrea (agent)",
            binary: plugin_binary().display().to_string(),
            node_netns: node.netns.clone(),
            conf: node.netconf(None),
            extra_env: vec![(
                "ANTREA_CNI_SOCKET".to_owned(),
                format!("unix:{}", node.cni_socket().display()),
            )],
            gateway: "10.244.1.1",
        }
    }

    pub fn main() {
        assert!(
            Path::new(REFERENCE_PLUGIN).exists(),
            "{REFERENCE_PLUGIN} missing (apt-get install containernetworking-plugins)"
        );
        let mut lan = Lan::new();
        let node_ns = lan.node_netns(1);
        let ref_ns = lan.node_netns(2);
        run(&[
            "ip",
            "netns",
            "exec",
            &ref_ns,
            "sysctl",
            "-qw",
            "net.ipv4.ip_forward=1",
        ]);
        let mut node = TestNode::new(
            "n1",
            &node_ns,
            "",
            &nodes_yaml(&[("n1", "10.10.0.11", "10.244.1.0/24")]),
        );
        node.start_and_wait_up();
        let run_no = node.runs();
        super::support::wait_until("the CNI server", || node.cni_listening(run_no));
        let ref_data = tempfile::tempdir().unwrap();
        let contenders = [antrea(&node), reference(&ref_ns, ref_data.path())];
        // Warm-up: one Pod each (first exec of each binary, first port).
        for (i, c) in contenders.iter().enumerate() {
            let ns = lan.pod_netns(&format!("w{i}"));
            c.add(&format!("w{i}"), &ns);
            assert!(c.first_ping(&ns), "{} warm-up Pod unreachable", c.name);
        }

        let mut sequential: [Samples; 2] = Default::default();
        for i in 0..SEQUENTIAL {
            for (k, c) in contenders.iter().enumerate() {
                let pod = format!("q{k}x{i}");
                let ns = lan.pod_netns(&pod);
                let (latency, _) = c.add(&pod, &ns);
                sequential[k].latencies.push(latency);
                sequential[k].answered += usize::from(c.first_ping(&ns));
            }
        }

        let mut parallel: [Samples; 2] = Default::default();
        for (k, c) in contenders.iter().enumerate() {
            let pods: Vec<(String, String)> = (0..PARALLEL)
                .map(|i| {
                    let pod = format!("p{k}x{i}");
                    let ns = lan.pod_netns(&pod);
                    (pod, ns)
                })
                .collect();
            let outcomes: Vec<(Duration, bool)> = std::thread::scope(|s| {
                let handles: Vec<_> = pods
                    .iter()
                    .map(|(pod, ns)| {
                        s.spawn(move || {
                            let (latency, _) = c.add(pod, ns);
                            (latency, c.first_ping(ns))
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            for (latency, answered) in outcomes {
                parallel[k].latencies.push(latency);
                parallel[k].answered += usize::from(answered);
            }
        }

        println!("CNI ADD latency, plugin exec to result (ms); first ping right after each ADD\n");
        println!(
            "| phase | antrea p50 | antrea p99 | bridge+host-local p50 | bridge+host-local p99 | ratio p50 | ratio p99 | first pings answered (antrea / reference) |"
        );
        println!("|---|---|---|---|---|---|---|---|");
        for (phase, samples, n) in [
            ("100 sequential", &sequential, SEQUENTIAL),
            ("20 parallel", &parallel, PARALLEL),
        ] {
            let (a, r) = (&samples[0], &samples[1]);
            let ratio = |p: f64| a.percentile(p).as_secs_f64() / r.percentile(p).as_secs_f64();
            println!(
                "| {phase} | {} | {} | {} | {} | {:.2}× | {:.2}× | {}/{n} / {}/{n} |",
                ms(a.percentile(50.0)),
                ms(a.percentile(99.0)),
                ms(r.percentile(50.0)),
                ms(r.percentile(99.0)),
                ratio(50.0),
                ratio(99.0),
                a.answered,
                r.answered,
            );
        }
        let pods: Vec<String> = (0..SEQUENTIAL).map(|i| format!("q0x{i}")).collect();
        let steps = step_medians(&node.log(run_no), &pods);
        assert!(!steps.is_empty(), "no timed ADD lines in the agent's log");
        println!("\nantrea, 100 sequential ADDs: the agent's steps (median ms)\n");
        println!(
            "| {} |",
            steps
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        );
        println!("|{}", "---|".repeat(steps.len()));
        println!(
            "| {} |",
            steps
                .iter()
                .map(|(_, v)| format!("{v:.1}"))
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let mut versions: [Samples; 2] = Default::default();
        for _ in 0..SEQUENTIAL / 5 {
            for (k, c) in contenders.iter().enumerate() {
                versions[k].latencies.push(c.version());
            }
        }
        println!(
            "\nThe plugin process alone (`ip netns exec` + VERSION, p50 of {}): antrea {}, bridge {}",
            SEQUENTIAL / 5,
            ms(versions[0].percentile(50.0)),
            ms(versions[1].percentile(50.0)),
        );
        assert!(node.stop_agent(), "agent stopped cleanly");
    }
}
