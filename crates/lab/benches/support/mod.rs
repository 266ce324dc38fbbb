//! What the lab's benchmarks share: running `antrea-lab` with a state directory, building the
//! release binaries `up` starts (beside `antrea-lab`), and reading a process's memory.

use std::fs;
use std::path::Path;
use std::process::Command;

/// Runs `antrea-lab --state-dir STATE ARGS…`; its output, or a panic with what it printed.
pub fn lab(state: &str, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_antrea-lab"))
        .args(["--state-dir", state])
        .args(args)
        .output()
        .expect("antrea-lab runs");
    assert!(
        out.status.success(),
        "antrea-lab {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether `name` is one of the variables Cargo sets for the benchmark as a crate of package
/// `lab` (its manifest, package and crate). Some build scripts (ring's) are run again when
/// they change, so a build with them set would rebuild the workspace's release artifacts, and
/// the next plain `cargo build --release` rebuild them back.
fn set_for_this_crate(name: &str) -> bool {
    name.starts_with("CARGO_PKG_")
        || name.starts_with("CARGO_MANIFEST_")
        || name.starts_with("CARGO_BIN_")
        || [
            "CARGO_CRATE_NAME",
            "CARGO_PRIMARY_PACKAGE",
            "CARGO_TARGET_TMPDIR",
            "CARGO_RUSTC_CURRENT_DIR",
        ]
        .contains(&name)
}

/// Builds the binaries of `packages` (release) and checks that each of `bins` is beside
/// antrea-lab, where `up` finds them.
pub fn build_release_binaries(packages: &[&str], bins: &[&str]) {
    let mut cargo = Command::new(env!("CARGO"));
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(set_for_this_crate) {
            cargo.env_remove(name);
        }
    }
    cargo.args(["build", "--release", "--quiet", "--bins"]);
    for package in packages {
        cargo.args(["-p", package]);
    }
    let status = cargo.status().expect("cargo runs");
    assert!(status.success(), "building {packages:?} failed");
    let dir = Path::new(env!("CARGO_BIN_EXE_antrea-lab"))
        .parent()
        .unwrap();
    for bin in bins {
        assert!(dir.join(bin).is_file(), "{bin} is not beside antrea-lab");
    }
}

/// `key` (`VmRSS`, `VmHWM`) of process `pid`, KiB.
pub fn status_kib(pid: impl std::fmt::Display, key: &str) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("process {pid} is gone: {e}"));
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key} in /proc/{pid}/status"))
}
