//! The Node's name. It is not part of `antrea-agent.conf`: as in Antrea it comes from the
//! `NODE_NAME` environment variable, else the host name, lower-cased on Windows.

use super::{ConfigError, Platform};

/// The Node name from the value of `NODE_NAME` and the host name, either possibly unknown.
pub fn node_name(
    platform: Platform,
    node_name_env: Option<&str>,
    hostname: Option<&str>,
) -> Result<String, ConfigError> {
    let name = [node_name_env, hostname]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|n| !n.is_empty())
        .ok_or(ConfigError::NodeNameUnknown)?;
    Ok(match platform {
        Platform::Linux => name.to_owned(),
        Platform::Windows => name.to_lowercase(),
    })
}

/// The Node name from this process's environment (`NODE_NAME`, then the host name).
pub fn node_name_from_environment(platform: Platform) -> Result<String, ConfigError> {
    let env = std::env::var("NODE_NAME").ok();
    node_name(platform, env.as_deref(), host_name().as_deref())
}

/// The operating system's host name: the kernel's on Linux, `COMPUTERNAME` on Windows.
fn host_name() -> Option<String> {
    if cfg!(windows) {
        std::env::var("COMPUTERNAME").ok()
    } else {
        std::fs::read_to_string("/proc/sys/kernel/hostname").ok()
    }
}
