//! The `antrea-agent` binary's command line on every platform: a failure is logged to the
//! `--log-file` (created with its directory) and is the last line on stderr; `--version` of the
//! agent and of `antctl` is the version and commit of the build (`buildinfo`).

use std::process::Command;

#[test]
fn a_start_up_failure_goes_to_the_log_file_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("logs").join("antrea-agent.log");
    let config = dir.path().join("missing.conf");
    let out = Command::new(env!("CARGO_BIN_EXE_antrea-agent"))
        .arg("--config")
        .arg(&config)
        .arg("--cluster-dir")
        .arg(dir.path())
        .arg("--log-file")
        .arg(&log)
        .env("RUST_LOG", "info")
        .output()
        .expect("run antrea-agent");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let wanted = format!("cannot read agent configuration {}: ", config.display());
    let last = stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("antrea-agent: {wanted}")),
        "{stderr}"
    );
    let logged = std::fs::read_to_string(&log).expect("the log file exists");
    let error = logged
        .lines()
        .find(|line| line.contains(" ERROR "))
        .unwrap_or_else(|| panic!("no ERROR line in {logged}"));
    assert!(error.contains(&wanted), "{logged}");
    // Each layer stamps its own time; the rest of the line is the same.
    let (_, message) = error.split_once(' ').unwrap();
    assert!(stderr.contains(message), "the console has it too: {stderr}");
}

#[test]
fn no_arguments_print_the_usage() {
    let out = Command::new(env!("CARGO_BIN_EXE_antrea-agent"))
        .output()
        .expect("run antrea-agent");
    assert_eq!(out.status.code(), Some(2));
    let help = String::from_utf8_lossy(&out.stderr);
    assert!(help.contains("--config <FILE>"), "{help}");
    assert!(help.contains("--log-file <FILE>"), "{help}");
    for command in [
        "install-service",
        "install-ovs",
        "prepare-node",
        "uninstall",
    ] {
        assert_eq!(
            help.contains(command),
            cfg!(windows),
            "{command}: the service and node setup sub-commands exist on Windows only: {help}"
        );
    }
}

#[test]
fn the_agent_and_antctl_print_their_version_and_commit() {
    for (name, exe) in [
        ("antrea-agent", env!("CARGO_BIN_EXE_antrea-agent")),
        ("antctl", env!("CARGO_BIN_EXE_antctl")),
    ] {
        let out = Command::new(exe)
            .arg("--version")
            .output()
            .expect("run --version");
        assert!(out.status.success(), "{name}: {out:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{name} {}\n", buildinfo::version())
        );
    }
}
