//! Where the agent's NetworkPolicy comes from (antrea-rs keys; Antrea's agent always gets it
//! from its controller): computed on the Node from every Pod, Namespace and NetworkPolicy
//! (`policyComputation: local`, the default), or received from antrea-controller
//! (`controller`), with how to reach and trust it and where the last view received is kept.

use std::path::PathBuf;

use rustls_pki_types::ServerName;

use super::error::ConfigError;
use super::platform::Platform;

/// How the agent reaches antrea-controller (read with `policyComputation: controller`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerConnection {
    /// `controllerAddresses`: `host:port` of the controller; empty means the ClusterIP and
    /// port of the Service `kube-system/antrea`.
    pub addresses: Vec<String>,
    /// `controllerCAConfigMap` (default `kube-system/antrea-ca`): the ConfigMap whose
    /// `ca.crt` verifies the controller's certificate, as `namespace/name`.
    pub ca_config_map: (String, String),
    /// `controllerServerName` (default `antrea.kube-system.svc`): the name the controller's
    /// certificate must carry.
    pub server_name: String,
    /// `controllerTokenFile`: the ServiceAccount token the agent presents.
    pub token_file: PathBuf,
}

impl ControllerConnection {
    /// The defaults.
    pub fn defaults() -> ControllerConnection {
        ControllerConnection {
            addresses: Vec::new(),
            ca_config_map: ("kube-system".to_owned(), "antrea-ca".to_owned()),
            server_name: "antrea.kube-system.svc".to_owned(),
            token_file: "/var/run/secrets/kubernetes.io/serviceaccount/token".into(),
        }
    }
}

impl Platform {
    /// Where the last NetworkPolicy view received from the controller is kept (beside the
    /// agent's other run-time files).
    pub fn default_policy_state_file(self) -> &'static str {
        match self {
            Platform::Linux => "/var/lib/antrea/policy-state.json",
            Platform::Windows => r"C:\var\lib\antrea\policy-state.json",
        }
    }
}

/// A `controllerAddresses` entry: `host:port`, an IPv6 host in brackets, a port in 1..65535.
pub(super) fn check_address(key: String, text: &str) -> Result<String, ConfigError> {
    let invalid = || ConfigError::InvalidValue {
        key: key.clone(),
        value: format!("{text:?}"),
        allowed: "host:port, such as 10.96.0.10:443 or [fd00::10]:443".to_owned(),
    };
    let (host, port) = text.rsplit_once(':').ok_or_else(invalid)?;
    let host_ok = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
        None => !host.is_empty() && !host.contains(':') && !host.contains('/'),
    };
    let port_ok = port.parse::<u16>().is_ok_and(|p| p != 0);
    if host_ok && port_ok {
        Ok(text.to_owned())
    } else {
        Err(invalid())
    }
}

/// `controllerCAConfigMap`: `namespace/name`.
pub(super) fn parse_config_map(key: &str, text: &str) -> Result<(String, String), ConfigError> {
    match text.split_once('/') {
        Some((namespace, name))
            if !namespace.is_empty() && !name.is_empty() && !name.contains('/') =>
        {
            Ok((namespace.to_owned(), name.to_owned()))
        }
        _ => Err(ConfigError::InvalidValue {
            key: key.to_owned(),
            value: format!("{text:?}"),
            allowed: "namespace/name, such as kube-system/antrea-ca".to_owned(),
        }),
    }
}

/// `controllerServerName`: a DNS name (or an IP address) a certificate can carry.
pub(super) fn check_server_name(key: &str, text: &str) -> Result<String, ConfigError> {
    ServerName::try_from(text)
        .map(|_| text.to_owned())
        .map_err(|_| ConfigError::InvalidValue {
            key: key.to_owned(),
            value: format!("{text:?}"),
            allowed: "a DNS name or IP address, such as antrea.kube-system.svc".to_owned(),
        })
}
