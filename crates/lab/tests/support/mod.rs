//! What every lab end-to-end test shares: a lab under its own state directory run through the
//! `antrea-lab` binary (one at a time: every lab uses the machine-wide `lab-*` namespace
//! names), the real agent and plugin binaries, and oracles over the host (namespaces,
//! processes, `ip`, `ovs-ofctl`, `ovs-vsctl`). Each test binary uses a part of it.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

static ONE_LAB_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A lab under a state directory of its own; `down` on drop so a failed test leaves nothing.
pub struct Lab {
    pub state_dir: PathBuf,
    _serial: MutexGuard<'static, ()>,
}

impl Lab {
    pub fn new(test: &str) -> Lab {
        let serial = ONE_LAB_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let lab = Lab {
            state_dir: PathBuf::from(format!(
                "/run/antrea-lab-test-{test}-{}",
                std::process::id()
            )),
            _serial: serial,
        };
        assert!(
            lab_namespaces().is_empty(),
            "lab-* namespaces exist before the test (a lab is up?): {:?}",
            lab_namespaces()
        );
        lab
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("antrea-lab runs")
    }

    /// `antrea-lab --state-dir <dir> args…`, to run.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_antrea-lab"));
        cmd.arg("--state-dir").arg(&self.state_dir).args(args);
        cmd
    }

    pub fn run_ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "antrea-lab {args:?} failed: {}\n{}",
            text(&out.stderr),
            text(&out.stdout)
        );
        text(&out.stdout)
    }

    /// A scratch directory for fake binaries, outside the state directory.
    pub fn scratch(&self) -> PathBuf {
        let dir = PathBuf::from(format!("{}-scratch", self.state_dir.display()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Nothing of the lab is left: no namespace, no process naming the state directory, no
    /// state directory.
    pub fn assert_gone(&self) {
        assert_eq!(lab_namespaces(), Vec::<String>::new());
        assert_eq!(processes_naming(&self.state_dir), Vec::<String>::new());
        assert!(
            !self.state_dir.exists(),
            "{} still exists",
            self.state_dir.display()
        );
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.run(&["down"]);
        let _ = fs::remove_dir_all(format!("{}-scratch", self.state_dir.display()));
    }
}

/// Polls `ready` every 50 ms until it holds; fails after 60 s (a hang guard, not a bound on
/// how fast anything must be).
pub fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !ready() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn lab_namespaces() -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    text(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with("lab-"))
        .map(str::to_owned)
        .collect()
}

/// Live processes whose command line contains `dir/`.
pub fn processes_naming(dir: &Path) -> Vec<String> {
    let marker = format!("{}/", dir.display());
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = fs::read(entry.path().join("cmdline")) {
            let cmdline = text(&cmdline).replace('\0', " ");
            if cmdline.contains(&marker) {
                found.push(format!("{} {cmdline}", entry.file_name().to_string_lossy()));
            }
        }
    }
    found
}

pub fn write_script(path: &Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Builds `antrea-agent`, the `antrea` plugin, `antrea-fake-apiserver` and `antrea-controller`
/// (`cargo build -p agent -p cni -p fakeapi -p controller --bins`, same profile and target
/// directory as this test) once per test binary, so they sit beside `antrea-lab`, where `up`
/// looks for them by default.
pub fn build_agent_binaries() {
    static BUILT: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let lab_bin = Path::new(env!("CARGO_BIN_EXE_antrea-lab"));
        let profile_dir = lab_bin.parent().expect("target/<profile>/antrea-lab");
        let mut cargo = Command::new(env!("CARGO"));
        cargo.args([
            "build",
            "--quiet",
            "-p",
            "agent",
            "-p",
            "cni",
            "-p",
            "fakeapi",
            "-p",
            "controller",
            "--bins",
        ]);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cargo.arg("--release");
        }
        let status = cargo.status().expect("cargo runs");
        assert!(
            status.success(),
            "building antrea-agent, antrea, antrea-fake-apiserver and antrea-controller failed"
        );
        for bin in [
            "antrea-agent",
            "antrea",
            "antrea-fake-apiserver",
            "antrea-controller",
        ] {
            assert!(
                profile_dir.join(bin).is_file(),
                "{bin} not beside antrea-lab"
            );
        }
    });
}

/// The stdout of a command that must succeed.
pub fn output_of(program: &str, args: &[&str]) -> String {
    let out = Command::new(program).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

impl Lab {
    /// `path` under the state directory.
    pub fn path(&self, path: &str) -> PathBuf {
        self.state_dir.join(path)
    }

    /// br-int's flows on `node`, without statistics, sorted.
    pub fn flows(&self, node: &str) -> Vec<String> {
        let mgmt = format!("unix:{}/{node}/run/br-int.mgmt", self.state_dir.display());
        let mut flows: Vec<String> = output_of(
            "ovs-ofctl",
            &["-O", "OpenFlow15", "--no-stats", "dump-flows", &mgmt],
        )
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("OFPST_FLOW"))
        .map(str::to_owned)
        .collect();
        flows.sort();
        flows
    }

    /// `ovs-vsctl args…` against `node`'s database.
    pub fn vsctl(&self, node: &str, args: &[&str]) -> String {
        let db = format!("--db=unix:{}/{node}/run/db.sock", self.state_dir.display());
        let mut all = vec!["--timeout=10", &db];
        all.extend_from_slice(args);
        output_of("ovs-vsctl", &all).trim().to_owned()
    }

    /// The round recorded on `node`'s bridge (`external_ids:roundNum`).
    pub fn round(&self, node: &str) -> u16 {
        let value = self.vsctl(node, &["get", "bridge", "br-int", "external_ids:roundNum"]);
        value
            .trim_matches('"')
            .parse()
            .unwrap_or_else(|_| panic!("roundNum {value:?}"))
    }

    /// `ip route` in `node`'s namespace, one route a line, sorted.
    pub fn routes(&self, node: &str) -> Vec<String> {
        let mut routes: Vec<String> = output_of("ip", &["-n", node, "route", "show"])
            .lines()
            .map(str::to_owned)
            .collect();
        routes.sort();
        routes
    }

    /// The agent log of `node`.
    pub fn agent_log(&self, node: &str) -> String {
        fs::read_to_string(self.path(&format!("{node}/log/antrea-agent.log"))).unwrap_or_default()
    }

    /// The `check --json` report, asserted all green with SNAT verified and every TCP probe
    /// answered by its expected answerer: no probe failed, none could not run, none went
    /// through a Service that was not programmed, none is flaky (its readiness wait and its
    /// matrix attempt agree); readiness retries are printed.
    pub fn check_all_green(&self, total: u64) -> serde_json::Value {
        let out = self.run(&["check", "--json"]);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
        let probes = report["probes"].as_array().cloned().unwrap_or_default();
        let not_ok: Vec<&serde_json::Value> = probes.iter().filter(|p| p["ok"] != true).collect();
        assert!(out.status.success(), "probes not ok: {not_ok:#?}");
        assert_eq!(report["ok"], true, "probes not ok: {not_ok:#?}");
        assert_eq!(report["summary"]["total"], total, "{report:#}");
        for count in ["failed", "could_not_run", "not_programmed", "flaky"] {
            assert_eq!(report["summary"][count], 0, "{count}: {not_ok:#?}");
        }
        assert_eq!(report["snat"], "verified", "{report:#}");
        let retried: Vec<String> = probes
            .iter()
            .filter(|p| p["readiness"]["attempts"].as_u64() > Some(1))
            .map(|p| {
                format!(
                    "{} -> {} {}: ready at attempt {} ({})",
                    p["from"],
                    p["to"],
                    p["proto"],
                    p["readiness"]["attempts"],
                    p["readiness"]["detail"]
                )
            })
            .collect();
        eprintln!(
            "check: {} probes needed a readiness retry{}",
            retried.len(),
            retried
                .iter()
                .map(|r| format!("\n  {r}"))
                .collect::<String>()
        );
        report
    }
}

/// The round in a dumped flow's `cookie=0x…` (the top 16 bits, `pipeline::cookie`).
pub fn round_of(flow: &str) -> u16 {
    let hex = flow
        .split("cookie=0x")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .unwrap_or_else(|| panic!("no cookie in {flow}"));
    let cookie = u64::from_str_radix(hex, 16).unwrap();
    (cookie >> 48) as u16
}
