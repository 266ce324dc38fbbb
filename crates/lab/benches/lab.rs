//! The lab benchmark (root, Linux): Pod↔Pod TCP throughput across Nodes through the agent's
//! pipeline (Geneve and noEncap) against the same lab wired as a plain OVS NORMAL bridge in
//! the same run; the agent's resident memory with 100 Pods on its Node; the agent's start-up
//! time with 100 Pods present (to readiness, which it signals only after every flow is
//! confirmed); and the time from an `ovs-vswitchd` restart to every flow back. Everything goes
//! through the `antrea-lab` binary, as an operator would run it.

#[cfg(target_os = "linux")]
mod support;

#[cfg(target_os = "linux")]
fn main() {
    bench::run();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("the lab benchmark runs on Linux only");
}

#[cfg(target_os = "linux")]
mod bench {
    use super::support;
    use std::fs;
    use std::path::PathBuf;
    use std::process::Command;

    /// iperf3 seconds per measurement, and measurements per wiring.
    const SECONDS: &str = "5";
    const REPEATS: usize = 3;
    const STATE: &str = "/run/antrea-lab-bench";

    fn lab(args: &[&str]) -> String {
        support::lab(STATE, args)
    }

    fn warm(from: &str, to_ip: &str) {
        for _ in 0..5 {
            let ok = Command::new("ip")
                .args(["netns", "exec", from, "ping", "-c1", "-W1", to_ip])
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                return;
            }
        }
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    /// Median Gbit/s of lab-n1-p1 → lab-n2-p1 over REPEATS runs, with a freshly built lab.
    fn throughput(up: &[&str]) -> (f64, Vec<f64>) {
        let _ = lab(&["down"]);
        let mut args = vec!["up", "--api", "directory"];
        args.extend_from_slice(up);
        lab(&args);
        warm("lab-n1-p1", "10.10.0.12");
        warm("lab-n1-p1", &lab_pod_ip("lab-n2-p1"));
        let runs: Vec<f64> = (0..REPEATS)
            .map(|_| {
                let json = lab(&[
                    "iperf",
                    "--from",
                    "lab-n1-p1",
                    "--to",
                    "lab-n2-p1",
                    "--seconds",
                    SECONDS,
                    "--json",
                ]);
                let v: serde_json::Value = serde_json::from_str(&json).unwrap();
                v["bits_per_second"].as_f64().unwrap() / 1e9
            })
            .collect();
        lab(&["down"]);
        (median(runs.clone()), runs)
    }

    fn lab_pod_ip(pod: &str) -> String {
        let state: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(format!("{STATE}/state.json")).unwrap())
                .unwrap();
        state["pods"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == pod)
            .and_then(|p| p["ip"].as_str())
            .unwrap()
            .to_owned()
    }

    fn agent_pid(node: &str) -> String {
        fs::read_to_string(PathBuf::from(STATE).join(node).join("antrea-agent.pid"))
            .unwrap()
            .trim()
            .to_owned()
    }

    /// "… ready (CNI socket) in 0.123 s" → 0.123.
    fn ready_seconds(out: &str) -> f64 {
        out.rsplit(" in ")
            .next()
            .and_then(|t| t.trim().trim_end_matches(" s").parse().ok())
            .unwrap_or_else(|| panic!("no time in {out:?}"))
    }

    pub fn run() {
        support::build_release_binaries(&["agent", "cni"], &["antrea-agent", "antrea"]);
        println!(
            "lab benchmark: 2 Nodes, iperf3 lab-n1-p1 -> lab-n2-p1, {SECONDS} s x {REPEATS} (median)"
        );
        let (normal, normal_runs) = throughput(&["--wiring", "normal"]);
        println!("  baseline normal wiring (OVS NORMAL): {normal:.3} Gbit/s {normal_runs:.3?}");
        for encap in ["geneve", "noencap"] {
            let (agent, runs) = throughput(&["--wiring", "agent", "--encap", encap]);
            println!(
                "  agent wiring {encap:8}: {agent:.3} Gbit/s {runs:.3?}; ratio to normal {:.2}",
                agent / normal
            );
        }

        let _ = lab(&["down"]);
        let up = lab(&[
            "up",
            "--api",
            "directory",
            "--nodes",
            "2",
            "--pods-per-node",
            "100",
        ]);
        println!("2 Nodes x 100 Pods (geneve): {}", up.trim());
        let pid = agent_pid("lab-n1");
        println!(
            "  agent VmRSS with 100 Pods on its Node: {} KiB",
            support::status_kib(&pid, "VmRSS")
        );
        let flows = lab(&["ovs-restart", "--node", "lab-n1", "--json"]);
        let flows: serde_json::Value = serde_json::from_str(&flows).unwrap();
        println!(
            "  ovs-vswitchd restart: {} flows back {:.3} s after its start (control socket after {:.3} s)",
            flows["flows"],
            flows["flows_back_seconds"].as_f64().unwrap(),
            flows["vswitchd_start_seconds"].as_f64().unwrap()
        );
        let mut unchanged = Vec::new();
        for _ in 0..REPEATS {
            lab(&["agent", "stop", "--node", "lab-n1"]);
            unchanged.push(ready_seconds(&lab(&["agent", "start", "--node", "lab-n1"])));
        }
        println!(
            "  agent restart, nothing changed (flows read back and compared): ready in {:.3} s {unchanged:.3?}",
            median(unchanged.clone())
        );
        lab(&["agent", "stop", "--node", "lab-n1"]);
        // A change while the agent is down: a new round is installed for every flow.
        let n9 = lab::agent::NodeObject::new(
            "lab-n9",
            "10.244.9.0/24",
            "10.10.0.19".parse().unwrap(),
            "02:00:0a:0a:00:13",
        );
        let file = lab::agent::ClusterObject::file_name(&n9);
        lab::agent::write_object(&PathBuf::from(STATE).join("cluster"), &file, &n9).unwrap();
        let changed = ready_seconds(&lab(&["agent", "start", "--node", "lab-n1"]));
        println!(
            "  agent restart after a change (new round, every flow installed and confirmed): ready in {changed:.3} s"
        );
        println!(
            "  agent VmRSS after the restarts: {} KiB",
            support::status_kib(agent_pid("lab-n1"), "VmRSS")
        );
        lab(&["down"]);
    }
}
