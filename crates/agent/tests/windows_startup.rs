//! `antrea-agent.exe` on a Windows host without the HCN API (`computenetwork.dll`) stops once
//! its Node is known, with one error line naming the DLL: the executable loads (no static
//! import of the DLL) and the missing API is reported, not a crash. Under Wine the DLL is the
//! shim of crates/hcnshim, which `ANTREA_HCN_SHIM_ABSENT=1` makes refuse to load.
#![cfg(windows)]

use std::process::Command;

#[test]
fn without_computenetwork_dll_the_agent_stops_with_one_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("antrea-agent.conf");
    std::fs::write(&config, include_str!("data/antrea-agent-windows.conf")).unwrap();
    let cluster = dir.path().join("cluster");
    std::fs::create_dir(&cluster).unwrap();
    std::fs::write(
        cluster.join("nodes.yaml"),
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: win-1\nspec:\n  podCIDR: 10.244.3.0/24\nstatus:\n  addresses:\n  - type: InternalIP\n    address: 10.10.0.13\n",
    )
    .unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_antrea-agent"))
        .arg("--config")
        .arg(&config)
        .arg("--cluster-dir")
        .arg(&cluster)
        .env("NODE_NAME", "win-1")
        .env("ANTREA_HCN_SHIM_ABSENT", "1")
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("Node win-1: IP 10.10.0.13"),
        "the error comes after the Node is known: {stderr}"
    );
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("antrea-agent: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("computenetwork.dll"), "{stderr}");
    assert!(
        errors[0].contains("Host Compute Network API is unavailable"),
        "{stderr}"
    );
}
