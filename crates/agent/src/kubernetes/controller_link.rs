//! [`link_to_controller`]: the agent's side of antrea-controller in controller mode. It finds
//! the controller (`controllerAddresses`, or the ClusterIP and port of the Service
//! `kube-system/antrea`) and the CA that verifies it (`ca.crt` of `controllerCAConfigMap`)
//! through the API server, then watches this Node's span with [`SpanWatch`], which presents
//! the ServiceAccount token read from `controllerTokenFile` at each connect, resumes after a
//! disconnect and backs off on failure. The deliveries are handed on in order; a resync asked
//! for by the NetworkPolicy controller (an update that did not fit its view) makes the watch
//! start again from a snapshot.
//!
//! Nothing here blocks the agent's start: until the controller is found the agent enforces
//! what it kept from the last run (see `NetworkPolicyController::given`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use controlplane::Delivery;
use controlplane::client::{Backoff, ClientConfig, SpanWatch, token_file};
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::{Api, Client};
use tokio::sync::{Notify, mpsc};

use crate::agent::ControllerLink;
use crate::config::ControllerConnection;

/// The Service antrea-controller is reached through when no address is configured.
const CONTROLLER_SERVICE: (&str, &str) = ("kube-system", "antrea");
/// Where a Windows HostProcess container finds its volumes (the ServiceAccount token among
/// them): the variable naming the container's mount point on the host.
const SANDBOX_MOUNT_POINT: &str = "CONTAINER_SANDBOX_MOUNT_POINT";
/// How many deliveries may wait for the NetworkPolicy controller.
const DELIVERY_QUEUE: usize = 16;
/// How long to wait before looking for the controller or its CA again.
const LOOKUP_BACKOFF: Backoff = Backoff {
    initial: Duration::from_secs(1),
    max: Duration::from_secs(30),
};

/// Starts watching Node `node`'s span at antrea-controller; the link's deliveries end only
/// when the agent drops it.
pub fn link_to_controller(
    connection: &ControllerConnection,
    client: &Client,
    node: &str,
) -> ControllerLink {
    let (deliveries, receiver) = mpsc::channel(DELIVERY_QUEUE);
    let resync = Arc::new(Notify::new());
    let task = Watch {
        connection: connection.clone(),
        client: client.clone(),
        node: node.to_owned(),
        deliveries,
        resync: resync.clone(),
    };
    tokio::spawn(task.run());
    ControllerLink {
        deliveries: receiver,
        resync,
    }
}

/// The token file to read: `configured`, or in a Windows HostProcess container (`sandbox` set)
/// a rooted path without a drive (the default `/var/run/secrets/…`) under the container's mount
/// point, where kubelet mounts the ServiceAccount token.
fn token_path(configured: &Path, sandbox: Option<&std::ffi::OsStr>) -> PathBuf {
    let text = configured.to_string_lossy();
    match sandbox {
        Some(root)
            if text.starts_with('/') || text.starts_with('\\') && !text.starts_with("\\\\") =>
        {
            Path::new(root).join(text.trim_start_matches(['/', '\\']))
        }
        _ => configured.to_owned(),
    }
}

struct Watch {
    connection: ControllerConnection,
    client: Client,
    node: String,
    deliveries: mpsc::Sender<Delivery>,
    resync: Arc<Notify>,
}

impl Watch {
    async fn run(self) {
        let Some((addresses, ca_pem)) = self.find_controller().await else {
            return;
        };
        let config = ClientConfig {
            node: self.node.clone(),
            addresses,
            server_name: self.connection.server_name.clone(),
            ca_pem,
            token: token_file(token_path(
                &self.connection.token_file,
                std::env::var_os(SANDBOX_MOUNT_POINT).as_deref(),
            )),
            backoff: Backoff::default(),
            deliveries: DELIVERY_QUEUE,
        };
        let (watch, mut received) = match SpanWatch::spawn(config) {
            Ok(started) => started,
            Err(error) => {
                tracing::error!(
                    "cannot watch Node {}'s span at antrea-controller: {error}; enforcing the last view kept",
                    self.node
                );
                return;
            }
        };
        loop {
            tokio::select! {
                delivery = received.recv() => {
                    let Some(delivery) = delivery else { return };
                    if self.deliveries.send(delivery).await.is_err() {
                        return;
                    }
                }
                () = self.resync.notified() => {
                    tracing::info!("asking antrea-controller for a fresh snapshot of Node {}'s span", self.node);
                    watch.resync();
                }
                () = self.deliveries.closed() => return,
            }
        }
    }

    /// The controller's addresses and CA, looked up until found; `None` if the agent stopped
    /// meanwhile.
    async fn find_controller(&self) -> Option<(Vec<String>, String)> {
        let mut delay = LOOKUP_BACKOFF.initial;
        let mut last_error = String::new();
        loop {
            match self.lookup().await {
                Ok(found) => {
                    tracing::info!(
                        "antrea-controller at {}, verified with the CA of ConfigMap {}/{}",
                        found.0.join(", "),
                        self.connection.ca_config_map.0,
                        self.connection.ca_config_map.1
                    );
                    return Some(found);
                }
                Err(error) => {
                    if error != last_error {
                        tracing::warn!("antrea-controller not found yet: {error}; looking again");
                        last_error = error;
                    }
                }
            }
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.deliveries.closed() => return None,
            }
            delay = (delay * 2).min(LOOKUP_BACKOFF.max);
        }
    }

    async fn lookup(&self) -> Result<(Vec<String>, String), String> {
        let (namespace, name) = &self.connection.ca_config_map;
        let config_map = Api::<ConfigMap>::namespaced(self.client.clone(), namespace)
            .get_opt(name)
            .await
            .map_err(|e| format!("reading ConfigMap {namespace}/{name}: {e}"))?
            .ok_or_else(|| format!("no ConfigMap {namespace}/{name}"))?;
        let ca_pem = config_map
            .data
            .and_then(|mut data| data.remove("ca.crt"))
            .filter(|ca| !ca.trim().is_empty())
            .ok_or_else(|| format!("ConfigMap {namespace}/{name} has no ca.crt"))?;
        let addresses = if self.connection.addresses.is_empty() {
            vec![self.service_address().await?]
        } else {
            self.connection.addresses.clone()
        };
        Ok((addresses, ca_pem))
    }

    /// `clusterIP:port` of the controller's Service (its first port).
    async fn service_address(&self) -> Result<String, String> {
        let (namespace, name) = CONTROLLER_SERVICE;
        let service = Api::<Service>::namespaced(self.client.clone(), namespace)
            .get_opt(name)
            .await
            .map_err(|e| format!("reading Service {namespace}/{name}: {e}"))?
            .ok_or_else(|| format!("no Service {namespace}/{name} and no controllerAddresses"))?;
        let spec = service.spec.unwrap_or_default();
        let ip = spec
            .cluster_ip
            .filter(|ip| !ip.is_empty() && ip != "None")
            .ok_or_else(|| format!("Service {namespace}/{name} has no ClusterIP"))?;
        let port = spec
            .ports
            .and_then(|ports| ports.first().map(|p| p.port))
            .ok_or_else(|| format!("Service {namespace}/{name} has no port"))?;
        Ok(if ip.contains(':') {
            format!("[{ip}]:{port}")
        } else {
            format!("{ip}:{port}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rooted_token_path_is_found_under_a_host_process_containers_mount_point() {
        let default = Path::new("/var/run/secrets/kubernetes.io/serviceaccount/token");
        assert_eq!(token_path(default, None), default);
        assert_eq!(
            token_path(default, Some(std::ffi::OsStr::new("C:\\C\\abc"))),
            Path::new("C:\\C\\abc").join("var/run/secrets/kubernetes.io/serviceaccount/token")
        );
        let with_drive = Path::new("C:\\etc\\antrea\\token");
        assert_eq!(
            token_path(with_drive, Some(std::ffi::OsStr::new("C:\\C\\abc"))),
            with_drive
        );
    }
}
