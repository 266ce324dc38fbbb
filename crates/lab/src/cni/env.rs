//! The environment a runtime passes to a CNI plugin (CNI spec "Parameters"), plus the lab's
//! `ANTREA_CNI_SOCKET`, which tells the plugin where its Node's agent listens.

use std::path::PathBuf;

/// The environment variable naming the agent's CNI socket.
pub const SOCKET_ENV: &str = "ANTREA_CNI_SOCKET";

/// `CNI_COMMAND`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CniCommand {
    /// Attach the container to the network.
    Add,
    /// Detach it.
    Del,
    /// Check it is still attached.
    Check,
}

impl CniCommand {
    /// The value of `CNI_COMMAND`.
    pub fn as_str(self) -> &'static str {
        match self {
            CniCommand::Add => "ADD",
            CniCommand::Del => "DEL",
            CniCommand::Check => "CHECK",
        }
    }
}

/// One plugin execution for one Pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// What to do.
    pub command: CniCommand,
    /// The sandbox's container ID (also `K8S_POD_INFRA_CONTAINER_ID`).
    pub container_id: String,
    /// The Pod's network namespace path (`/var/run/netns/<name>`).
    pub netns: PathBuf,
    /// The interface name inside the Pod.
    pub ifname: String,
    /// Kubernetes namespace of the Pod.
    pub pod_namespace: String,
    /// Kubernetes name of the Pod.
    pub pod_name: String,
    /// `CNI_PATH`: where plugins (and IPAM plugins) are looked up.
    pub cni_path: PathBuf,
    /// The agent's CNI socket.
    pub socket: PathBuf,
}

impl Invocation {
    /// `CNI_ARGS`: `K8S_POD_NAMESPACE=…;K8S_POD_NAME=…;K8S_POD_INFRA_CONTAINER_ID=…`, as kubelet
    /// (through containerd/CRI-O) passes them.
    pub fn cni_args(&self) -> String {
        format!(
            "K8S_POD_NAMESPACE={};K8S_POD_NAME={};K8S_POD_INFRA_CONTAINER_ID={}",
            self.pod_namespace, self.pod_name, self.container_id
        )
    }

    /// The variables to set for the plugin process, in a fixed order.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("CNI_COMMAND", self.command.as_str().to_owned()),
            ("CNI_CONTAINERID", self.container_id.clone()),
            ("CNI_NETNS", self.netns.display().to_string()),
            ("CNI_IFNAME", self.ifname.clone()),
            ("CNI_ARGS", self.cni_args()),
            ("CNI_PATH", self.cni_path.display().to_string()),
            (SOCKET_ENV, self.socket.display().to_string()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add() -> Invocation {
        Invocation {
            command: CniCommand::Add,
            container_id: "antrea-lab-001-002".into(),
            netns: "/var/run/netns/lab-n1-p2".into(),
            ifname: "eth0".into(),
            pod_namespace: "default".into(),
            pod_name: "lab-n1-p2".into(),
            cni_path: "/opt/cni/bin".into(),
            socket: "/run/antrea-lab/lab-n1/cni.sock".into(),
        }
    }

    #[test]
    fn env_holds_every_cni_parameter() {
        let env = add().env();
        let get = |k: &str| env.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("CNI_COMMAND"), Some("ADD"));
        assert_eq!(get("CNI_CONTAINERID"), Some("antrea-lab-001-002"));
        assert_eq!(get("CNI_NETNS"), Some("/var/run/netns/lab-n1-p2"));
        assert_eq!(get("CNI_IFNAME"), Some("eth0"));
        assert_eq!(
            get("CNI_ARGS"),
            Some(
                "K8S_POD_NAMESPACE=default;K8S_POD_NAME=lab-n1-p2;K8S_POD_INFRA_CONTAINER_ID=antrea-lab-001-002"
            )
        );
        assert_eq!(get("CNI_PATH"), Some("/opt/cni/bin"));
        assert_eq!(
            get("ANTREA_CNI_SOCKET"),
            Some("/run/antrea-lab/lab-n1/cni.sock")
        );
        assert_eq!(env.len(), 7);
    }

    #[test]
    fn command_names_are_the_spec_ones() {
        assert_eq!(CniCommand::Add.as_str(), "ADD");
        assert_eq!(CniCommand::Del.as_str(), "DEL");
        assert_eq!(CniCommand::Check.as_str(), "CHECK");
        let del = Invocation {
            command: CniCommand::Del,
            ..add()
        };
        assert_eq!(del.env()[0], ("CNI_COMMAND", "DEL".to_owned()));
    }
}
