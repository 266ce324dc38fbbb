//! `antrea install` run as a process: copies itself and the platform conflist, then is a no-op.

use std::process::Command;

fn install(bin: &std::path::Path, conf: &std::path::Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_antrea"))
        .args(["install", "--cni-bin-dir"])
        .arg(bin)
        .arg("--cni-conf-dir")
        .arg(conf)
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn install_copies_plugin_and_conflist_once() {
    let dir = tempfile::tempdir().unwrap();
    let (bin, conf) = (dir.path().join("bin"), dir.path().join("net.d"));
    let (ok, out) = install(&bin, &conf);
    assert!(ok, "{out}");
    assert_eq!(
        out.lines().filter(|l| l.starts_with("installed ")).count(),
        2,
        "{out}"
    );
    let plugin = bin.join(cni::install::PLUGIN_NAME);
    assert_eq!(
        std::fs::read(&plugin).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_antrea")).unwrap()
    );
    let conflist = std::fs::read_to_string(conf.join("10-antrea.conflist")).unwrap();
    assert_eq!(conflist, cni::install::platform_conflist());
    let (ok, out) = install(&bin, &conf);
    assert!(
        ok && out.lines().all(|l| l.starts_with("unchanged ")),
        "{out}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&plugin).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
    }
    let mut run_copy = Command::new(&plugin);
    run_copy.env_clear().env("CNI_COMMAND", "VERSION");
    if let Ok(root) = std::env::var("SystemRoot") {
        run_copy.env("SystemRoot", root);
    }
    let copied = run_copy.output().unwrap();
    assert!(String::from_utf8_lossy(&copied.stdout).contains("supportedVersions"));
}

#[test]
fn install_without_directories_fails_with_usage() {
    let out = Command::new(env!("CARGO_BIN_EXE_antrea"))
        .arg("install")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: antrea install"));
}
