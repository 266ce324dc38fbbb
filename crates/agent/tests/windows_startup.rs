//! `antrea-agent.exe` on a Windows host without the HCN API (`computenetwork.dll`) stops once
//! its Node is known, with one error line naming the DLL: the executable loads (no static
//! import of the DLL) and the missing API is reported, not a crash. Under Wine the DLL is the
//! shim of crates/hcnshim, which `ANTREA_HCN_SHIM_ABSENT=1` makes refuse to load.
#![cfg(windows)]

use std::ffi::OsStr;
use std::net::Ipv4Addr;

mod windows_agent;

use windows_agent::{error_lines, run_agent_to_exit};

#[test]
fn without_computenetwork_dll_the_agent_stops_with_one_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let output = run_agent_to_exit(
        dir.path(),
        Ipv4Addr::new(10, 10, 0, 13),
        &[("ANTREA_HCN_SHIM_ABSENT", OsStr::new("1"))],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("Node win-1: IP 10.10.0.13"),
        "the error comes after the Node is known: {stderr}"
    );
    let errors = error_lines(&stderr);
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("computenetwork.dll"), "{stderr}");
    assert!(
        errors[0].contains("Host Compute Network API is unavailable"),
        "{stderr}"
    );
}
