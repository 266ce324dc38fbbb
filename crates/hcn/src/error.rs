//! [`HcnError`]: every way an HCN call fails, and [`Operation`], the call that failed.

use std::fmt;

use crate::Hresult;
use crate::schema::ErrorRecord;

/// Result of an HCN call.
pub type Result<T, E = HcnError> = std::result::Result<T, E>;

/// An HCN call, named after the `computenetwork.dll` export it stands for. Errors and the fake's
/// call log and failure injection use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// `HcnCreateNetwork`.
    CreateNetwork,
    /// `HcnOpenNetwork` + `HcnQueryNetworkProperties`.
    QueryNetwork,
    /// `HcnEnumerateNetworks`.
    EnumerateNetworks,
    /// `HcnDeleteNetwork`.
    DeleteNetwork,
    /// `HcnOpenNetwork` + `HcnModifyNetwork`.
    ModifyNetwork,
    /// `HcnCreateEndpoint`.
    CreateEndpoint,
    /// `HcnOpenEndpoint` + `HcnQueryEndpointProperties`.
    QueryEndpoint,
    /// `HcnEnumerateEndpoints`.
    EnumerateEndpoints,
    /// `HcnDeleteEndpoint`.
    DeleteEndpoint,
    /// `HcnCreateNamespace`.
    CreateNamespace,
    /// `HcnOpenNamespace` + `HcnQueryNamespaceProperties`.
    QueryNamespace,
    /// `HcnEnumerateNamespaces`.
    EnumerateNamespaces,
    /// `HcnDeleteNamespace`.
    DeleteNamespace,
    /// `HcnOpenNamespace` + `HcnModifyNamespace`.
    ModifyNamespace,
}

impl Operation {
    /// The `computenetwork.dll` export that does the work of this operation.
    pub fn export(self) -> &'static str {
        match self {
            Operation::CreateNetwork => "HcnCreateNetwork",
            Operation::QueryNetwork => "HcnQueryNetworkProperties",
            Operation::EnumerateNetworks => "HcnEnumerateNetworks",
            Operation::DeleteNetwork => "HcnDeleteNetwork",
            Operation::ModifyNetwork => "HcnModifyNetwork",
            Operation::CreateEndpoint => "HcnCreateEndpoint",
            Operation::QueryEndpoint => "HcnQueryEndpointProperties",
            Operation::EnumerateEndpoints => "HcnEnumerateEndpoints",
            Operation::DeleteEndpoint => "HcnDeleteEndpoint",
            Operation::CreateNamespace => "HcnCreateNamespace",
            Operation::QueryNamespace => "HcnQueryNamespaceProperties",
            Operation::EnumerateNamespaces => "HcnEnumerateNamespaces",
            Operation::DeleteNamespace => "HcnDeleteNamespace",
            Operation::ModifyNamespace => "HcnModifyNamespace",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.export())
    }
}

/// Why an HCN call failed.
#[derive(Debug, thiserror::Error)]
pub enum HcnError {
    /// The host has no usable HCN API (no `computenetwork.dll`, or an export missing: Windows
    /// older than 1809/Server 2019, or Wine). Returned once, by the client's constructor.
    #[error("the Host Compute Network API is unavailable: {dll}: {reason}")]
    Unavailable {
        /// The DLL that was looked for.
        dll: &'static str,
        /// What was missing, with the loader's error.
        reason: String,
    },
    /// HNS refused the call.
    #[error("{operation} {subject}: {hresult}{}", record_suffix(.record))]
    Hns {
        /// The call.
        operation: Operation,
        /// What it was about: a name or an ID.
        subject: String,
        /// The failure code (from the call's HRESULT, or the record's `ErrorCode` when the call
        /// returned S_OK with a record).
        hresult: Hresult,
        /// The error record HNS wrote, when it wrote one.
        record: Option<ErrorRecord>,
    },
    /// A document could not be encoded as JSON to send (the schema types always encode; this
    /// reports rather than hides a bug).
    #[error("{operation} {subject}: cannot encode the request document: {source}")]
    Encode {
        /// The call.
        operation: Operation,
        /// What it was about.
        subject: String,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// A document HNS returned could not be read.
    #[error("{operation} {subject}: unreadable HNS document ({source}): {document}")]
    Decode {
        /// The call.
        operation: Operation,
        /// What it was about.
        subject: String,
        /// The text HNS returned.
        document: String,
        /// The JSON error.
        source: serde_json::Error,
    },
}

fn record_suffix(record: &Option<ErrorRecord>) -> String {
    match record {
        Some(r) if !r.message().is_empty() => format!(": {}", r.message()),
        _ => String::new(),
    }
}

impl HcnError {
    /// The failure code when HNS refused the call.
    pub fn hresult(&self) -> Option<Hresult> {
        match self {
            HcnError::Hns { hresult, .. } => Some(*hresult),
            _ => None,
        }
    }

    /// Whether HNS said the object does not exist: `HCN_E_NETWORK_NOT_FOUND`,
    /// `HCN_E_ENDPOINT_NOT_FOUND`, or "Element not found" (0x80070490, what `HcnOpen*` returns).
    pub fn is_not_found(&self) -> bool {
        matches!(
            self.hresult(),
            Some(
                Hresult::NETWORK_NOT_FOUND
                    | Hresult::ENDPOINT_NOT_FOUND
                    | Hresult::ELEMENT_NOT_FOUND
            )
        )
    }

    /// Whether HNS said the object already exists: `HCN_E_NETWORK_ALREADY_EXISTS` or
    /// HRESULT_FROM_WIN32(ERROR_OBJECT_ALREADY_EXISTS).
    pub fn is_already_exists(&self) -> bool {
        matches!(
            self.hresult(),
            Some(Hresult::NETWORK_ALREADY_EXISTS | Hresult::OBJECT_ALREADY_EXISTS)
        )
    }
}
