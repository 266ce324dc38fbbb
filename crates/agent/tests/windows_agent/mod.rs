//! `antrea-agent.exe` run to its exit by the Windows tests: Antrea's Windows configuration and a
//! cluster directory holding the one Node `win-1` (Pod CIDR 10.244.3.0/24), both written into
//! the test's directory, and the error lines of what the agent printed.

use std::ffi::OsStr;
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Command, Output};

/// Runs the agent as Node `win-1` at `node_ip`, its configuration and cluster directory written
/// under `dir`, with `RUST_LOG=info` and `envs` in its environment; returns once it exited.
pub fn run_agent_to_exit(dir: &Path, node_ip: Ipv4Addr, envs: &[(&str, &OsStr)]) -> Output {
    let config = dir.join("antrea-agent.conf");
    std::fs::write(&config, include_str!("../data/antrea-agent-windows.conf")).unwrap();
    let cluster = dir.join("cluster");
    std::fs::create_dir(&cluster).unwrap();
    std::fs::write(
        cluster.join("nodes.yaml"),
        format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: win-1\nspec:\n  podCIDR: 10.244.3.0/24\nstatus:\n  addresses:\n  - type: InternalIP\n    address: {node_ip}\n"
        ),
    )
    .unwrap();
    Command::new(env!("CARGO_BIN_EXE_antrea-agent"))
        .arg("--config")
        .arg(&config)
        .arg("--cluster-dir")
        .arg(&cluster)
        .env("NODE_NAME", "win-1")
        .env("RUST_LOG", "info")
        .envs(envs.iter().copied())
        .output()
        .unwrap()
}

/// The lines the agent ends with on failure (`antrea-agent: …`) in its `stderr`.
pub fn error_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("antrea-agent: "))
        .collect()
}
