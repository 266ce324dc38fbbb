//! Pods made by containerd: the `PodSandboxConfig` kubelet would send for a lab Pod (metadata,
//! hostname, labels, cluster DNS, Linux namespace options), `RunPodSandbox` on the Node's
//! containerd (which runs the CNI ADD), the Pod IP from the sandbox status, the `ip netns`
//! name `lab-nK-pJ` attached to the sandbox's network namespace (so `check` and `serve` find
//! it like a Pod of the direct runtime) with the resolv.conf containerd gives the sandbox from
//! the same DNS configuration, and the Pod object in the cluster; and the way back:
//! `StopPodSandbox` (containerd runs the CNI DEL) and `RemovePodSandbox`.

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::time::Duration;

use k8s_cri::v1::{
    DnsConfig, LinuxPodSandboxConfig, LinuxSandboxSecurityContext, NamespaceMode, NamespaceOption,
    PodSandboxConfig, PodSandboxMetadata,
};

use super::cri::Cri;
use crate::agent::PodObject;
use crate::cni::Dns;
use crate::error::{LabError, Result};
use crate::host::command::ip;
use crate::host::netns;
use crate::layout::Layout;
use crate::plan::{NodePlan, PodPlan};
use crate::services::pod_labels;
use crate::state::PodRecord;
use crate::wiring::cluster::Cluster;

/// How long `RunPodSandbox` may take: kubelet's default runtime request timeout.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// How long `StopPodSandbox` and `RemovePodSandbox` may take.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(60);

/// The label naming the lab Pod a sandbox is for.
pub const POD_LABEL: &str = "antrea-lab/pod";

/// What kubelet puts in a Pod's sandbox request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSpec {
    /// The Pod's name.
    pub name: String,
    /// The Pod's Kubernetes namespace.
    pub namespace: String,
    /// The Pod's UID.
    pub uid: String,
    /// How many sandboxes were made for this Pod before (kubelet counts up on each new try).
    pub attempt: u32,
    /// The cgroup the sandbox's cgroup is made in ([`cgroup_parent`]).
    pub cgroup_parent: String,
}

/// The cgroup (in every hierarchy) that holds a lab's sandbox cgroups: named after the state
/// directory, so `down` removes its own and no other lab's. `/` is no name: the root.
pub fn lab_cgroup(layout: &Layout) -> String {
    layout
        .root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "antrea-lab".to_owned())
}

/// The cgroup parent of `node`'s sandboxes: `/<lab cgroup>/<node>`.
pub fn cgroup_parent(layout: &Layout, node: &str) -> String {
    format!("/{}/{node}", lab_cgroup(layout))
}

impl SandboxSpec {
    /// The sandbox of lab Pod `pod` of the lab at `layout`, first attempt.
    pub fn of(layout: &Layout, pod: PodPlan) -> SandboxSpec {
        SandboxSpec {
            name: pod.name(),
            namespace: "default".to_owned(),
            uid: pod.uid(),
            attempt: 0,
            cgroup_parent: cgroup_parent(layout, &pod.node().name()),
        }
    }

    /// The CRI request's configuration, as kubelet builds it for a Pod with `dnsPolicy:
    /// ClusterFirst` and no shared process namespace.
    pub fn config(&self) -> PodSandboxConfig {
        let dns = Dns::cluster_first(&self.namespace);
        let labels = HashMap::from([
            ("io.kubernetes.pod.name".to_owned(), self.name.clone()),
            (
                "io.kubernetes.pod.namespace".to_owned(),
                self.namespace.clone(),
            ),
            ("io.kubernetes.pod.uid".to_owned(), self.uid.clone()),
            (POD_LABEL.to_owned(), self.name.clone()),
        ]);
        let namespaces = NamespaceOption {
            network: NamespaceMode::Pod.into(),
            pid: NamespaceMode::Container.into(),
            ipc: NamespaceMode::Pod.into(),
            ..NamespaceOption::default()
        };
        PodSandboxConfig {
            metadata: Some(PodSandboxMetadata {
                name: self.name.clone(),
                uid: self.uid.clone(),
                namespace: self.namespace.clone(),
                attempt: self.attempt,
            }),
            hostname: self.name.clone(),
            dns_config: Some(DnsConfig {
                servers: dns.nameservers,
                searches: dns.search,
                options: dns.options,
            }),
            labels,
            linux: Some(LinuxPodSandboxConfig {
                cgroup_parent: self.cgroup_parent.clone(),
                security_context: Some(LinuxSandboxSecurityContext {
                    namespace_options: Some(namespaces),
                    ..LinuxSandboxSecurityContext::default()
                }),
                ..LinuxPodSandboxConfig::default()
            }),
            ..PodSandboxConfig::default()
        }
    }
}

/// A sandbox containerd made, with what its status said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// Its ID (containerd's; also `CNI_CONTAINERID`).
    pub id: String,
    /// The Pod IP.
    pub ip: Ipv4Addr,
    /// The sandbox process.
    pub pid: u32,
}

/// Opens `node`'s CRI connection.
pub fn connect(layout: &Layout, node: &str) -> Result<Cri> {
    Cri::connect(&layout.containerd_socket(node)).map_err(|e| LabError::Containerd {
        node: node.to_owned(),
        message: e.to_string(),
    })
}

/// `RunPodSandbox` of `spec` on `node`, then its status: the sandbox with its IP and process.
pub fn run_sandbox(
    cri: &mut Cri,
    node: &str,
    spec: &SandboxSpec,
    timeout: Duration,
) -> Result<Sandbox> {
    let fail = |message: String| LabError::Containerd {
        node: node.to_owned(),
        message: format!("Pod {}: {message}", spec.name),
    };
    let id = cri
        .run_pod_sandbox(spec.config(), timeout)
        .map_err(|e| fail(e.to_string()))?;
    let facts = cri.sandbox(&id).map_err(|e| fail(e.to_string()))?;
    let ip = facts
        .ip
        .parse()
        .map_err(|_| fail(format!("sandbox {id} has no IPv4 address ({:?})", facts.ip)))?;
    let pid = facts
        .pid
        .ok_or_else(|| fail(format!("sandbox {id}: its status names no process")))?;
    Ok(Sandbox { id, ip, pid })
}

/// Stops and removes sandbox `id` on `node` (containerd runs the CNI DEL on stop).
pub fn remove_sandbox(cri: &mut Cri, node: &str, id: &str) -> Result<()> {
    let fail = |e: super::cri::CriError| LabError::Containerd {
        node: node.to_owned(),
        message: e.to_string(),
    };
    cri.stop_pod_sandbox(id, STOP_TIMEOUT).map_err(fail)?;
    cri.remove_pod_sandbox(id, STOP_TIMEOUT).map_err(fail)
}

/// Creates lab Pod `pod` through its Node's containerd and publishes it in the cluster.
pub fn add_pod(layout: &Layout, pod: PodPlan, cluster: &Cluster) -> Result<PodRecord> {
    let (name, node): (String, NodePlan) = (pod.name(), pod.node());
    let mut cri = connect(layout, &node.name())?;
    let spec = SandboxSpec::of(layout, pod);
    let sandbox = run_sandbox(&mut cri, &node.name(), &spec, RUN_TIMEOUT)?;
    ip(&["netns", "attach", &name, &sandbox.pid.to_string()])?;
    if let Some(text) = Dns::cluster_first(&spec.namespace).resolv_conf() {
        netns::write_resolv_conf(&name, &text)?;
    }
    cluster.publish(&PodObject::new(
        &name,
        &node.name(),
        node.ip(),
        sandbox.ip,
        pod_labels(pod),
    ))?;
    Ok(PodRecord {
        name,
        node: node.name(),
        ip: Some(sandbox.ip),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_request_is_what_kubelet_sends() {
        let layout = Layout::new("/run/antrea-lab");
        let config = SandboxSpec::of(&layout, PodPlan { node: 2, index: 1 }).config();
        let meta = config.metadata.clone().unwrap();
        assert_eq!(
            (
                meta.name.as_str(),
                meta.namespace.as_str(),
                meta.uid.as_str(),
                meta.attempt
            ),
            (
                "lab-n2-p1",
                "default",
                "1ab00000-0000-4000-8000-000002000001",
                0
            )
        );
        assert_eq!(config.hostname, "lab-n2-p1");
        assert_eq!(config.labels["io.kubernetes.pod.uid"], meta.uid);
        assert_eq!(config.labels[POD_LABEL], "lab-n2-p1");
        let dns = config.dns_config.unwrap();
        assert_eq!(dns.servers, ["10.96.0.10"]);
        assert_eq!(dns.searches[0], "default.svc.cluster.local");
        let ns = config
            .linux
            .and_then(|l| l.security_context)
            .and_then(|s| s.namespace_options)
            .unwrap();
        assert_eq!(ns.network(), NamespaceMode::Pod);
        assert_eq!(ns.pid(), NamespaceMode::Container);
    }

    #[test]
    fn each_lab_has_its_own_cgroup() {
        assert_eq!(
            cgroup_parent(&Layout::new("/run/antrea-lab-test-x-7"), "lab-n1"),
            "/antrea-lab-test-x-7/lab-n1"
        );
        assert_eq!(lab_cgroup(&Layout::new("/")), "antrea-lab");
    }
}
