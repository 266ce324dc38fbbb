//! The lab with `--runtime containerd`: one containerd per Node makes the Pods through CRI
//! `RunPodSandbox` and runs the real `antrea` plugin itself (built by the first test, see
//! `support::build_agent_binaries`). The connectivity matrix passes with containerd's Pods; what
//! containerd hands the plugin (environment and configuration, recorded by a wrapper that then
//! runs the plugin) is what kubelet's CRI runtime sends; an agent killed between two sandbox
//! creations is survived by kubelet-like retries; and nothing is left: no address file, OVS
//! port, veth, network namespace, mount, cgroup, CNI cache entry or process.
//! Root, Linux; one lab at a time. Without containerd each test is a recorded skip (testskip).
#![cfg(target_os = "linux")]

mod support;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lab::agent::{ClusterObject, PodObject, write_object};
use lab::layout::Layout;
use lab::runtime::containerd::{PROGRAMS, on_path};
use lab::runtime::pod::{SandboxSpec, cgroup_parent, connect, remove_sandbox, run_sandbox};
use support::{Lab, build_agent_binaries, output_of, text, wait_until, write_script};

/// The CNI results cache containerd's CNI library keeps (not configurable in containerd 1.6).
const CNI_CACHE: &str = "/var/lib/cni/results";

/// Whether containerd and its helpers are installed; records a skip (testskip) when not.
fn containerd_installed(test: &str) -> bool {
    let missing: Vec<(&str, &str)> = PROGRAMS
        .into_iter()
        .filter(|(program, _)| on_path(program).is_none())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let programs: Vec<&str> = missing.iter().map(|(program, _)| *program).collect();
    let packages: BTreeSet<&str> = missing.iter().map(|(_, package)| *package).collect();
    let packages: Vec<&str> = packages.into_iter().collect();
    testskip::skip(
        test,
        &format!(
            "{} not on PATH (apt-get install {})",
            programs.join(", "),
            packages.join(" ")
        ),
    );
    false
}

/// One recorded plugin execution: its `CNI_*`/`ANTREA_*` environment and its stdin.
#[derive(Debug, Clone)]
struct Call {
    env: Vec<(String, String)>,
    conf: serde_json::Value,
}

impl Call {
    fn get(&self, key: &str) -> &str {
        self.env
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    }
}

/// A plugin wrapper that records each execution in `dir` and then runs the real plugin.
fn recording_plugin(lab: &Lab) -> (PathBuf, PathBuf) {
    let scratch = lab.scratch();
    let calls = scratch.join("calls");
    fs::create_dir_all(&calls).unwrap();
    let real = Path::new(env!("CARGO_BIN_EXE_antrea-lab"))
        .with_file_name("antrea")
        .display()
        .to_string();
    let wrapper = scratch.join("antrea");
    write_script(
        &wrapper,
        &format!(
            "f={}/$(date +%s%N)-$$\nenv > \"$f.env\"\ncat > \"$f.stdin\"\nexec {real} < \"$f.stdin\"",
            calls.display()
        ),
    );
    (wrapper, calls)
}

/// The recorded executions, in order.
fn calls(dir: &Path) -> Vec<Call> {
    let mut names: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "env"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|env_file| Call {
            env: fs::read_to_string(&env_file)
                .unwrap()
                .lines()
                .filter(|l| {
                    l.starts_with("CNI_") || l.starts_with("ANTREA_") || l.starts_with("PATH=")
                })
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
            conf: serde_json::from_slice(&fs::read(env_file.with_extension("stdin")).unwrap())
                .unwrap(),
        })
        .collect()
}

/// Nothing of the lab's containerd is left outside the state directory either: no mount under
/// it, no cgroup of the lab, no CNI cache entry of the given sandboxes.
fn assert_containerd_gone(lab: &Lab, sandboxes: &BTreeSet<String>) {
    let mounts = fs::read_to_string("/proc/self/mountinfo").unwrap();
    let marker = format!(" {}/", lab.state_dir.display());
    assert!(
        !mounts.lines().any(|l| l.contains(&marker)),
        "mounts left under the state directory:\n{mounts}"
    );
    let layout = Layout::new(&lab.state_dir);
    let cgroup = cgroup_parent(&layout, "x");
    let top = cgroup.trim_end_matches("/x");
    for hierarchy in fs::read_dir("/sys/fs/cgroup").unwrap().flatten() {
        let left = hierarchy.path().join(top.trim_start_matches('/'));
        assert!(!left.exists(), "cgroup {} left", left.display());
    }
    let cached: Vec<String> = fs::read_dir(CNI_CACHE)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for id in sandboxes {
        assert!(
            !cached.iter().any(|c| c.contains(id.as_str())),
            "CNI cache entry of sandbox {id} left: {cached:?}"
        );
    }
}

#[test]
fn containerd_makes_the_pods_and_the_matrix_passes_with_what_kubelet_would_send() {
    let test = "containerd_makes_the_pods_and_the_matrix_passes_with_what_kubelet_would_send";
    if !containerd_installed(test) {
        return;
    }
    build_agent_binaries();
    let lab = Lab::new("containerd-matrix");
    let (plugin, recorded) = recording_plugin(&lab);
    lab.run_ok(&[
        "up",
        "--api",
        "directory",
        "--runtime",
        "containerd",
        "--cni-bin",
        plugin.to_str().unwrap(),
    ]);
    let status = lab.run_ok(&["status"]);
    assert!(
        status.contains("healthy") && !status.contains("NOT healthy"),
        "{status}"
    );
    assert!(status.contains("lab-n1/containerd.pid"), "{status}");
    assert!(status.contains("runtime containerd"), "{status}");
    let report = lab.check_all_green(64);
    for p in report["probes"].as_array().unwrap() {
        if p["proto"] == "tcp" {
            assert_eq!(p["answered_by"], p["to"], "{p}");
        }
    }
    // Every ADD came from containerd, with kubelet's CRI arguments.
    let adds = calls(&recorded);
    assert_eq!(adds.len(), 4, "{adds:#?}");
    let mut sandboxes = BTreeSet::new();
    for call in &adds {
        let id = call.get("CNI_CONTAINERID").to_owned();
        assert!(
            id.len() == 64 && id.chars().all(|c| c.is_ascii_hexdigit()),
            "{id}"
        );
        let args: BTreeSet<&str> = call.get("CNI_ARGS").split(';').collect();
        let pod = args
            .iter()
            .find_map(|a| a.strip_prefix("K8S_POD_NAME="))
            .unwrap_or_else(|| panic!("{args:?}"))
            .to_owned();
        let (node, index) = pod
            .trim_start_matches("lab-n")
            .split_once("-p")
            .map(|(n, j)| (n.parse::<u8>().unwrap(), j.parse::<u8>().unwrap()))
            .unwrap();
        let uid = lab::plan::PodPlan { node, index }.uid();
        let want: BTreeSet<String> = [
            "K8S_POD_NAMESPACE=default".to_owned(),
            format!("K8S_POD_NAME={pod}"),
            format!("K8S_POD_INFRA_CONTAINER_ID={id}"),
            format!("K8S_POD_UID={uid}"),
            "IgnoreUnknown=1".to_owned(),
        ]
        .into();
        assert_eq!(
            args.iter().map(|a| a.to_string()).collect::<BTreeSet<_>>(),
            want
        );
        let node_dir = lab.path(&format!("lab-n{node}"));
        assert_eq!(call.get("CNI_COMMAND"), "ADD");
        assert_eq!(call.get("CNI_IFNAME"), "eth0");
        assert_eq!(
            call.get("CNI_PATH"),
            node_dir.join("containerd/cni-bin").display().to_string()
        );
        let netns = call.get("CNI_NETNS");
        let netns_dir = node_dir.join("containerd/state/io.containerd.grpc.v1.cri/netns/cni-");
        assert!(
            netns.starts_with(&netns_dir.display().to_string()),
            "{netns}"
        );
        assert_eq!(
            call.get("ANTREA_CNI_SOCKET"),
            node_dir.join("cni.sock").display().to_string()
        );
        // libcni puts the conflist's name and version into the plugin's entry, and the `dns`
        // capability's value into runtimeConfig (go-cni's field names, capitalised).
        assert_eq!(
            call.conf,
            serde_json::json!({
                "cniVersion": "1.0.0", "name": "antrea", "type": "antrea",
                "capabilities": {"dns": true},
                "ipam": {"type": "host-local", "dataDir": node_dir.join("ipam").display().to_string()},
                "runtimeConfig": {"dns": {
                    "Servers": ["10.96.0.10"],
                    "Searches": ["default.svc.cluster.local", "svc.cluster.local", "cluster.local"],
                    "Options": ["ndots:5"]}},
            })
        );
        sandboxes.insert(id);
    }
    fs::remove_dir_all(&recorded).unwrap();
    fs::create_dir_all(&recorded).unwrap();
    let down = lab.run_ok(&["down"]);
    assert_eq!(down.matches("through CRI").count(), 4, "{down}");
    // StopPodSandbox runs DEL with the netns and the cached result; RemovePodSandbox once more
    // without either.
    let dels = calls(&recorded);
    for id in &sandboxes {
        let of: Vec<&Call> = dels
            .iter()
            .filter(|c| c.get("CNI_CONTAINERID") == id)
            .collect();
        assert!(of.iter().all(|c| c.get("CNI_COMMAND") == "DEL"), "{of:#?}");
        assert!(
            of.iter()
                .any(|c| !c.get("CNI_NETNS").is_empty() && c.conf.get("prevResult").is_some()),
            "{of:#?}"
        );
    }
    lab.assert_gone();
    assert_containerd_gone(&lab, &sandboxes);
}

/// Publishes Pod `name` with `ip` on lab-n1 in the cluster directory, as the API server would
/// hold it for kubelet (an agent that starts removes the ports of Pods the cluster lacks).
fn publish_pod(lab: &Lab, name: &str, ip: std::net::Ipv4Addr) {
    let pod = PodObject::new(
        name,
        "lab-n1",
        "10.10.0.11".parse().unwrap(),
        ip,
        Default::default(),
    );
    write_object(&lab.path("cluster"), &pod.file_name(), &pod).unwrap();
}

/// Pings `ip` from namespace `from` until one echo of one ping is answered.
fn wait_ping(from: &str, ip: &str) {
    wait_until(&format!("{from} to answer ping to {ip}"), || {
        let out = std::process::Command::new("ip")
            .args(["netns", "exec", from, "ping", "-c1", "-W2", "-q", ip])
            .output()
            .unwrap();
        text(&out.stdout).contains("1 packets transmitted, 1 received")
    });
}

/// What the lab made on Node `lab-n1` for its Pods: address files, OVS ports, links and the
/// network namespaces containerd mounted.
fn node_pod_state(lab: &Lab) -> [BTreeSet<String>; 4] {
    let names = |dir: PathBuf| -> BTreeSet<String> {
        fs::read_dir(&dir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let links = output_of("ip", &["-n", "lab-n1", "-o", "link", "show"])
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .map(|n| n.split('@').next().unwrap().to_owned())
        .collect();
    let ports = lab
        .vsctl("lab-n1", &["list-ports", "br-int"])
        .lines()
        .map(str::to_owned)
        .collect();
    [
        names(lab.path("lab-n1/ipam/antrea")),
        ports,
        links,
        names(lab.path("lab-n1/containerd/state/io.containerd.grpc.v1.cri/netns")),
    ]
}

#[test]
fn an_agent_killed_between_two_sandboxes_is_survived_by_retries_and_nothing_leaks() {
    let test = "an_agent_killed_between_two_sandboxes_is_survived_by_retries_and_nothing_leaks";
    if !containerd_installed(test) {
        return;
    }
    build_agent_binaries();
    let lab = Lab::new("containerd-restart");
    lab.run_ok(&[
        "up",
        "--api",
        "directory",
        "--runtime",
        "containerd",
        "--nodes",
        "1",
        "--pods-per-node",
        "1",
    ]);
    let layout = Layout::new(&lab.state_dir);
    let before = node_pod_state(&lab);
    let spec = |name: &str, attempt: u32| SandboxSpec {
        name: name.to_owned(),
        namespace: "default".to_owned(),
        uid: format!("1ab00000-0000-4000-9000-{:012}", name.len()),
        attempt,
        cgroup_parent: cgroup_parent(&layout, "lab-n1"),
    };
    let mut cri = connect(&layout, "lab-n1").unwrap();
    let first = run_sandbox(
        &mut cri,
        "lab-n1",
        &spec("extra-a", 0),
        Duration::from_secs(60),
    )
    .unwrap();
    publish_pod(&lab, "extra-a", first.ip);
    wait_ping("lab-n1", &first.ip.to_string());

    // The agent crashes.
    let pid: i32 = fs::read_to_string(lab.path("lab-n1/antrea-agent.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    wait_until("the killed agent to be gone", || {
        fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
            s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z'))
        })
    });
    // kubelet's first try runs into its deadline: the plugin is waiting for the agent.
    let failed = run_sandbox(
        &mut cri,
        "lab-n1",
        &spec("extra-b", 0),
        Duration::from_secs(3),
    );
    assert!(
        failed.is_err(),
        "RunPodSandbox succeeded without an agent: {failed:?}"
    );
    lab.run_ok(&["agent", "start", "--node", "lab-n1"]);
    // containerd tears the failed try down by itself (a CNI DEL once the agent is back). The next
    // try waits for that: a DEL of the failed try that arrives after the next try's ADD removes
    // that Pod's flows (docs/lab.md, "Gap found by the containerd tests").
    wait_until("containerd's CNI DEL of the failed try", || {
        lab.agent_log("lab-n1").contains("CNI DEL container")
    });
    // kubelet tries again with the next attempt number until a sandbox is made.
    let started = Instant::now();
    let mut attempt = 1;
    let second = loop {
        match run_sandbox(
            &mut cri,
            "lab-n1",
            &spec("extra-b", attempt),
            Duration::from_secs(60),
        ) {
            Ok(sandbox) => break sandbox,
            Err(e) => {
                assert!(
                    started.elapsed() < Duration::from_secs(120),
                    "still failing: {e}"
                );
                eprintln!("RunPodSandbox attempt {attempt} failed: {e}");
                attempt += 1;
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    };
    publish_pod(&lab, "extra-b", second.ip);
    wait_ping("lab-n1", &second.ip.to_string());
    wait_ping("lab-n1-p1", &second.ip.to_string());
    wait_ping("lab-n1-p1", &first.ip.to_string());
    assert_ne!(first.ip, second.ip);

    // Every sandbox made (and every failed try) goes, and with it all it had on the Node.
    let ours: BTreeSet<String> = cri
        .list_pod_sandboxes()
        .unwrap()
        .into_iter()
        .filter(|s| {
            s.metadata
                .as_ref()
                .is_some_and(|m| m.name.starts_with("extra-"))
        })
        .map(|s| s.id)
        .collect();
    assert!(
        ours.contains(&first.id) && ours.contains(&second.id),
        "{ours:?}"
    );
    for id in &ours {
        remove_sandbox(&mut cri, "lab-n1", id).unwrap();
    }
    for name in ["extra-a", "extra-b"] {
        fs::remove_file(lab.path(&format!("cluster/pod-{name}.yaml"))).unwrap();
    }
    // The agent's start-up and the DELs leave the Node as it was before the extra Pods.
    wait_until(
        "the Node to hold only lab-n1-p1's address, port, links and netns",
        || node_pod_state(&lab) == before,
    );
    let cached: Vec<String> = fs::read_dir(CNI_CACHE)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for id in &ours {
        assert!(
            !cached.iter().any(|c| c.contains(id.as_str())),
            "{id}: {cached:?}"
        );
    }
    drop(cri);
    lab.run_ok(&["down"]);
    lab.assert_gone();
    assert_containerd_gone(&lab, &ours);
}

#[test]
fn containerd_without_the_agent_wiring_is_refused_and_leaves_nothing() {
    let lab = Lab::new("containerd-normal");
    let out = lab.run(&["up", "--runtime", "containerd", "--wiring", "normal"]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("--runtime containerd needs --wiring agent"),
        "{stderr}"
    );
    lab.assert_gone();
}
