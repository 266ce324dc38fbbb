//! One containerd per Node: its files (configuration, CNI bin directory with `antrea`, conflist)
//! under the Node's directory, the shared mount for the Pod network namespaces, the process —
//! started with `nsenter --net` into the Node's network namespace but in the host's mount
//! namespace, so the mounts it makes (network namespaces, root file systems) are visible to
//! `down` and, through the shared mount, to the Node's agent — its readiness (CRI `Status`
//! reports `RuntimeReady` and `NetworkReady`), and the import of the lab's sandbox image.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::config::{CONFLIST, conflist, containerd_toml};
use super::cri::Cri;
use crate::cni::env::SOCKET_ENV;
use crate::error::{LabError, Result};
use crate::host::command::run;
use crate::host::mount::bind_shared;
use crate::host::process::spawn_detached;
use crate::layout::Layout;
use crate::plan::NodePlan;
use crate::wiring::agent::log_tail;

/// The containerd namespace the CRI plugin works in.
pub const CRI_NAMESPACE: &str = "k8s.io";

/// How long a containerd may take until its CRI service is ready.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// The programs `--runtime containerd` needs on `PATH`, and the packages that have them.
pub const PROGRAMS: [(&str, &str); 5] = [
    ("containerd", "containerd"),
    ("ctr", "containerd"),
    ("containerd-shim-runc-v2", "containerd"),
    ("runc", "runc"),
    ("nsenter", "util-linux"),
];

/// The reference `loopback` plugin (Debian's containernetworking-plugins): containerd's CRI
/// plugin brings up each sandbox's `lo` by running it, before the conflist's plugins.
pub const LOOPBACK_PLUGIN: &str = "/usr/lib/cni/loopback";

/// `program` on `PATH`, if it is there.
pub fn on_path(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    })
}

/// Fails with the package to install when a program `--runtime containerd` needs is missing.
pub fn verify_programs() -> Result<()> {
    for (program, package) in PROGRAMS {
        if on_path(program).is_none() {
            return Err(LabError::Options(format!(
                "--runtime containerd needs `{program}` on PATH (apt-get install {package})"
            )));
        }
    }
    if !Path::new(LOOPBACK_PLUGIN).is_file() {
        return Err(LabError::Options(format!(
            "--runtime containerd needs the loopback CNI plugin {LOOPBACK_PLUGIN} \
             (apt-get install containernetworking-plugins)"
        )));
    }
    Ok(())
}

fn dir(path: &Path) -> Result<()> {
    fs::create_dir_all(path).map_err(|source| LabError::File {
        what: "containerd directory",
        path: path.to_owned(),
        source,
    })
}

fn write(what: &'static str, path: &Path, text: &str) -> Result<()> {
    fs::write(path, text).map_err(|source| LabError::File {
        what,
        path: path.to_owned(),
        source,
    })
}

/// Writes `node`'s containerd files: the configuration, the CNI bin directory holding `antrea`
/// (a link to `cni_bin`) and `loopback` (a link to [`LOOPBACK_PLUGIN`]), the conflist, and makes the Pod network namespace directory a shared
/// mount. Must run before the Node's agent starts, so that the agent's mount namespace holds a
/// slave of that mount and sees the namespaces mounted there later.
pub fn prepare(layout: &Layout, node: NodePlan, cni_bin: &Path) -> Result<()> {
    let name = node.name();
    for path in [
        layout.containerd_dir(&name),
        layout.cni_bin_dir(&name),
        layout.cni_conf_dir(&name),
        layout.log_dir(&name),
    ] {
        dir(&path)?;
    }
    for (plugin, target) in [
        ("antrea", cni_bin),
        ("loopback", Path::new(LOOPBACK_PLUGIN)),
    ] {
        let link = layout.cni_bin_dir(&name).join(plugin);
        let target = fs::canonicalize(target).map_err(|source| LabError::File {
            what: "CNI plugin",
            path: target.to_owned(),
            source,
        })?;
        symlink(&target, &link).map_err(|source| LabError::File {
            what: "CNI plugin link",
            path: link.clone(),
            source,
        })?;
    }
    write(
        "CNI conflist",
        &layout.cni_conf_dir(&name).join(CONFLIST),
        &conflist(&layout.ipam_dir(&name)),
    )?;
    write(
        "containerd configuration",
        &layout.containerd_config(&name),
        &containerd_toml(layout, &name),
    )?;
    bind_shared(&layout.containerd_netns_dir(&name))
}

/// Starts `node`'s containerd in the Node's network namespace. Its environment is `PATH` and the
/// Node's agent socket (`ANTREA_CNI_SOCKET`), which containerd passes on to the plugins it runs.
pub fn start(layout: &Layout, node: NodePlan) -> Result<Child> {
    let name = node.name();
    let mut cmd = Command::new("nsenter");
    cmd.arg(format!("--net=/run/netns/{name}"))
        .arg("containerd")
        .arg("--config")
        .arg(layout.containerd_config(&name))
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env(SOCKET_ENV, layout.cni_socket(&name));
    spawn_detached(
        &mut cmd,
        &layout.containerd_pidfile(&name),
        &layout.containerd_log(&name),
    )
}

/// Waits until `node`'s containerd serves CRI with `RuntimeReady` and `NetworkReady` (its
/// conflist loaded); fails at once if it exits, with its log.
pub fn wait_ready(layout: &Layout, node: NodePlan, child: &mut Child) -> Result<()> {
    let name = node.name();
    let socket = layout.containerd_socket(&name);
    let fail = |message: String| LabError::Containerd {
        node: name.clone(),
        message: format!(
            "{message}; its log ({}) ends with:\n{}",
            layout.containerd_log(&name).display(),
            log_tail(&layout.containerd_log(&name), 20)
        ),
    };
    let started = Instant::now();
    let mut last = String::from("its socket did not appear");
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(fail(format!("containerd exited ({status})")));
        }
        if socket.exists() {
            match Cri::connect(&socket).and_then(|mut cri| cri.conditions()) {
                Ok(conditions) => {
                    let not_ready: Vec<String> = conditions
                        .iter()
                        .filter(|(_, ready, _)| !ready)
                        .map(|(kind, _, why)| format!("{kind}: {why}"))
                        .collect();
                    if conditions.len() >= 2 && not_ready.is_empty() {
                        return Ok(());
                    }
                    last = format!("CRI status not ready: {}", not_ready.join("; "));
                }
                Err(e) if e.code == tonic::Code::Unimplemented => {
                    return Err(fail(format!("its CRI plugin is not serving ({e})")));
                }
                Err(e) => last = e.to_string(),
            }
        }
        if started.elapsed() > READY_TIMEOUT {
            return Err(fail(format!(
                "not ready within {} s: {last}",
                READY_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Imports the sandbox image archive into `node`'s containerd (namespace `k8s.io`).
pub fn import_image(layout: &Layout, node: NodePlan) -> Result<()> {
    let name = node.name();
    run(Command::new("ctr")
        .arg("--address")
        .arg(layout.containerd_socket(&name))
        .args(["--namespace", CRI_NAMESPACE, "images", "import"])
        .arg(layout.sandbox_image()))
    .map(drop)
}
