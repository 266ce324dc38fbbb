//! The operating system the agent configures, and the defaults that differ between them.

use std::fmt;

/// The Node's operating system. It is an explicit input to configuration loading so that both
/// platforms' defaults and rules are exercised on every build host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Platform {
    /// Linux Nodes: Unix sockets, `/var/run/...` paths.
    Linux,
    /// Windows Nodes: named pipes, `C:\openvswitch\...` paths.
    Windows,
}

impl Platform {
    /// The platform this binary was built for (Windows for Windows targets, Linux otherwise).
    pub fn current() -> Platform {
        if cfg!(windows) {
            Platform::Windows
        } else {
            Platform::Linux
        }
    }

    /// Antrea's default Open vSwitch run directory.
    pub fn default_ovs_run_dir(self) -> &'static str {
        match self {
            Platform::Linux => "/var/run/openvswitch",
            Platform::Windows => r"C:\openvswitch\var\run\openvswitch",
        }
    }

    /// Where the agent API leaves its CA and loopback token for local clients (antctl).
    pub fn default_api_local_access_dir(self) -> &'static str {
        match self {
            Platform::Linux => "/var/run/antrea/agent-api",
            Platform::Windows => r"C:\var\run\antrea\agent-api",
        }
    }

    /// Antrea's default address of the CNI gRPC server.
    pub fn default_cni_socket(self) -> &'static str {
        match self {
            Platform::Linux => "/var/run/antrea/cni.sock",
            Platform::Windows => r"\\.\pipe\cnisock",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Platform::Linux => "Linux",
            Platform::Windows => "Windows",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_is_the_build_target() {
        let expected = if cfg!(windows) {
            Platform::Windows
        } else {
            Platform::Linux
        };
        assert_eq!(Platform::current(), expected);
        assert_eq!(Platform::Windows.to_string(), "Windows");
    }
}
