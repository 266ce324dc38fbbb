//! antrea-controller for `up --api fake --controller`: a host of its own on the LAN (namespace
//! `lab-ctl`, 10.10.0.3), as the control plane would run it, computing NetworkPolicy for the
//! whole lab from the fake API server and serving each Node's agent its span over TLS on
//! 10.10.0.3:10349. It is ready when it has published its CA in the ConfigMap
//! `kube-system/antrea-ca`, which the agents verify it with.
//!
//! Each agent authenticates as Kubernetes would have it: the ServiceAccount
//! `kube-system/antrea-agent`, with a token bound to an `antrea-agent-<node>` Pod on its Node
//! (asked of the API server with a TokenRequest), which the controller binds to that Node.

use std::fs;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::{LabError, Result};
use crate::host::command::{in_netns, wait_until};
use crate::host::http;
use crate::host::netns;
use crate::host::process::spawn_detached;
use crate::layout::Layout;
use crate::plan::{CONTROLLER_IP, CONTROLLER_NETNS, CONTROLLER_PORT};

use super::common::attach_to_lan;

/// How long the controller may take to win its Lease and publish its CA.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// The agents' ServiceAccount (the controller accepts its tokens only).
const AGENT_NAMESPACE: &str = "kube-system";
const AGENT_SERVICE_ACCOUNT: &str = "antrea-agent";

/// The address the agents reach the controller at.
pub fn address() -> SocketAddr {
    SocketAddr::from((CONTROLLER_IP, CONTROLLER_PORT))
}

/// Fails with an operator message if the controller binary is missing.
pub fn verify(bin: &Path) -> Result<()> {
    if bin.is_file() {
        Ok(())
    } else {
        Err(LabError::MissingBinary {
            what: "antrea-controller",
            path: bin.to_owned(),
            hint: "set --controller-bin",
        })
    }
}

/// Plugs `lab-ctl` into the LAN, starts the controller there on the fake API server and waits
/// until it has published its CA.
pub fn start(layout: &Layout, bin: &Path) -> Result<()> {
    let dir = layout.controller_dir();
    fs::create_dir_all(&dir).map_err(|source| LabError::File {
        what: "antrea-controller directory",
        path: dir.clone(),
        source,
    })?;
    netns::add(CONTROLLER_NETNS, true)?;
    attach_to_lan(CONTROLLER_NETNS, "u-ctl", None, CONTROLLER_IP)?;
    let mut cmd = in_netns(CONTROLLER_NETNS, bin);
    cmd.arg("--kubeconfig")
        .arg(layout.api_kubeconfig())
        .arg("--bind-address")
        .arg(address().to_string())
        .arg("--tls-san")
        .arg(CONTROLLER_IP.to_string())
        .arg("--identity")
        .arg(CONTROLLER_NETNS)
        .arg("--lease-duration-seconds")
        .arg("6");
    let mut child = spawn_detached(
        &mut cmd,
        &layout.controller_pidfile(),
        &layout.controller_log(),
    )?;
    let socket = layout.api_socket();
    let mut exited = None;
    wait_until(
        "antrea-controller to publish its CA in kube-system/antrea-ca",
        READY_TIMEOUT,
        || {
            exited = child.try_wait().ok().flatten();
            exited.is_some() || ca_published(&socket)
        },
    )?;
    match exited {
        None => Ok(()),
        Some(status) => Err(LabError::Output {
            tool: "antrea-controller",
            message: format!(
                "exited ({status}) before serving; its log:\n{}",
                super::agent::log_tail(&layout.controller_log(), 20)
            ),
        }),
    }
}

/// Whether the ConfigMap `kube-system/antrea-ca` holds a CA.
fn ca_published(socket: &Path) -> bool {
    http::request(
        socket,
        "GET",
        "/api/v1/namespaces/kube-system/configmaps/antrea-ca",
        None,
    )
    .ok()
    .filter(|r| r.status == 200)
    .and_then(|r| serde_json::from_slice::<Value>(&r.body).ok())
    .is_some_and(|cm| cm.pointer("/data/ca.crt").is_some_and(|ca| !ca.is_null()))
}

/// `POST`s `body` to `path` of the fake API server; `accept` lists the statuses that succeed.
fn post(socket: &Path, path: &str, body: &Value, accept: &[u16]) -> Result<Value> {
    let bytes = serde_json::to_vec(body).map_err(|e| LabError::Api {
        request: format!("POST {path}"),
        message: e.to_string(),
    })?;
    let response = http::request(socket, "POST", path, Some(&bytes))?;
    if !accept.contains(&response.status) {
        return Err(LabError::Api {
            request: format!("POST {path}"),
            message: format!("status {}: {}", response.status, response.text()),
        });
    }
    Ok(serde_json::from_slice(&response.body).unwrap_or(Value::Null))
}

/// Creates the agents' ServiceAccount (once for the lab).
pub fn create_agent_service_account(socket: &Path) -> Result<()> {
    post(
        socket,
        &format!("/api/v1/namespaces/{AGENT_NAMESPACE}/serviceaccounts"),
        &json!({
            "apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": AGENT_SERVICE_ACCOUNT, "namespace": AGENT_NAMESPACE},
        }),
        &[201, 409],
    )
    .map(drop)
}

/// Gives `node`'s agent its identity: its Pod `antrea-agent-<node>` (host network, on `node`,
/// as the DaemonSet would make it) and a token bound to that Pod, written to the agent's
/// token file (mode 0600).
pub fn issue_agent_token(layout: &Layout, socket: &Path, node: &str) -> Result<()> {
    let pod = format!("antrea-agent-{node}");
    post(
        socket,
        &format!("/api/v1/namespaces/{AGENT_NAMESPACE}/pods"),
        &json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": pod, "namespace": AGENT_NAMESPACE, "labels": {"app": "antrea", "component": "antrea-agent"}},
            "spec": {
                "nodeName": node, "hostNetwork": true, "serviceAccountName": AGENT_SERVICE_ACCOUNT,
                "containers": [{"name": "antrea-agent", "image": "antrea/antrea-agent"}],
            },
        }),
        &[201, 409],
    )?;
    let path = format!(
        "/api/v1/namespaces/{AGENT_NAMESPACE}/serviceaccounts/{AGENT_SERVICE_ACCOUNT}/token"
    );
    let answer = post(
        socket,
        &path,
        &json!({
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": pod}},
        }),
        &[201],
    )?;
    let token = answer
        .pointer("/status/token")
        .and_then(Value::as_str)
        .ok_or_else(|| LabError::Api {
            request: format!("POST {path}"),
            message: "no status.token in the answer".to_owned(),
        })?;
    let file = layout.agent_token(node);
    let written = fs::write(&file, token)
        .and_then(|()| fs::set_permissions(&file, fs::Permissions::from_mode(0o600)));
    written.map_err(|source| LabError::File {
        what: "agent token",
        path: file,
        source,
    })
}
