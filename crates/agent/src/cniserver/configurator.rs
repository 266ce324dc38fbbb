//! [`PodConfigurator`]: CNI ADD, DEL, CHECK and GC on this Node, and the reconciliation of
//! attached Pods when the agent starts.
//!
//! ADD: IPAM → the [`Datapath`] attaches the Pod (its interface, its port, its forwarding,
//! confirmed). Only then does ADD return, so the Pod is reachable the moment it starts. A
//! failure undoes everything ADD did. DEL works from any partial state.

use std::collections::{BTreeSet, HashSet};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cni::rpc::CmdRequest;
use cni::spec::{CniError, CniResult, code};
use hostnet::naming::endpoint_name;
use hostnet::{PodInterface, PodInterfaceSpec};
use ipam::{Ipam, IpamConfig};
use ipnet::Ipv4Net;
use model::PodKey;

use super::ipam_conf::ipam_config;
use super::locks::ContainerLocks;
use super::result::add_result;
use crate::cluster::Store;
use crate::datapath::step_clock::StepClock;
use crate::datapath::{AttachedPod, Datapath, PodAttach};
use crate::error::AgentError;

/// What the start-up reconciliation did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReconcileReport {
    /// Ports kept (their Pods' flows were installed with the round).
    pub kept: Vec<String>,
    /// Ports removed with their flows, interfaces and addresses: their address is no longer
    /// allocated, or (once the cluster source is synced) their Pod is not on this Node.
    pub removed: Vec<String>,
    /// Host ends of Pod interfaces we created that have no container port (an ADD cut short
    /// between creating the interface and adding its port), deleted.
    pub orphan_interfaces: Vec<String>,
    /// Addresses released because no kept port holds them (containers that no longer exist,
    /// such as an ADD cut short by a crash); `None` when the cluster source was not synced and
    /// nothing was collected.
    pub released: Option<Vec<IpAddr>>,
}

/// Wires Pods into the Node.
#[derive(Debug)]
pub struct PodConfigurator<D> {
    datapath: Arc<D>,
    pod_mtu: u32,
    locks: ContainerLocks,
    /// The IPAM stores ADD has used, also recorded with the datapath ([`IPAM_STORES`]).
    stores: tokio::sync::Mutex<BTreeSet<PathBuf>>,
}

/// The datapath record (the bridge's `external_ids` key on OVS) listing, as a JSON array, every
/// IPAM store directory the agent allocated from, recorded before the first allocation from it,
/// so that a restarted agent can collect addresses whose ADD never got as far as an attachment.
pub const IPAM_STORES: &str = "antrea-rs-ipam-stores";

fn interface_failure(e: impl std::fmt::Display) -> CniError {
    CniError::new(code::CONFIG_INTERFACE_FAILURE, e.to_string())
}

fn check_failure(e: impl std::fmt::Display) -> CniError {
    CniError::new(code::CHECK_INTERFACE_FAILURE, e.to_string())
}

fn ipam_failure(e: impl std::fmt::Display) -> CniError {
    CniError::new(code::IPAM_FAILURE, e.to_string())
}

/// Runs blocking IPAM store work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ipam::IpamError> + Send + 'static,
) -> Result<T, CniError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(ipam_failure)?
        .map_err(ipam_failure)
}

/// The request's `type` must be `antrea` and its IPAM `host-local`.
fn check_conf(req: &CmdRequest) -> Result<(), CniError> {
    let unsupported = |what: &str, value: &str| {
        CniError::new(
            code::UNSUPPORTED_FIELD,
            format!("Network configuration does not support {what}={value}"),
        )
    };
    if req.conf.plugin_type != "antrea" {
        return Err(unsupported("type", &req.conf.plugin_type));
    }
    if req.conf.ipam_type() != "host-local" {
        return Err(unsupported("ipam/type", req.conf.ipam_type()));
    }
    Ok(())
}

/// The Pod's DNS settings from the request (conflist `dns`, runtime `dns` capability), if any.
fn pod_dns(conf: &cni::spec::NetConf) -> Option<hostnet::PodDns> {
    let dns = conf.effective_dns();
    if dns.is_empty() {
        return None;
    }
    Some(hostnet::PodDns {
        nameservers: dns.nameservers,
        search: dns.search,
        domain: dns.domain,
    })
}

/// The IPv4 address of an IPAM result with its prefix length and gateway.
fn ipv4_of(result: &CniResult) -> Option<(Ipv4Addr, u8, Ipv4Addr)> {
    result
        .ips
        .iter()
        .find_map(|ip| match (ip.address.addr(), ip.gateway) {
            (IpAddr::V4(addr), Some(IpAddr::V4(gw))) => Some((addr, ip.address.prefix_len(), gw)),
            _ => None,
        })
}

impl<D: Datapath> PodConfigurator<D> {
    /// Pods attached to `datapath`; `pod_mtu` when the network configuration names none.
    pub fn new(datapath: Arc<D>, pod_mtu: u32) -> PodConfigurator<D> {
        PodConfigurator {
            datapath,
            pod_mtu,
            locks: ContainerLocks::default(),
            stores: tokio::sync::Mutex::default(),
        }
    }

    fn pod_key(req: &CmdRequest) -> Result<PodKey, CniError> {
        if req.k8s.pod_name.is_empty() || req.k8s.pod_namespace.is_empty() {
            return Err(CniError::new(
                code::INVALID_ENVIRONMENT_VARIABLES,
                "CNI_ARGS must name the Pod (K8S_POD_NAMESPACE and K8S_POD_NAME)",
            ));
        }
        Ok(PodKey::new(&req.k8s.pod_namespace, &req.k8s.pod_name))
    }

    /// CNI ADD. A repeated ADD returns the same result and changes nothing.
    pub async fn add(&self, req: &CmdRequest) -> Result<CniResult, CniError> {
        check_conf(req)?;
        let key = Self::pod_key(req)?;
        let mut clock = StepClock::start();
        let _guard = self.locks.lock(&req.container_id).await;
        clock.lap("lock");
        let config = ipam_config(&req.raw_conf, self.datapath.node())?;
        let ipam = Ipam::new(config.clone()).map_err(ipam_failure)?;
        self.remember_store(config.data_dir.join(&config.network))
            .await
            .map_err(ipam_failure)?;
        let (id, ifname) = (req.container_id.clone(), req.ifname.clone());
        let allocated = blocking({
            let ipam = ipam.clone();
            move || ipam.allocate(&id, &ifname)
        })
        .await?;
        clock.lap("ipam");
        let host_ifname = endpoint_name(&req.k8s.pod_name, &req.container_id);
        match self
            .wire(req, &key, &host_ifname, allocated, &config, &mut clock)
            .await
        {
            Ok(result) => {
                tracing::info!(
                    "CNI ADD {key} (container {}): port {host_ifname} ready, {clock}",
                    req.container_id
                );
                Ok(result)
            }
            Err(error) => {
                tracing::warn!("CNI ADD {key} failed, undoing it: {error}");
                if let Err(undo) = self.unwire(Some(&key), Some(&host_ifname)).await {
                    tracing::error!("undoing ADD of {key}: {undo}");
                }
                let (id, ifname) = (req.container_id.clone(), req.ifname.clone());
                if let Err(undo) = blocking(move || ipam.release(&id, &ifname)).await {
                    tracing::error!("releasing the address of {key}: {undo}");
                }
                Err(error)
            }
        }
    }

    async fn wire(
        &self,
        req: &CmdRequest,
        key: &PodKey,
        host_ifname: &str,
        allocated: CniResult,
        config: &IpamConfig,
        clock: &mut StepClock,
    ) -> Result<CniResult, CniError> {
        let (ip, prefix_len, gateway) = ipv4_of(&allocated)
            .ok_or_else(|| ipam_failure("IPAM gave no IPv4 address with a gateway"))?;
        let spec = PodInterfaceSpec {
            netns: req.netns.clone(),
            ifname: req.ifname.clone(),
            host_ifname: host_ifname.to_owned(),
            address: Ipv4Net::new(ip, prefix_len).map_err(|_| ipam_failure("bad prefix length"))?,
            gateway,
            mtu: req.conf.mtu.unwrap_or(self.pod_mtu),
            dns: pod_dns(&req.conf),
        };
        let attach = PodAttach {
            key: key.clone(),
            container_id: req.container_id.clone(),
            interface: spec,
            ipam_store: config.data_dir.join(&config.network).display().to_string(),
        };
        let created = self
            .datapath
            .attach_pod(&attach, clock)
            .await
            .map_err(interface_failure)?;
        Ok(add_result(
            allocated,
            &created,
            &req.netns,
            &req.ifname,
            &req.conf,
        ))
    }

    /// Removes what ADD made for a Pod, from any partial state.
    async fn unwire(
        &self,
        key: Option<&PodKey>,
        host_ifname: Option<&str>,
    ) -> Result<(), AgentError> {
        self.datapath.detach_pod(key, host_ifname).await
    }

    /// The Pods the datapath has attached: those ADD completed, with their records.
    pub async fn attached_pods(&self) -> Result<Vec<AttachedPod>, AgentError> {
        self.datapath.attached_pods().await
    }

    /// The container's attachment, found by its container ID.
    async fn attachment_of(&self, container_id: &str) -> Result<Option<AttachedPod>, AgentError> {
        Ok(self
            .attached_pods()
            .await?
            .into_iter()
            .find(|p| p.container_id == container_id))
    }

    /// CNI DEL: idempotent, from any partial state. A DEL is for one container: the Pod's
    /// flows go only if no other container of the same Pod is attached (a runtime's late DEL of
    /// a failed sandbox must not take the network of the sandbox that replaced it).
    pub async fn del(&self, req: &CmdRequest) -> Result<(), CniError> {
        let _guard = self.locks.lock(&req.container_id).await;
        let attached = self.attached_pods().await.map_err(interface_failure)?;
        let port = attached.iter().find(|p| p.container_id == req.container_id);
        let key = port
            .and_then(|p| p.key.clone())
            .or_else(|| Self::pod_key(req).ok())
            .filter(|key| {
                !attached
                    .iter()
                    .any(|p| p.container_id != req.container_id && p.key.as_ref() == Some(key))
            });
        let host_ifname = port.map(|p| p.name.clone()).or_else(|| {
            (!req.k8s.pod_name.is_empty())
                .then(|| endpoint_name(&req.k8s.pod_name, &req.container_id))
        });
        self.unwire(key.as_ref(), host_ifname.as_deref())
            .await
            .map_err(interface_failure)?;
        let ipam =
            Ipam::new(ipam_config(&req.raw_conf, self.datapath.node())?).map_err(ipam_failure)?;
        let (id, ifname) = (req.container_id.clone(), req.ifname.clone());
        let released = blocking(move || ipam.release(&id, &ifname)).await?;
        tracing::info!(
            "CNI DEL container {}{}: port {} removed, {} address(es) released",
            req.container_id,
            key.map(|k| format!(" ({k})")).unwrap_or_default(),
            host_ifname.as_deref().unwrap_or("(none)"),
            released.len()
        );
        Ok(())
    }

    /// CNI CHECK: the address is allocated, the interfaces of `prevResult` exist as described,
    /// and the OVS port is there.
    pub async fn check(&self, req: &CmdRequest) -> Result<(), CniError> {
        check_conf(req)?;
        let _guard = self.locks.lock(&req.container_id).await;
        let prev = req.prev_result()?;
        let mismatch = || {
            CniError::new(
                code::INVALID_NETWORK_CONFIG,
                "prevResult does not match network configuration",
            )
        };
        let pod_if = prev
            .interfaces
            .iter()
            .find(|i| i.name == req.ifname && !i.sandbox.is_empty())
            .ok_or_else(mismatch)?;
        let host_if = prev
            .interfaces
            .iter()
            .find(|i| i.sandbox.is_empty())
            .ok_or_else(mismatch)?;
        if pod_if.sandbox != req.netns {
            return Err(check_failure(format!(
                "sandbox {} is not {}",
                pod_if.sandbox, req.netns
            )));
        }
        let (ip, prefix_len, gateway) = ipv4_of(&prev).ok_or_else(mismatch)?;
        let ipam =
            Ipam::new(ipam_config(&req.raw_conf, self.datapath.node())?).map_err(ipam_failure)?;
        let (id, ifname) = (req.container_id.clone(), req.ifname.clone());
        if !blocking(move || ipam.check(&id, &ifname)).await? {
            return Err(check_failure(format!(
                "container {} holds no address",
                req.container_id
            )));
        }
        let spec = PodInterfaceSpec {
            netns: req.netns.clone(),
            ifname: req.ifname.clone(),
            host_ifname: host_if.name.clone(),
            address: Ipv4Net::new(ip, prefix_len).map_err(|_| mismatch())?,
            gateway,
            mtu: req.conf.mtu.unwrap_or(self.pod_mtu),
            dns: pod_dns(&req.conf),
        };
        let created = PodInterface {
            host_ifname: host_if.name.clone(),
            host_mac: host_if.mac.parse().map_err(|_| mismatch())?,
            container_mac: pod_if.mac.parse().map_err(|_| mismatch())?,
        };
        self.datapath
            .check_pod(&spec, &created)
            .await
            .map_err(check_failure)?;
        match self
            .attachment_of(&req.container_id)
            .await
            .map_err(check_failure)?
        {
            Some(port) if port.name == host_if.name => Ok(()),
            _ => Err(check_failure(format!(
                "attachment {} of container {} is missing",
                host_if.name, req.container_id
            ))),
        }
    }

    /// CNI GC: removes the Pods of containers not in `cni.dev/valid-attachments` and releases
    /// their addresses.
    pub async fn gc(&self, req: &CmdRequest) -> Result<(), CniError> {
        let valid: HashSet<(String, String)> = req
            .conf
            .valid_attachments
            .iter()
            .flatten()
            .map(|a| (a.container_id.clone(), a.ifname.clone()))
            .collect();
        for port in self.attached_pods().await.map_err(interface_failure)? {
            if !valid.contains(&(port.container_id.clone(), port.ifname.clone())) {
                let _guard = self.locks.lock(&port.container_id).await;
                self.unwire(port.key.as_ref(), Some(&port.name))
                    .await
                    .map_err(interface_failure)?;
                tracing::info!(
                    "CNI GC: port {} of container {} removed",
                    port.name,
                    port.container_id
                );
            }
        }
        let ipam =
            Ipam::new(ipam_config(&req.raw_conf, self.datapath.node())?).map_err(ipam_failure)?;
        let released = blocking(move || ipam.gc(&valid)).await?;
        tracing::info!("CNI GC: {} address(es) released", released.len());
        Ok(())
    }

    /// Records `store` on the bridge before the first allocation from it.
    async fn remember_store(&self, store: PathBuf) -> Result<(), AgentError> {
        let mut stores = self.stores.lock().await;
        if stores.contains(&store) {
            return Ok(());
        }
        let mut recorded = self.recorded_stores().await?;
        recorded.insert(store);
        let list: Vec<String> = recorded.iter().map(|p| p.display().to_string()).collect();
        let value = serde_json::Value::from(list).to_string();
        self.datapath.set_record(IPAM_STORES, &value).await?;
        *stores = recorded;
        Ok(())
    }

    /// The stores recorded on the bridge; an unreadable record counts as none.
    async fn recorded_stores(&self) -> Result<BTreeSet<PathBuf>, AgentError> {
        let text = self.datapath.record(IPAM_STORES).await?;
        Ok(text
            .and_then(|t| serde_json::from_str::<Vec<PathBuf>>(&t).ok())
            .unwrap_or_default()
            .into_iter()
            .collect())
    }

    /// At start-up, before the CNI server listens. A container port loses its flows, port,
    /// interface and address when its address is no longer allocated or, once `cluster` is
    /// synced, when its Pod (the port's `pod-namespace`/`pod-name`) is not among the Pods of
    /// `node_name`; the others keep them (their flows were installed with the round). A Pod
    /// interface we created (see [`hostnet::POD_INTERFACE_GROUP`]) without a kept port is
    /// deleted: its ADD was cut short and the runtime will retry or delete it. Then,
    /// when synced, every address in the recorded stores that no kept port's container holds is
    /// released: nothing alive can own it, since every ADD that completed made a port.
    pub async fn reconcile(
        &self,
        cluster: &Store,
        node_name: &str,
    ) -> Result<ReconcileReport, AgentError> {
        let pods_here: Option<HashSet<PodKey>> = cluster.is_synced().then(|| {
            cluster
                .pods_on_node(node_name)
                .iter()
                .map(|p| {
                    PodKey::new(
                        p.metadata.namespace.as_deref().unwrap_or("default"),
                        p.metadata.name.as_deref().unwrap_or_default(),
                    )
                })
                .collect()
        });
        let mut report = ReconcileReport::default();
        let mut stores = self.recorded_stores().await?;
        let mut valid = HashSet::new();
        for port in self.attached_pods().await? {
            if let Some(store) = &port.ipam_store {
                stores.insert(PathBuf::from(store));
            }
            let pod_gone = match (&pods_here, &port.key) {
                (Some(pods), Some(key)) => !pods.contains(key),
                _ => false,
            };
            if !pod_gone && self.still_allocated(&port) {
                valid.insert((port.container_id.clone(), port.ifname.clone()));
                report.kept.push(port.name);
                continue;
            }
            self.unwire(port.key.as_ref(), Some(&port.name)).await?;
            let why = if pod_gone {
                "its Pod is not on this Node"
            } else {
                "it no longer holds an address"
            };
            tracing::info!(
                "container {}: port {} removed, {why}",
                port.container_id,
                port.name
            );
            report.removed.push(port.name);
        }
        for name in self.datapath.pod_interfaces().await? {
            if report.kept.contains(&name) {
                continue;
            }
            self.unwire(None, Some(&name)).await?;
            tracing::info!("Pod interface {name} removed: it has no OVS port");
            report.orphan_interfaces.push(name);
        }
        *self.stores.lock().await = stores.clone();
        if pods_here.is_none() {
            tracing::info!("cluster source not synced: addresses are not collected");
            return Ok(report);
        }
        let mut released = Vec::new();
        for store in &stores {
            match gc_store(store, &valid) {
                Ok(ips) => {
                    for ip in &ips {
                        tracing::info!(
                            "address {ip} in {} released: no Pod on this Node holds it",
                            store.display()
                        );
                    }
                    released.extend(ips);
                }
                Err(error) => {
                    tracing::warn!("IPAM store {} not collected: {error}", store.display())
                }
            }
        }
        report.released = Some(released);
        Ok(report)
    }

    /// Whether the IPAM store named on the port still holds an address of its container. A
    /// port without a store record is kept.
    fn still_allocated(&self, port: &AttachedPod) -> bool {
        let Some(store) = &port.ipam_store else {
            return true;
        };
        let store = Path::new(store);
        let (Some(dir), Some(network)) =
            (store.parent(), store.file_name().and_then(|n| n.to_str()))
        else {
            return true;
        };
        match store_entries(dir, network) {
            Ok(entries) => entries.iter().any(|(_, owner)| {
                owner
                    .as_ref()
                    .is_some_and(|o| o.is(&port.container_id, &port.ifname))
            }),
            Err(error) => {
                tracing::warn!(
                    "IPAM store {} of port {} unreadable, port kept: {error}",
                    store.display(),
                    port.name
                );
                true
            }
        }
    }
}

/// Releases every address of the store directory `store` not held by `valid`; a store that
/// does not exist (yet, or any more) holds nothing.
fn gc_store(
    store: &Path,
    valid: &HashSet<(String, String)>,
) -> Result<Vec<IpAddr>, ipam::IpamError> {
    let (Some(dir), Some(network)) = (store.parent(), store.file_name().and_then(|n| n.to_str()))
    else {
        return Ok(Vec::new());
    };
    if !store.is_dir() {
        return Ok(Vec::new());
    }
    ipam::Store::open(dir, network)?.lock()?.gc(valid)
}

/// The address files of the store `<dir>/<network>`.
fn store_entries(
    dir: &Path,
    network: &str,
) -> Result<Vec<(IpAddr, Option<ipam::Owner>)>, ipam::IpamError> {
    let store = ipam::Store::open(dir, network)?;
    let locked = store.lock()?;
    locked.entries()
}
