//! End-to-end tests of `antrea-lab` as root: real namespaces, real OVS, real packets. They run
//! the binary as a separate process (as an operator would) and one at a time, since every lab
//! uses the machine-wide `lab-*` namespace names. The agent wiring here uses stand-in scripts
//! for the contract; `agent_lab.rs` runs the real agent and plugin.
#![cfg(target_os = "linux")]

mod support;

use std::fs;
use std::path::Path;

use std::process::Command;

use support::{Lab, lab_namespaces, processes_naming, text, write_script};

#[test]
fn normal_wiring_connects_everything_and_down_leaves_nothing() {
    let lab = Lab::new("normal");
    lab.run_ok(&[
        "up",
        "--wiring",
        "normal",
        "--nodes",
        "2",
        "--pods-per-node",
        "2",
    ]);
    let status = lab.run_ok(&["status"]);
    assert!(
        status.contains("healthy") && !status.contains("NOT healthy"),
        "{status}"
    );

    let report: serde_json::Value =
        serde_json::from_str(&lab.run_ok(&["check", "--json"])).unwrap();
    assert_eq!(report["ok"], true, "{report:#}");
    assert_eq!(report["snat"], "n/a");
    assert_eq!(report["summary"]["total"], 64);
    for count in ["failed", "could_not_run", "flaky"] {
        assert_eq!(report["summary"][count], 0, "{count}: {report:#}");
    }
    let probes = report["probes"].as_array().unwrap();
    for path in [
        "pod-pod-same-node",
        "pod-pod-cross-node",
        "node-pod",
        "pod-node",
        "pod-external",
    ] {
        for proto in ["tcp", "icmp"] {
            assert!(
                probes
                    .iter()
                    .any(|p| p["path"] == path && p["proto"] == proto),
                "no {path} {proto} probe"
            );
        }
    }
    for p in probes.iter().filter(|p| p["proto"] == "tcp") {
        assert_eq!(p["answered_by"], p["to"], "{p}");
        assert_eq!(p["ok"], true, "{p}");
    }
    // Pod to Pod across Nodes keeps the Pod's source address (NORMAL switching, no NAT).
    let cross = probes
        .iter()
        .find(|p| p["from"] == "lab-n1-p1" && p["to"] == "lab-n2-p2" && p["proto"] == "tcp")
        .unwrap();
    assert!(
        cross["peer_seen"]
            .as_str()
            .unwrap()
            .starts_with("10.244.1.11:"),
        "{cross}"
    );

    let iperf: serde_json::Value = serde_json::from_str(&lab.run_ok(&[
        "iperf",
        "--from",
        "lab-n1-p1",
        "--to",
        "lab-n2-p1",
        "--seconds",
        "1",
        "--json",
    ]))
    .unwrap();
    assert!(iperf["bits_per_second"].as_f64().unwrap() > 0.0, "{iperf}");

    lab.run_ok(&["down"]);
    lab.assert_gone();
    // down is idempotent.
    let again = lab.run_ok(&["down"]);
    assert!(
        again.contains("0 processes stopped, 0 namespaces deleted"),
        "{again}"
    );
}

#[test]
fn check_fails_and_names_the_broken_paths() {
    let lab = Lab::new("broken");
    lab.run_ok(&[
        "up",
        "--wiring",
        "normal",
        "--nodes",
        "2",
        "--pods-per-node",
        "1",
    ]);
    // Unplug Pod lab-n2-p1 from br-int: everything towards it must fail, the rest must pass.
    let status = Command::new("ovs-vsctl")
        .arg(format!(
            "--db=unix:{}/lab-n2/run/db.sock",
            lab.state_dir.display()
        ))
        .args(["del-port", "br-int", "n2p1"])
        .status()
        .unwrap();
    assert!(status.success());
    let out = lab.run(&["check", "--json", "--readiness-attempts", "1"]);
    assert!(!out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], false);
    for p in report["probes"].as_array().unwrap() {
        let touches_pod = p["from"] == "lab-n2-p1" || p["to"] == "lab-n2-p1";
        assert_eq!(p["ok"], !touches_pod, "{p}");
        let verdict = if touches_pod { "failed" } else { "passed" };
        assert_eq!(p["verdict"], verdict, "{p}");
    }
    assert_eq!(report["summary"]["could_not_run"], 0, "{report:#}");
    let text_report = text(&lab.run(&["check", "--readiness-attempts", "1"]).stdout);
    assert!(
        text_report.contains("lab-n1-p1 -> lab-n2-p1 (10.244.2.11) tcp: FAILED: connect to"),
        "{text_report}"
    );

    // Without ping on the PATH the ICMP probes could not run: never "failed", never a blocked
    // path; the TCP probes are judged as before.
    let scratch = lab.scratch();
    let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("ip is installed");
    std::os::unix::fs::symlink(ip, scratch.join("ip")).unwrap();
    let out = lab
        .command(&["check", "--json", "--readiness-attempts", "1"])
        .env("PATH", &scratch)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for p in report["probes"].as_array().unwrap() {
        if p["proto"] == "icmp" {
            assert_eq!(p["verdict"], "could-not-run", "{p}");
            assert!(
                p["detail"]
                    .as_str()
                    .unwrap()
                    .contains(r#"exec of "ping" failed"#),
                "{p}"
            );
        } else {
            let touches_pod = p["from"] == "lab-n2-p1" || p["to"] == "lab-n2-p1";
            assert_eq!(p["ok"], !touches_pod, "{p}");
        }
    }
    assert_eq!(report["summary"]["could_not_run"], 12, "{report:#}");
    lab.run_ok(&["down"]);
    lab.assert_gone();
}

#[test]
fn failed_up_removes_everything_it_made() {
    let lab = Lab::new("failed-up");
    let out = up_with_an_agent_that_never_gets_ready(&lab, "2", &[]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("timed out after 2.0 s waiting for antrea-agent of lab-n1 to create"),
        "{err}"
    );
    lab.assert_gone();
}

#[test]
fn down_cleans_a_failed_up_that_was_kept() {
    let lab = Lab::new("kept");
    let out = up_with_an_agent_that_never_gets_ready(&lab, "1", &["--keep-on-failure"]);
    assert!(!out.status.success());
    // Left behind: namespaces, OVS daemons and both agents.
    assert!(
        lab_namespaces().contains(&"lab-n2".to_owned()),
        "{:?}",
        lab_namespaces()
    );
    let procs = processes_naming(&lab.state_dir);
    assert_eq!(
        procs
            .iter()
            .filter(|p| p.contains("antrea-agent --config"))
            .count(),
        2,
        "{procs:?}"
    );
    assert_eq!(
        procs.iter().filter(|p| p.contains("ovs-vswitchd")).count(),
        2,
        "{procs:?}"
    );
    let status = lab.run(&["status"]);
    assert!(!status.status.success());
    assert!(
        text(&status.stdout).contains("building, or a failed up"),
        "{}",
        text(&status.stdout)
    );
    let down = lab.run_ok(&["down"]);
    assert!(down.contains("6 processes stopped"), "{down}");
    lab.assert_gone();
}

#[test]
fn agent_that_exits_is_reported_with_its_log() {
    let lab = Lab::new("agent-exits");
    let scratch = lab.scratch();
    write_script(
        &scratch.join("antrea-agent"),
        "echo \"agent says: cannot connect to OVS\" >&2; exit 3",
    );
    write_script(&scratch.join("antrea"), "exit 1");
    let out = lab.run(&[
        "up",
        "--wiring",
        "agent",
        "--api",
        "directory",
        "--agent-bin",
        &format!("{}/antrea-agent", scratch.display()),
        "--cni-bin",
        &format!("{}/antrea", scratch.display()),
    ]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains("antrea-agent of lab-n1 exited before it was ready (exit status: 3)"),
        "{err}"
    );
    assert!(err.contains("agent says: cannot connect to OVS"), "{err}");
    lab.assert_gone();
}

/// `--api fake` is refused without agents or without the server binary (asked for by plain `up`,
/// whose default with agent wiring is the fake API server), and a server that exits instead of
/// serving fails `up` with its log, leaving nothing (not even `lab-api`).
#[test]
fn fake_api_up_refuses_what_cannot_work_and_reports_a_server_that_exits() {
    let lab = Lab::new("api-refused");
    let scratch = lab.scratch();
    write_script(&scratch.join("antrea-agent"), "sleep 60");
    write_script(&scratch.join("antrea"), "exit 1");
    write_script(
        &scratch.join("antrea-fake-apiserver"),
        "echo \"apiserver says: $*\" >&2; exit 4",
    );
    let bin = |name: &str| format!("{}/{name}", scratch.display());
    let out = lab.run(&["up", "--api", "fake", "--wiring", "normal"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--api fake needs --wiring agent"),
        "{}",
        text(&out.stderr)
    );
    lab.assert_gone();
    let (agent, cni) = (bin("antrea-agent"), bin("antrea"));
    let agents = ["--agent-bin", &agent, "--cni-bin", &cni];
    let out = lab.run(
        &[
            &["up", "--apiserver-bin", "/nonexistent/apiserver"][..],
            &agents,
        ]
        .concat(),
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(
            "antrea-fake-apiserver not found at /nonexistent/apiserver (set --apiserver-bin, or use --api directory)"
        ),
        "{}",
        text(&out.stderr)
    );
    lab.assert_gone();
    let server = bin("antrea-fake-apiserver");
    let out = lab.run(
        &[
            &["up", "--api", "fake", "--apiserver-bin", &server][..],
            &agents,
        ]
        .concat(),
    );
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("antrea-fake-apiserver in lab-api"), "{err}");
    let state = lab.state_dir.display();
    assert!(
        err.contains(&format!(
            "apiserver says: --listen 10.10.0.2:6443 --kubeconfig-out {state}/api/kubeconfig --unix-socket {state}/api/apiserver.sock"
        )),
        "{err}"
    );
    lab.assert_gone();
}

/// The agent wiring's contract with the agent and the plugin, driven end to end with stand-in
/// scripts (the real binaries come later): config file and cluster directory as the agent
/// sees them, readiness by the CNI socket, the plugin's environment and stdin, the Pod IP from
/// its result, Pod objects in the cluster directory.
#[test]
fn agent_wiring_drives_agent_and_plugin_by_the_contract() {
    let lab = Lab::new("contract");
    let scratch = lab.scratch();
    let seen = scratch.join("seen");
    fs::create_dir_all(&seen).unwrap();
    // The agent: records its arguments, NODE_NAME, config and cluster directory, then becomes
    // ready by creating its CNI socket path (read from its config).
    write_script(
        &scratch.join("antrea-agent"),
        &format!(
            "d={seen}/$NODE_NAME; mkdir -p $d; echo \"$@\" > $d/args; cp \"$2\" $d/config; ls \"$4\" > $d/cluster\n\
             touch \"$(sed -n 's/^cniSocket: *//p' \"$2\" | tr -d '\"')\"\n\
             while :; do sleep 1; done",
            seen = seen.display()
        ),
    );
    // The plugin: records env and stdin, answers a CNI 1.0.0 result with an address derived
    // from the Pod name.
    write_script(
        &scratch.join("antrea"),
        &format!(
            "d={seen}/$(echo \"$CNI_ARGS\" | sed 's/.*K8S_POD_NAME=\\([^;]*\\).*/\\1/'); mkdir -p $d; env | grep -E '^(CNI_|ANTREA_)' | sort > $d/env; cat > $d/stdin\n\
             n=$(echo $CNI_CONTAINERID | cut -d- -f3 | sed 's/^0*//'); p=$(echo $CNI_CONTAINERID | cut -d- -f4 | sed 's/^0*//')\n\
             echo '{{\"cniVersion\":\"1.0.0\",\"interfaces\":[{{\"name\":\"eth0\",\"sandbox\":\"'$CNI_NETNS'\"}}],\"ips\":[{{\"address\":\"10.244.'$n'.'$((p+1))'/24\",\"gateway\":\"10.244.'$n'.1\",\"interface\":0}}]}}'",
            seen = seen.display()
        ),
    );
    let up = lab.run(&[
        "up",
        "--wiring",
        "agent",
        "--api",
        "directory",
        "--encap",
        "vxlan",
        "--agent-bin",
        &format!("{}/antrea-agent", scratch.display()),
        "--cni-bin",
        &format!("{}/antrea", scratch.display()),
    ]);
    assert!(up.status.success(), "{}", text(&up.stderr));
    let state = lab.state_dir.display().to_string();

    let args = fs::read_to_string(seen.join("lab-n2/args")).unwrap();
    assert_eq!(
        args.trim(),
        format!("--config {state}/lab-n2/antrea-agent.conf --cluster-dir {state}/cluster")
    );
    let config: serde_json::Value =
        serde_saphyr::from_str(&fs::read_to_string(seen.join("lab-n2/config")).unwrap()).unwrap();
    assert_eq!(config["ovsRunDir"], format!("{state}/lab-n2/run"));
    assert_eq!(config["cniSocket"], format!("{state}/lab-n2/cni.sock"));
    assert_eq!(
        (
            config["trafficEncapMode"].as_str(),
            config["tunnelType"].as_str()
        ),
        (Some("encap"), Some("vxlan"))
    );
    // Every Node object is in place before any agent starts.
    assert_eq!(
        fs::read_to_string(seen.join("lab-n1/cluster")).unwrap(),
        "node-lab-n1.yaml\nnode-lab-n2.yaml\n"
    );
    // The OVS the agent is pointed at is running.
    assert!(Path::new(&format!("{state}/lab-n2/run/db.sock")).exists());

    let env = fs::read_to_string(seen.join("lab-n2-p1/env")).unwrap();
    let expected = format!(
        "ANTREA_CNI_SOCKET={state}/lab-n2/cni.sock\n\
         CNI_ARGS=K8S_POD_NAMESPACE=default;K8S_POD_NAME=lab-n2-p1;K8S_POD_INFRA_CONTAINER_ID=antrea-lab-002-001\n\
         CNI_COMMAND=ADD\nCNI_CONTAINERID=antrea-lab-002-001\nCNI_IFNAME=eth0\nCNI_NETNS=/var/run/netns/lab-n2-p1\nCNI_PATH={}\n",
        scratch.display()
    );
    assert_eq!(env, expected);
    let stdin: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(seen.join("lab-n2-p1/stdin")).unwrap()).unwrap();
    assert_eq!(stdin["type"], "antrea");
    assert_eq!(stdin["cniVersion"], "1.0.0");
    // Each Node has its own IPAM store: one Node's GC must never release another's addresses.
    assert_eq!(stdin["ipam"]["dataDir"], format!("{state}/lab-n2/ipam"));
    // The cluster DNS kubelet would give the Pod; the plugin returns it in its result, and a
    // result without it (this stand-in's) leaves the Pod without a resolv.conf of its own.
    assert_eq!(
        stdin["dns"],
        serde_json::json!({"nameservers": ["10.96.0.10"],
            "search": ["default.svc.cluster.local", "svc.cluster.local", "cluster.local"],
            "options": ["ndots:5"]})
    );
    assert!(!Path::new("/etc/netns/lab-n2-p1").exists());

    let status = lab.run_ok(&["status"]);
    assert!(
        status.contains("pod lab-n2-p1    10.244.2.2      on lab-n2"),
        "{status}"
    );
    let pod: serde_json::Value = serde_saphyr::from_str(
        &fs::read_to_string(format!("{state}/cluster/pod-lab-n2-p1.yaml")).unwrap(),
    )
    .unwrap();
    assert_eq!(pod["spec"]["nodeName"], "lab-n2");
    assert_eq!(pod["status"]["podIP"], "10.244.2.2");

    let down = lab.run_ok(&["down"]);
    // 2 ovsdb-server, 2 ovs-vswitchd, 2 agents, 7 serve (4 Pods, 2 Nodes, lab-ext).
    assert!(down.contains("13 processes stopped"), "{down}");
    lab.assert_gone();
}

/// Runs `up` with stand-ins: an "agent" that never becomes ready (never creates its CNI
/// socket) and a plugin that fails; `ready_timeout` seconds, then `extra` arguments.
fn up_with_an_agent_that_never_gets_ready(
    lab: &Lab,
    ready_timeout: &str,
    extra: &[&str],
) -> std::process::Output {
    let scratch = lab.scratch();
    write_script(&scratch.join("antrea-agent"), "while :; do sleep 1; done");
    write_script(&scratch.join("antrea"), "exit 1");
    let agent = format!("{}/antrea-agent", scratch.display());
    let cni = format!("{}/antrea", scratch.display());
    let mut args = vec![
        "up",
        "--wiring",
        "agent",
        "--api",
        "directory",
        "--agent-bin",
        &agent,
        "--cni-bin",
        &cni,
        "--agent-ready-timeout",
        ready_timeout,
    ];
    args.extend_from_slice(extra);
    lab.run(&args)
}
