//! The CNI error object (`code`, `msg`, `details`) and the spec's well-known codes.

use serde_json::{Value, json};

use super::CniVersion;

/// Error codes defined by the CNI spec (0–99) and by Antrea (100+).
pub mod code {
    /// Incompatible CNI version.
    pub const INCOMPATIBLE_CNI_VERSION: u32 = 1;
    /// Unsupported field in network configuration.
    pub const UNSUPPORTED_FIELD: u32 = 2;
    /// Container unknown or does not exist.
    pub const UNKNOWN_CONTAINER: u32 = 3;
    /// Invalid necessary environment variables (`CNI_COMMAND`, `CNI_CONTAINERID`, …).
    pub const INVALID_ENVIRONMENT_VARIABLES: u32 = 4;
    /// I/O failure.
    pub const IO_FAILURE: u32 = 5;
    /// Failed to decode content (stdin JSON, prevResult).
    pub const DECODING_FAILURE: u32 = 6;
    /// Invalid network configuration.
    pub const INVALID_NETWORK_CONFIG: u32 = 7;
    /// Try again later: the plugin or agent is transiently unavailable.
    pub const TRY_AGAIN_LATER: u32 = 11;
    /// STATUS: the plugin cannot serve ADD requests.
    pub const PLUGIN_NOT_AVAILABLE: u32 = 50;
    /// Antrea: IPAM failed.
    pub const IPAM_FAILURE: u32 = 101;
    /// Antrea: configuring the interface failed.
    pub const CONFIG_INTERFACE_FAILURE: u32 = 102;
    /// Antrea: CHECK found the interface wrong.
    pub const CHECK_INTERFACE_FAILURE: u32 = 103;
    /// Antrea plugin: the gRPC call failed for another reason.
    pub const UNKNOWN_RPC_ERROR: u32 = 201;
    /// Antrea plugin: the agent does not implement the RPC (API version mismatch).
    pub const INCOMPATIBLE_API_VERSION: u32 = 202;
}

/// A CNI error, printed on stdout by a failing plugin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CNI error {code}: {msg}{}", if details.is_empty() { String::new() } else { format!(" ({details})") })]
pub struct CniError {
    /// One of [`code`] or another plugin-specific number.
    pub code: u32,
    /// A short message.
    pub msg: String,
    /// A longer explanation; omitted from JSON when empty.
    pub details: String,
}

impl CniError {
    /// An error with `code` and `msg` and no details.
    pub fn new(code: u32, msg: impl Into<String>) -> CniError {
        CniError {
            code,
            msg: msg.into(),
            details: String::new(),
        }
    }

    /// Adds details.
    pub fn with_details(mut self, details: impl Into<String>) -> CniError {
        self.details = details.into();
        self
    }

    /// The error object as printed for a configuration of `version`.
    pub fn to_json(&self, version: CniVersion) -> Value {
        let mut v = json!({ "cniVersion": version.as_str(), "code": self.code, "msg": self.msg });
        if !self.details.is_empty() {
            v["details"] = Value::String(self.details.clone());
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_code_msg_and_optional_details() {
        let e = CniError::new(code::TRY_AGAIN_LATER, "busy");
        assert_eq!(
            e.to_json(CniVersion::V0_3_0),
            json!({"cniVersion": "0.3.0", "code": 11, "msg": "busy"})
        );
        let e = e.with_details("agent restarting");
        assert_eq!(e.to_json(CniVersion::V1_1_0)["details"], "agent restarting");
        assert_eq!(e.to_string(), "CNI error 11: busy (agent restarting)");
    }
}
