//! `agent` wiring: per Node the lab writes the agent's configuration, publishes every Node in
//! the lab's [`Cluster`] (the cluster directory or the fake API server), starts
//! `antrea-agent --config <file>` with `--cluster-dir <dir>` or `--kubeconfig <file>` and
//! `NODE_NAME` inside the Node's namespace, waits until the agent's CNI socket appears (the
//! readiness signal), then creates each Pod as a runtime would: a namespace, then the `antrea`
//! CNI plugin executed with `CNI_COMMAND=ADD` inside the Node's namespace, and the Pod object
//! (with the address from the plugin's result) published in the cluster, and the Pod's
//! resolv.conf written from the DNS settings of the result. With the fake API server it also
//! creates the lab's Services, whose slices the server's EndpointSlice controller makes from the
//! Pods they select (the lab writes the slice of a Service without a selector).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use super::cluster::Cluster;
use crate::agent::{
    AgentConfig, ControllerMode, EndpointSliceObject, NodeObject, PodObject, ServiceObject,
};
use crate::cni::{CniCommand, CniError, Invocation, NetConf, parse_dns, parse_result};
use crate::error::{LabError, Result};
use crate::host::command::{describe, in_netns, run_with_timeout, wait_until};
use crate::host::netns;
use crate::host::process::spawn_detached;
use crate::layout::Layout;
use crate::plan::{Encap, NodePlan, POD_IFNAME, PodPlan, Topology};
use crate::services::{Endpoints, lab_services, pod_labels};
use crate::state::{PodRecord, State};

/// How long one CNI plugin execution may take.
const CNI_TIMEOUT: Duration = Duration::from_secs(60);

/// The binaries the `agent` wiring drives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentBinaries {
    /// `antrea-agent`.
    pub agent: PathBuf,
    /// The `antrea` CNI plugin.
    pub cni: PathBuf,
    /// How long an agent may take to create its CNI socket.
    pub ready_timeout: Duration,
}

impl AgentBinaries {
    /// Fails with an operator message if a binary is missing.
    pub fn verify(&self) -> Result<()> {
        if !self.agent.is_file() {
            return Err(LabError::MissingBinary {
                what: "antrea-agent",
                path: self.agent.clone(),
                hint: "set --agent-bin",
            });
        }
        if !self.cni.is_file() {
            return Err(LabError::MissingBinary {
                what: "the antrea CNI plugin",
                path: self.cni.clone(),
                hint: "set --cni-bin",
            });
        }
        Ok(())
    }
}

/// Publishes every Node object in the cluster.
pub fn publish_nodes(cluster: &Cluster, topology: &Topology) -> Result<()> {
    cluster.prepare()?;
    for node in topology.nodes() {
        cluster.publish(&NodeObject::new(
            &node.name(),
            &node.pod_cidr(),
            node.ip(),
            &node.mac().to_string(),
        ))?;
    }
    Ok(())
}

/// Creates the lab's Services ([`crate::services::lab_services`]) in the fake API server, and
/// the EndpointSlice of each Service without a selector, naming its Pod as `state` records it.
pub fn publish_services(cluster: &Cluster, state: &State) -> Result<()> {
    for service in lab_services(&state.topology) {
        cluster.publish(&ServiceObject::of(&service))?;
        let Endpoints::Pod(pod) = service.endpoints else {
            continue;
        };
        let failed = |message: String| LabError::ServiceEndpoints {
            service: format!("{}/{}", service.namespace, service.name),
            message,
        };
        let ip = state
            .pod(&pod.name())
            .and_then(|p| p.ip)
            .ok_or_else(|| failed(format!("its Pod {} has no address", pod.name())))?;
        let slice = EndpointSliceObject::of(&service, ip, &pod.node().name()).ok_or_else(|| {
            failed("a hand-written EndpointSlice needs numeric target ports".to_owned())
        })?;
        cluster.publish(&slice)?;
    }
    Ok(())
}

/// Writes `node`'s agent configuration and starts its agent; the handle tells whether it exits.
/// With `controller`, the agent takes its NetworkPolicy from the lab's antrea-controller.
pub fn start_agent(
    layout: &Layout,
    node: NodePlan,
    encap: Encap,
    bins: &AgentBinaries,
    cluster: &Cluster,
    controller: bool,
) -> Result<Child> {
    let name = node.name();
    let config_path = layout.agent_config(&name);
    let mut config = AgentConfig::for_node(
        encap,
        &layout.ovs_run_dir(&name),
        &layout.cni_socket(&name),
        &layout.api_local_access_dir(&name),
    );
    config.controller = controller.then(|| {
        ControllerMode::new(
            super::controller::address(),
            &layout.agent_token(&name),
            &layout.policy_state_file(&name),
        )
    });
    let yaml = config.to_yaml().map_err(|message| LabError::Output {
        tool: "YAML writer",
        message,
    })?;
    fs::write(&config_path, yaml).map_err(|source| LabError::File {
        what: "agent configuration",
        path: config_path.clone(),
        source,
    })?;
    let mut cmd = in_netns(&name, &bins.agent);
    cmd.arg("--config")
        .arg(&config_path)
        .args(cluster.agent_args())
        .env("NODE_NAME", &name);
    spawn_detached(
        &mut cmd,
        &layout.agent_pidfile(&name),
        &layout.agent_log(&name),
    )
}

/// Waits until `node`'s agent has created its CNI socket; fails at once if the agent exits.
pub fn wait_ready(
    layout: &Layout,
    node: NodePlan,
    agent: &mut Child,
    timeout: Duration,
) -> Result<()> {
    let name = node.name();
    let socket = layout.cni_socket(&name);
    let mut exit = None;
    wait_until(
        &format!("antrea-agent of {name} to create {}", socket.display()),
        timeout,
        || {
            exit = agent.try_wait().ok().flatten();
            socket.exists() || exit.is_some()
        },
    )?;
    match exit {
        None => Ok(()),
        Some(status) => Err(LabError::AgentExited {
            node: name.clone(),
            status: status.to_string(),
            log_tail: log_tail(&layout.agent_log(&name), 20),
        }),
    }
}

/// The last `lines` lines of the log at `path` (empty when it cannot be read).
pub fn log_tail(path: &Path, lines: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// The CNI invocation that adds `pod`.
pub fn add_invocation(layout: &Layout, pod: PodPlan, cni_bin: &Path) -> Invocation {
    let name = pod.name();
    Invocation {
        command: CniCommand::Add,
        container_id: pod.container_id(),
        netns: PathBuf::from("/var/run/netns").join(&name),
        ifname: POD_IFNAME.to_owned(),
        pod_namespace: "default".to_owned(),
        pod_name: name,
        cni_path: cni_bin.parent().map(Path::to_path_buf).unwrap_or_default(),
        socket: layout.cni_socket(&pod.node().name()),
    }
}

/// Creates `pod` through the CNI plugin and publishes it in the cluster.
pub fn add_pod(
    layout: &Layout,
    pod: PodPlan,
    bins: &AgentBinaries,
    cluster: &Cluster,
) -> Result<PodRecord> {
    let (name, node) = (pod.name(), pod.node());
    netns::add(&name, false)?;
    let invocation = add_invocation(layout, pod, &bins.cni);
    let mut cmd = in_netns(&node.name(), &bins.cni);
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    for (key, value) in invocation.env() {
        cmd.env(key, value);
    }
    let out = run_with_timeout(
        &mut cmd,
        &NetConf::antrea(&layout.ipam_dir(&node.name())).to_json(),
        CNI_TIMEOUT,
    )?;
    let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
    let parsed = parse_result(&out.stdout, POD_IFNAME)
        .and_then(|address| Ok((address, parse_dns(&out.stdout)?)));
    let (address, dns) = match (out.status.success(), parsed) {
        (true, Ok(parsed)) => parsed,
        (_, Err(source)) => {
            return Err(LabError::Cni {
                pod: name,
                source,
                stderr,
            });
        }
        (false, Ok(_)) => {
            let source = CniError::Malformed(format!(
                "`{}` exited with {} after printing a success result",
                describe(&cmd),
                out.status
            ));
            return Err(LabError::Cni {
                pod: name,
                source,
                stderr,
            });
        }
    };
    if let Some(resolv_conf) = dns.resolv_conf() {
        netns::write_resolv_conf(&name, &resolv_conf)?;
    }
    cluster.publish(&PodObject::new(
        &name,
        &node.name(),
        node.ip(),
        address.ip,
        pod_labels(pod),
    ))?;
    Ok(PodRecord {
        name,
        node: node.name(),
        ip: Some(address.ip),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_invocation_points_at_the_pod_and_its_node() {
        let layout = Layout::new("/run/antrea-lab");
        let inv = add_invocation(
            &layout,
            PodPlan { node: 2, index: 1 },
            Path::new("/opt/lab/bin/antrea"),
        );
        assert_eq!(inv.netns, Path::new("/var/run/netns/lab-n2-p1"));
        assert_eq!(inv.socket, Path::new("/run/antrea-lab/lab-n2/cni.sock"));
        assert_eq!(inv.cni_path, Path::new("/opt/lab/bin"));
        assert_eq!(
            inv.cni_args(),
            "K8S_POD_NAMESPACE=default;K8S_POD_NAME=lab-n2-p1;K8S_POD_INFRA_CONTAINER_ID=antrea-lab-002-001"
        );
        assert_eq!(inv.ifname, "eth0");
        assert_eq!(inv.command, CniCommand::Add);
    }

    #[test]
    fn missing_binaries_are_named() {
        let bins = AgentBinaries {
            agent: "/nonexistent/antrea-agent".into(),
            cni: "/bin/sh".into(),
            ready_timeout: Duration::from_secs(1),
        };
        assert!(
            bins.verify()
                .unwrap_err()
                .to_string()
                .contains("--agent-bin")
        );
        let bins = AgentBinaries {
            agent: "/bin/sh".into(),
            cni: "/nonexistent/antrea".into(),
            ..bins
        };
        assert!(bins.verify().unwrap_err().to_string().contains("--cni-bin"));
    }
}
