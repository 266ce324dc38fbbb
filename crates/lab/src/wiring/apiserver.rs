//! The fake Kubernetes API server of `up --api fake`: a host of its own on the LAN (namespace
//! `lab-api`, 10.10.0.2), so every agent reaches it over its Node's NIC as it would reach a
//! real control plane, running `antrea-fake-apiserver` with plain HTTP on 10.10.0.2:6443 and
//! a Unix socket under the state directory for the lab itself. It is ready when it has written
//! the agents' kubeconfig; `down` stops it like every other process the lab started.

use std::fs;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use crate::error::{LabError, Result};
use crate::host::command::in_netns;
use crate::host::netns;
use crate::host::process::spawn_detached;
use crate::layout::Layout;
use crate::plan::{API_IP, API_NETNS, API_PORT};

use super::common::{attach_to_lan, wait_for_file};

/// How long the server may take to listen and write its kubeconfig.
const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// Fails with an operator message if the server binary is missing.
pub fn verify(bin: &Path) -> Result<()> {
    if bin.is_file() {
        Ok(())
    } else {
        Err(LabError::MissingBinary {
            what: "antrea-fake-apiserver",
            path: bin.to_owned(),
            hint: "set --apiserver-bin, or use --api directory",
        })
    }
}

/// Plugs `lab-api` into the LAN, starts the server there and waits until it serves.
pub fn start(layout: &Layout, bin: &Path) -> Result<()> {
    let dir = layout.api_dir();
    fs::create_dir_all(&dir).map_err(|source| LabError::File {
        what: "fake API server directory",
        path: dir.clone(),
        source,
    })?;
    netns::add(API_NETNS, true)?;
    attach_to_lan(API_NETNS, "u-api", None, API_IP)?;
    let kubeconfig = layout.api_kubeconfig();
    let mut cmd = in_netns(API_NETNS, bin);
    cmd.arg("--listen")
        .arg(SocketAddr::from((API_IP, API_PORT)).to_string())
        .arg("--kubeconfig-out")
        .arg(&kubeconfig)
        .arg("--unix-socket")
        .arg(layout.api_socket());
    let mut child = spawn_detached(&mut cmd, &layout.api_pidfile(), &layout.api_log())?;
    wait_for_file(
        &format!("antrea-fake-apiserver in {API_NETNS}"),
        &mut child,
        &kubeconfig,
        &layout.api_log(),
        READY_TIMEOUT,
    )
}
