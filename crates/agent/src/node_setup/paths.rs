//! Where Antrea's Windows install keeps things, as Windows path text: the Open vSwitch install
//! directory (`C:\openvswitch`: `usr\sbin` programs, `etc\openvswitch\conf.db`, the schema in
//! `usr\share\openvswitch`, logs in `var\log\openvswitch`), the CNI configuration
//! (`C:\etc\cni\net.d\10-antrea.conflist`) and the plugin (`C:\opt\cni\bin\antrea.exe`).
//! Service command lines name these paths, and [`super::HostFiles`] maps them to the disk.

/// The paths of one Node's install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodePaths {
    /// The Open vSwitch install directory.
    pub ovs_dir: String,
    /// The CNI configuration directory.
    pub cni_conf_dir: String,
    /// The CNI plugin directory.
    pub cni_bin_dir: String,
}

impl Default for NodePaths {
    fn default() -> Self {
        NodePaths {
            ovs_dir: r"C:\openvswitch".to_owned(),
            cni_conf_dir: r"C:\etc\cni\net.d".to_owned(),
            cni_bin_dir: r"C:\opt\cni\bin".to_owned(),
        }
    }
}

/// `base` and `parts` joined with backslashes.
fn join(base: &str, parts: &[&str]) -> String {
    let mut path = base.trim_end_matches('\\').to_owned();
    for part in parts {
        path.push('\\');
        path.push_str(part);
    }
    path
}

impl NodePaths {
    /// An Open vSwitch program (`ovsdb-server`, `ovs-vswitchd`).
    pub fn ovs_program(&self, name: &str) -> String {
        join(&self.ovs_dir, &["usr", "sbin", &format!("{name}.exe")])
    }

    /// The OVS database.
    pub fn ovs_db(&self) -> String {
        join(&self.ovs_dir, &["etc", "openvswitch", "conf.db"])
    }

    /// The OVS database schema shipped with OVS.
    pub fn ovs_schema(&self) -> String {
        join(
            &self.ovs_dir,
            &["usr", "share", "openvswitch", "vswitch.ovsschema"],
        )
    }

    /// The OVS run directory (pid files, `db.sock`, the bridges' management sockets).
    pub fn ovs_run_dir(&self) -> String {
        join(&self.ovs_dir, &["var", "run", "openvswitch"])
    }

    /// The OVS log directory.
    pub fn ovs_log_dir(&self) -> String {
        join(&self.ovs_dir, &["var", "log", "openvswitch"])
    }

    /// An Open vSwitch program's log file.
    pub fn ovs_log(&self, name: &str) -> String {
        join(&self.ovs_log_dir(), &[&format!("{name}.log")])
    }

    /// Antrea's CNI configuration list.
    pub fn conflist(&self) -> String {
        join(&self.cni_conf_dir, &["10-antrea.conflist"])
    }

    /// The installed CNI plugin.
    pub fn cni_plugin(&self) -> String {
        join(&self.cni_bin_dir, &["antrea.exe"])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn antreas_default_paths() {
        let paths = NodePaths::default();
        assert_eq!(
            paths.ovs_program("ovsdb-server"),
            r"C:\openvswitch\usr\sbin\ovsdb-server.exe"
        );
        assert_eq!(paths.ovs_db(), r"C:\openvswitch\etc\openvswitch\conf.db");
        assert_eq!(
            paths.ovs_schema(),
            r"C:\openvswitch\usr\share\openvswitch\vswitch.ovsschema"
        );
        assert_eq!(
            paths.ovs_log("ovs-vswitchd"),
            r"C:\openvswitch\var\log\openvswitch\ovs-vswitchd.log"
        );
        assert_eq!(paths.ovs_run_dir(), r"C:\openvswitch\var\run\openvswitch");
        assert_eq!(paths.ovs_log_dir(), r"C:\openvswitch\var\log\openvswitch");
        assert_eq!(paths.conflist(), r"C:\etc\cni\net.d\10-antrea.conflist");
        assert_eq!(paths.cni_plugin(), r"C:\opt\cni\bin\antrea.exe");
        let trailing = NodePaths {
            ovs_dir: r"D:\ovs\".to_owned(),
            ..NodePaths::default()
        };
        assert_eq!(trailing.ovs_db(), r"D:\ovs\etc\openvswitch\conf.db");
    }
}
