//! The files a Node's containerd reads: its `config.toml` (version 2: private root, state,
//! socket and plugin directories; the CRI plugin with the lab's sandbox image, the Node's CNI
//! bin and conf directories, Pod network namespaces under its state directory, sandbox
//! `oom_score_adj` kept at or above containerd's own (root here lacks `CAP_SYS_RESOURCE`:
//! runc failed with `failed to update /proc/self/oom_score_adj: Permission denied` for the
//! -998 kubelet's sandboxes get), runc with its root in the Node's tree) and the CNI conflist naming the `antrea` plugin.

use std::path::Path;

use serde_json::json;

use super::image::SANDBOX_IMAGE;
use crate::cni::netconf::CNI_VERSION;
use crate::layout::Layout;

/// The conflist's file name in the CNI conf directory.
pub const CONFLIST: &str = "10-antrea.conflist";

/// Plugins a lab Node's containerd does not need; some would make directories outside the
/// Node's tree, or probe file systems.
const DISABLED_PLUGINS: [&str; 6] = [
    "io.containerd.snapshotter.v1.aufs",
    "io.containerd.snapshotter.v1.btrfs",
    "io.containerd.snapshotter.v1.devmapper",
    "io.containerd.snapshotter.v1.zfs",
    "io.containerd.internal.v1.tracing",
    "io.containerd.tracing.processor.v1.otlp",
];

/// A TOML basic string (JSON's escapes are TOML's for every character a path holds).
fn toml_string(path: &Path) -> String {
    serde_json::to_string(&path.display().to_string()).unwrap_or_default()
}

/// `config.toml` for `node`'s containerd.
pub fn containerd_toml(layout: &Layout, node: &str) -> String {
    let cri = r#"plugins."io.containerd.grpc.v1.cri""#;
    let disabled: Vec<String> = DISABLED_PLUGINS.iter().map(|p| format!("{p:?}")).collect();
    format!(
        "# Written by antrea-lab up for one lab Node.\n\
         version = 2\n\
         root = {root}\n\
         state = {state}\n\
         disabled_plugins = [{disabled}]\n\
         \n\
         [grpc]\n  address = {socket}\n\
         [ttrpc]\n  address = {ttrpc}\n\
         \n\
         [plugins.\"io.containerd.internal.v1.opt\"]\n  path = {opt}\n\
         \n\
         [{cri}]\n\
         \x20 sandbox_image = \"{SANDBOX_IMAGE}\"\n\
         \x20 netns_mounts_under_state_dir = true\n\
         \x20 disable_tcp_service = true\n\
         \x20 restrict_oom_score_adj = true\n\
         \x20 stream_server_address = \"127.0.0.1\"\n\
         \x20 [{cri}.cni]\n\
         \x20   bin_dir = {bin_dir}\n\
         \x20   conf_dir = {conf_dir}\n\
         \x20   max_conf_num = 1\n\
         \x20 [{cri}.containerd]\n\
         \x20   snapshotter = \"overlayfs\"\n\
         \x20   default_runtime_name = \"runc\"\n\
         \x20   [{cri}.containerd.runtimes.runc]\n\
         \x20     runtime_type = \"io.containerd.runc.v2\"\n\
         \x20     [{cri}.containerd.runtimes.runc.options]\n\
         \x20       Root = {runc_root}\n",
        root = toml_string(&layout.containerd_root(node)),
        state = toml_string(&layout.containerd_state(node)),
        disabled = disabled.join(", "),
        socket = toml_string(&layout.containerd_socket(node)),
        ttrpc = toml_string(&layout.containerd_socket(node).with_extension("sock.ttrpc")),
        opt = toml_string(&layout.containerd_dir(node).join("opt")),
        bin_dir = toml_string(&layout.cni_bin_dir(node)),
        conf_dir = toml_string(&layout.cni_conf_dir(node)),
        runc_root = toml_string(&layout.runc_root(node)),
    )
}

/// The conflist for `node`: Antrea's `antrea` plugin (host-local IPAM in the Node's own store,
/// the `dns` capability as Antrea's conflist declares it). The lab's Nodes have no `portmap` or
/// `bandwidth` plugin, so the list holds only `antrea`.
pub fn conflist(ipam_data_dir: &Path) -> String {
    json!({
        "cniVersion": CNI_VERSION,
        "name": "antrea",
        "plugins": [{
            "type": "antrea",
            "ipam": {"type": "host-local", "dataDir": ipam_data_dir.display().to_string()},
            "capabilities": {"dns": true},
        }],
    })
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containerd_config_keeps_everything_in_the_nodes_tree() {
        let layout = Layout::new("/run/antrea-lab");
        let text = containerd_toml(&layout, "lab-n1");
        for line in [
            "version = 2",
            r#"root = "/run/antrea-lab/lab-n1/containerd/root""#,
            r#"state = "/run/antrea-lab/lab-n1/containerd/state""#,
            r#"address = "/run/antrea-lab/lab-n1/containerd/containerd.sock""#,
            r#"address = "/run/antrea-lab/lab-n1/containerd/containerd.sock.ttrpc""#,
            r#"path = "/run/antrea-lab/lab-n1/containerd/opt""#,
            r#"sandbox_image = "localhost/antrea-lab/pause:1""#,
            "netns_mounts_under_state_dir = true",
            "restrict_oom_score_adj = true",
            r#"bin_dir = "/run/antrea-lab/lab-n1/containerd/cni-bin""#,
            r#"conf_dir = "/run/antrea-lab/lab-n1/containerd/cni-conf""#,
            r#"runtime_type = "io.containerd.runc.v2""#,
            r#"Root = "/run/antrea-lab/lab-n1/containerd/runc""#,
        ] {
            assert!(text.lines().any(|l| l.trim() == line), "{line} in\n{text}");
        }
        assert!(text.contains(r#"disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "#));
        assert!(text.contains("[plugins.\"io.containerd.grpc.v1.cri\".cni]"));
        assert!(toml_string(Path::new("/a \"b\"")) == r#""/a \"b\"""#);
    }

    #[test]
    fn conflist_names_the_antrea_plugin_and_the_nodes_ipam_store() {
        let v: serde_json::Value =
            serde_json::from_str(&conflist(Path::new("/run/antrea-lab/lab-n2/ipam"))).unwrap();
        assert_eq!(
            v,
            json!({"cniVersion": "1.0.0", "name": "antrea", "plugins": [{"type": "antrea",
                "ipam": {"type": "host-local", "dataDir": "/run/antrea-lab/lab-n2/ipam"},
                "capabilities": {"dns": true}}]})
        );
    }
}
