//! [`Hresult`]: the status code of every HCN call, with the names of the codes HNS returns
//! (table from the public `HCNHResult` reference; see docs/hcn.md).

use std::fmt;

/// A Windows HRESULT as the unsigned 32-bit value HNS also writes (in decimal) in the
/// `ErrorCode` of an error record. Failure codes have the top bit set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hresult(pub u32);

impl Hresult {
    /// HCN_E_NETWORK_NOT_FOUND: no network with that ID.
    pub const NETWORK_NOT_FOUND: Hresult = Hresult(0x803B_0001);
    /// HCN_E_ENDPOINT_NOT_FOUND: no endpoint with that ID.
    pub const ENDPOINT_NOT_FOUND: Hresult = Hresult(0x803B_0002);
    /// HCN_E_ADAPTER_NOT_FOUND: the network adapter named in a policy does not exist.
    pub const ADAPTER_NOT_FOUND: Hresult = Hresult(0x803B_0006);
    /// HCN_E_INVALID_NETWORK: bad or missing network parameters.
    pub const INVALID_NETWORK: Hresult = Hresult(0x803B_000A);
    /// HCN_E_INVALID_NETWORK_TYPE: the network `Type` is not valid here.
    pub const INVALID_NETWORK_TYPE: Hresult = Hresult(0x803B_000B);
    /// HCN_E_INVALID_ENDPOINT: bad or missing endpoint parameters.
    pub const INVALID_ENDPOINT: Hresult = Hresult(0x803B_000C);
    /// HCN_E_INVALID_POLICY: a policy's settings are invalid.
    pub const INVALID_POLICY: Hresult = Hresult(0x803B_000D);
    /// HCN_E_NETWORK_ALREADY_EXISTS: a network with this name already exists.
    pub const NETWORK_ALREADY_EXISTS: Hresult = Hresult(0x803B_0010);
    /// HCN_E_ENDPOINT_ALREADY_ATTACHED: the endpoint is already attached to the switch.
    pub const ENDPOINT_ALREADY_ATTACHED: Hresult = Hresult(0x803B_0014);
    /// HCN_E_REQUEST_UNSUPPORTED: the request is not supported.
    pub const REQUEST_UNSUPPORTED: Hresult = Hresult(0x803B_0015);
    /// HCN_E_INVALID_JSON: the JSON document is invalid (including a non-GUID `ID`).
    pub const INVALID_JSON: Hresult = Hresult(0x803B_001B);
    /// HCN_E_INVALID_IP: an IP address is invalid or outside the network's subnets.
    pub const INVALID_IP: Hresult = Hresult(0x803B_001E);
    /// HCN_E_SWITCH_EXTENSION_NOT_FOUND: the switch extension is not installed.
    pub const SWITCH_EXTENSION_NOT_FOUND: Hresult = Hresult(0x803B_001F);
    /// HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS: the endpoint already belongs to a namespace.
    pub const ENDPOINT_NAMESPACE_ALREADY_EXISTS: Hresult = Hresult(0x803B_002B);
    /// HCN_E_ENTITY_HAS_REFERENCES: the object is still referenced (e.g. a network with endpoints).
    pub const ENTITY_HAS_REFERENCES: Hresult = Hresult(0x803B_002C);
    /// HCN_E_ADDR_INVALID_OR_RESERVED: the address is invalid or reserved.
    pub const ADDR_INVALID_OR_RESERVED: Hresult = Hresult(0x803B_002F);
    /// HCN_E_INVALID_PREFIX: an address prefix is invalid.
    pub const INVALID_PREFIX: Hresult = Hresult(0x803B_0030);
    /// HCN_E_ENDPOINT_NOT_ATTACHED: the endpoint is not attached.
    pub const ENDPOINT_NOT_ATTACHED: Hresult = Hresult(0x803B_0034);
    /// HRESULT_FROM_WIN32(ERROR_NOT_FOUND): "Element not found", what `HcnOpen*` returns for a
    /// missing GUID (observed for namespaces).
    pub const ELEMENT_NOT_FOUND: Hresult = Hresult(0x8007_0490);
    /// HRESULT_FROM_WIN32(ERROR_OBJECT_ALREADY_EXISTS): "object already exists", seen when an
    /// endpoint is created twice (kubernetes/kubernetes#74766).
    pub const OBJECT_ALREADY_EXISTS: Hresult = Hresult(0x8007_1392);
    /// E_INVALIDARG: "The parameter is incorrect".
    pub const INVALID_ARG: Hresult = Hresult(0x8007_0057);
    /// E_NOTIMPL: not implemented.
    pub const NOT_IMPLEMENTED: Hresult = Hresult(0x8000_4001);

    /// Whether this is a failure code (top bit set).
    pub fn is_failure(self) -> bool {
        self.0 & 0x8000_0000 != 0
    }

    /// The symbolic name of a code HNS is known to return, e.g. `HCN_E_NETWORK_NOT_FOUND`.
    pub fn name(self) -> Option<&'static str> {
        NAMES
            .iter()
            .find(|(code, _)| *code == self.0)
            .map(|(_, name)| *name)
    }
}

/// Every named code: the constants above plus the other HCN_E_* codes of the public table, so a
/// log line names whatever HNS returned.
const NAMES: &[(u32, &str)] = &[
    (0x803B_0001, "HCN_E_NETWORK_NOT_FOUND"),
    (0x803B_0002, "HCN_E_ENDPOINT_NOT_FOUND"),
    (0x803B_0003, "HCN_E_LAYER_NOT_FOUND"),
    (0x803B_0004, "HCN_E_SWITCH_NOT_FOUND"),
    (0x803B_0005, "HCN_E_SUBNET_NOT_FOUND"),
    (0x803B_0006, "HCN_E_ADAPTER_NOT_FOUND"),
    (0x803B_0007, "HCN_E_PORT_NOT_FOUND"),
    (0x803B_0008, "HCN_E_POLICY_NOT_FOUND"),
    (0x803B_0009, "HCN_E_VFP_PORTSETTING_NOT_FOUND"),
    (0x803B_000A, "HCN_E_INVALID_NETWORK"),
    (0x803B_000B, "HCN_E_INVALID_NETWORK_TYPE"),
    (0x803B_000C, "HCN_E_INVALID_ENDPOINT"),
    (0x803B_000D, "HCN_E_INVALID_POLICY"),
    (0x803B_000E, "HCN_E_INVALID_POLICY_TYPE"),
    (0x803B_000F, "HCN_E_INVALID_REMOTE_ENDPOINT_OPERATION"),
    (0x803B_0010, "HCN_E_NETWORK_ALREADY_EXISTS"),
    (0x803B_0011, "HCN_E_LAYER_ALREADY_EXISTS"),
    (0x803B_0012, "HCN_E_POLICY_ALREADY_EXISTS"),
    (0x803B_0013, "HCN_E_PORT_ALREADY_EXISTS"),
    (0x803B_0014, "HCN_E_ENDPOINT_ALREADY_ATTACHED"),
    (0x803B_0015, "HCN_E_REQUEST_UNSUPPORTED"),
    (0x803B_0016, "HCN_E_MAPPING_NOT_SUPPORTED"),
    (0x803B_0017, "HCN_E_DEGRADED_OPERATION"),
    (0x803B_0018, "HCN_E_SHARED_SWITCH_MODIFICATION"),
    (0x803B_0019, "HCN_E_GUID_CONVERSION_FAILURE"),
    (0x803B_001A, "HCN_E_REGKEY_FAILURE"),
    (0x803B_001B, "HCN_E_INVALID_JSON"),
    (0x803B_001C, "HCN_E_INVALID_JSON_REFERENCE"),
    (0x803B_001D, "HCN_E_ENDPOINT_SHARING_DISABLED"),
    (0x803B_001E, "HCN_E_INVALID_IP"),
    (0x803B_001F, "HCN_E_SWITCH_EXTENSION_NOT_FOUND"),
    (0x803B_0020, "HCN_E_MANAGER_STOPPED"),
    (0x803B_002A, "HCN_E_MODULE_ALREADY_EXISTS"),
    (0x803B_002B, "HCN_E_ENDPOINT_NAMESPACE_ALREADY_EXISTS"),
    (0x803B_002C, "HCN_E_ENTITY_HAS_REFERENCES"),
    (0x803B_002D, "HCN_E_INVALID_INTERNAL_PORT"),
    (0x803B_002E, "HCN_E_NAMESPACE_ATTACH_FAILED"),
    (0x803B_002F, "HCN_E_ADDR_INVALID_OR_RESERVED"),
    (0x803B_0030, "HCN_E_INVALID_PREFIX"),
    (0x803B_0031, "HCN_E_OBJECT_USED_AFTER_UNLOAD"),
    (0x803B_0032, "HCN_E_INVALID_SUBNET"),
    (0x803B_0033, "HCN_E_INVALID_IP_SUBNET"),
    (0x803B_0034, "HCN_E_ENDPOINT_NOT_ATTACHED"),
    (0x803B_0035, "HCN_E_ENDPOINT_NOT_LOCAL"),
    (0x803B_0036, "HCN_INTERFACEPARAMETERS_ALREADY_APPLIED"),
    (0x803B_0037, "HCN_E_VFP_NOT_ALLOWED"),
    (0x8007_0490, "HRESULT_FROM_WIN32(ERROR_NOT_FOUND)"),
    (
        0x8007_1392,
        "HRESULT_FROM_WIN32(ERROR_OBJECT_ALREADY_EXISTS)",
    ),
    (0x8007_0057, "E_INVALIDARG"),
    (0x8000_4001, "E_NOTIMPL"),
];

impl fmt::Display for Hresult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "0x{:08X} ({name})", self.0),
            None => write!(f, "0x{:08X}", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_display() {
        assert_eq!(
            Hresult::NETWORK_NOT_FOUND.to_string(),
            "0x803B0001 (HCN_E_NETWORK_NOT_FOUND)"
        );
        assert_eq!(
            Hresult(0x803B_0013).name(),
            Some("HCN_E_PORT_ALREADY_EXISTS")
        );
        assert_eq!(Hresult(0x8000_FFFF).to_string(), "0x8000FFFF");
        assert!(Hresult::ELEMENT_NOT_FOUND.is_failure() && !Hresult(0).is_failure());
    }
}
