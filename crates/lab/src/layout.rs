//! Where the lab keeps its files: one state directory holding the state file, each Node's OVS
//! directories, agent files, the cluster directory, logs and every pidfile. Every process the
//! lab starts names a path under this directory on its command line, which is how `down` and
//! `status` recognise them.

use std::path::{Path, PathBuf};

/// The name of each Node's containerd tree ([`Layout::containerd_dir`]).
pub const CONTAINERD_DIR: &str = "containerd";

/// The default state directory (tmpfs: it goes away on reboot, like the namespaces).
pub const DEFAULT_STATE_DIR: &str = "/run/antrea-lab";

/// The paths under one state directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    root: PathBuf,
}

impl Layout {
    /// The layout rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Layout {
        Layout { root: root.into() }
    }

    /// The state directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The state file (JSON, see [`crate::state::State`]).
    pub fn state_file(&self) -> PathBuf {
        self.root.join("state.json")
    }

    /// A Node's directory.
    pub fn node_dir(&self, node: &str) -> PathBuf {
        self.root.join(node)
    }

    /// A Node's OVS run directory (`db.sock`, `br-int.mgmt`, control sockets, pidfiles): the
    /// agent's `ovsRunDir`.
    pub fn ovs_run_dir(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("run")
    }

    /// A Node's agent API local-access directory (the agent's CA and loopback token for
    /// antctl): the agent's `apiLocalAccessDir`.
    pub fn api_local_access_dir(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("agent-api")
    }

    /// A Node's OVS database directory.
    pub fn ovs_db_dir(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("db")
    }

    /// A Node's log directory (OVS logs, agent log).
    pub fn log_dir(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("log")
    }

    /// A Node's OVS sysconf directory (unused by OVS here, but kept private).
    pub fn ovs_etc_dir(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("etc")
    }

    /// The agent configuration file of a Node.
    pub fn agent_config(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("antrea-agent.conf")
    }

    /// The agent's pidfile (written by the lab).
    pub fn agent_pidfile(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("antrea-agent.pid")
    }

    /// The agent's stdout and stderr.
    pub fn agent_log(&self, node: &str) -> PathBuf {
        self.log_dir(node).join("antrea-agent.log")
    }

    /// The agent's CNI socket; its appearance means the agent is ready.
    pub fn cni_socket(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("cni.sock")
    }

    /// The Node's host-local IPAM store (`ipam.dataDir` of the Node's network configuration).
    pub fn ipam_dir(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("ipam")
    }

    /// A Node's containerd tree (`--runtime containerd`): containerd's own root and state
    /// directories, its socket, the CNI bin and conf directories it reads, and runc's root. The
    /// pidfiles containerd and its shims write in there are theirs, not the lab's.
    pub fn containerd_dir(&self, node: &str) -> PathBuf {
        self.node_dir(node).join(CONTAINERD_DIR)
    }

    /// A Node's containerd configuration (`config.toml`, version 2).
    pub fn containerd_config(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("containerd.toml")
    }

    /// A Node's containerd pidfile (written by the lab).
    pub fn containerd_pidfile(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("containerd.pid")
    }

    /// A Node's containerd log.
    pub fn containerd_log(&self, node: &str) -> PathBuf {
        self.log_dir(node).join("containerd.log")
    }

    /// A Node's containerd gRPC socket, which serves CRI.
    pub fn containerd_socket(&self, node: &str) -> PathBuf {
        self.containerd_dir(node).join("containerd.sock")
    }

    /// The CNI bin directory a Node's containerd looks plugins up in (holds `antrea`).
    pub fn cni_bin_dir(&self, node: &str) -> PathBuf {
        self.containerd_dir(node).join("cni-bin")
    }

    /// The CNI conf directory a Node's containerd reads its conflist from.
    pub fn cni_conf_dir(&self, node: &str) -> PathBuf {
        self.containerd_dir(node).join("cni-conf")
    }

    /// containerd's root (content, snapshots, metadata).
    pub fn containerd_root(&self, node: &str) -> PathBuf {
        self.containerd_dir(node).join("root")
    }

    /// containerd's state directory (sockets, task bundles, the CRI plugin's state).
    pub fn containerd_state(&self, node: &str) -> PathBuf {
        self.containerd_dir(node).join("state")
    }

    /// Where the CRI plugin mounts the Pods' network namespaces
    /// (`netns_mounts_under_state_dir`): its state directory's `netns`.
    pub fn containerd_netns_dir(&self, node: &str) -> PathBuf {
        self.containerd_state(node)
            .join("io.containerd.grpc.v1.cri")
            .join("netns")
    }

    /// runc's root for a Node's containers (the runc shim's `Root` option; runc adds the
    /// containerd namespace, `k8s.io`).
    pub fn runc_root(&self, node: &str) -> PathBuf {
        self.containerd_dir(node).join("runc")
    }

    /// The sandbox ("pause") image the lab builds, an OCI image layout archive.
    pub fn sandbox_image(&self) -> PathBuf {
        self.root.join("sandbox-image.tar")
    }

    /// The cluster directory shared by every agent (Node and Pod objects as YAML).
    pub fn cluster_dir(&self) -> PathBuf {
        self.root.join("cluster")
    }

    /// The fake API server's directory (`--api fake`).
    pub fn api_dir(&self) -> PathBuf {
        self.root.join("api")
    }

    /// The fake API server's Unix socket, through which the lab creates the cluster's objects.
    pub fn api_socket(&self) -> PathBuf {
        self.api_dir().join("apiserver.sock")
    }

    /// The kubeconfig the fake API server writes once it serves (the agents' `--kubeconfig`).
    pub fn api_kubeconfig(&self) -> PathBuf {
        self.api_dir().join("kubeconfig")
    }

    /// The fake API server's pidfile.
    pub fn api_pidfile(&self) -> PathBuf {
        self.api_dir().join("apiserver.pid")
    }

    /// The fake API server's log: one line per request, naming the peer.
    pub fn api_log(&self) -> PathBuf {
        self.api_dir().join("apiserver.log")
    }

    /// antrea-controller's directory (`--controller`).
    pub fn controller_dir(&self) -> PathBuf {
        self.root.join("controller")
    }

    /// antrea-controller's pidfile.
    pub fn controller_pidfile(&self) -> PathBuf {
        self.controller_dir().join("antrea-controller.pid")
    }

    /// antrea-controller's log.
    pub fn controller_log(&self) -> PathBuf {
        self.controller_dir().join("antrea-controller.log")
    }

    /// The token `node`'s agent presents to antrea-controller (bound to its agent Pod).
    pub fn agent_token(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("agent-token")
    }

    /// Where `node`'s agent keeps the last NetworkPolicy view the controller sent it.
    pub fn policy_state_file(&self, node: &str) -> PathBuf {
        self.node_dir(node).join("policy-state.json")
    }

    /// The directory of one `serve` answerer (by namespace name).
    pub fn serve_dir(&self, netns: &str) -> PathBuf {
        self.root.join("serve").join(netns)
    }

    /// The DNS answerer's directory: its records file, pidfile, log and ready file.
    pub fn dns_dir(&self) -> PathBuf {
        self.root.join("dns")
    }

    /// The DNS answerer's records file (`name address` lines).
    pub fn dns_records(&self) -> PathBuf {
        self.dns_dir().join("records")
    }

    /// The iperf3 server's pidfile.
    pub fn iperf_pidfile(&self) -> PathBuf {
        self.root.join("iperf3-server.pid")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_is_under_the_root() {
        let l = Layout::new("/run/x");
        for p in [
            l.state_file(),
            l.ovs_run_dir("lab-n1"),
            l.ovs_db_dir("lab-n1"),
            l.log_dir("lab-n1"),
            l.ovs_etc_dir("lab-n1"),
            l.agent_config("lab-n1"),
            l.agent_pidfile("lab-n1"),
            l.agent_log("lab-n1"),
            l.cni_socket("lab-n1"),
            l.ipam_dir("lab-n1"),
            l.cluster_dir(),
            l.serve_dir("lab-n1-p1"),
            l.api_socket(),
            l.api_kubeconfig(),
            l.api_pidfile(),
            l.api_log(),
            l.controller_pidfile(),
            l.controller_log(),
            l.agent_token("lab-n1"),
            l.policy_state_file("lab-n1"),
            l.iperf_pidfile(),
            l.dns_records(),
            l.containerd_config("lab-n1"),
            l.containerd_pidfile("lab-n1"),
            l.containerd_log("lab-n1"),
            l.containerd_socket("lab-n1"),
            l.cni_bin_dir("lab-n1"),
            l.cni_conf_dir("lab-n1"),
            l.containerd_netns_dir("lab-n1"),
            l.runc_root("lab-n1"),
            l.sandbox_image(),
        ] {
            assert!(p.starts_with("/run/x"), "{}", p.display());
        }
        assert_eq!(l.cni_socket("lab-n2"), Path::new("/run/x/lab-n2/cni.sock"));
        assert_eq!(l.ovs_run_dir("lab-n2"), Path::new("/run/x/lab-n2/run"));
    }
}
