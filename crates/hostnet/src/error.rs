//! The crate's error type: what failed, on which object, and the OS's reason.

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a host networking operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No interface matched the transport selector.
    #[error("cannot find {selector}; interfaces present: {available}")]
    TransportInterfaceNotFound {
        /// What was searched for.
        selector: String,
        /// Every interface with its IPv4 addresses.
        available: String,
    },
    /// A named interface does not exist.
    #[error("interface {name:?} not found ({purpose})")]
    InterfaceNotFound {
        /// The name.
        name: String,
        /// What it was needed for.
        purpose: &'static str,
    },
    /// The transport configuration already lives on the bridge, but no NIC is marked as its uplink.
    #[error("the Node's configuration is on {bridge:?} but no interface is marked as its uplink")]
    UplinkUnknown {
        /// The bridge's LOCAL interface.
        bridge: String,
    },
    /// An OS call failed.
    #[error("{op}: {source}")]
    Os {
        /// The operation, with the objects involved.
        op: String,
        /// The OS's error.
        #[source]
        source: std::io::Error,
    },
    /// A route we would add collides with a route we do not own.
    #[error("a route to {destination} that antrea does not own already exists")]
    RouteConflict {
        /// The destination.
        destination: String,
    },
    /// The `nft` command failed.
    #[error("nft {op}: {detail}")]
    Nft {
        /// What was being done.
        op: String,
        /// The command's diagnostics.
        detail: String,
    },
    /// Taking the uplink over failed; the NIC's configuration was put back (or not, see `rollback`).
    #[error("taking over uplink {nic:?} failed: {source}; rollback: {rollback}")]
    TakeoverFailed {
        /// The NIC.
        nic: String,
        /// What went wrong.
        #[source]
        source: Box<Error>,
        /// Result of putting the NIC's configuration back.
        rollback: String,
    },
    /// A Pod interface check found a difference.
    #[error("pod interface check failed for {interface:?}: {what} is {found}, expected {expected}")]
    CheckFailed {
        /// The interface checked.
        interface: String,
        /// What differs.
        what: &'static str,
        /// The expected value.
        expected: String,
        /// What was found.
        found: String,
    },
    /// An argument that cannot be applied.
    #[error("invalid {what} {value:?}: {reason}")]
    Invalid {
        /// Which argument.
        what: &'static str,
        /// Its value.
        value: String,
        /// Why.
        reason: &'static str,
    },
    /// An HNS (Host Compute Network) call failed.
    #[error("{op}: {source}")]
    Hns {
        /// The operation, with the objects involved.
        op: String,
        /// HNS's error (its HRESULT and error record).
        #[source]
        source: hcn::HcnError,
    },
    /// A Windows OS call (IP Helper, NetNat, firewall) failed.
    #[error("{op}: {source}")]
    WinOs {
        /// The operation, with the objects involved.
        op: String,
        /// The OS's error.
        #[source]
        source: winos::WinOsError,
    },
    /// The NIC chosen as uplink is a virtual adapter.
    #[error(
        "uplink {nic:?} is not a physical adapter ({description}): a Transparent HNS network needs a physical NIC; a virtual one usually means the NIC already belongs to another Hyper-V switch"
    )]
    VirtualUplink {
        /// The adapter's name.
        nic: String,
        /// Its driver description.
        description: String,
    },
    /// The HNS network the operation needs does not exist.
    #[error("HNS network {name:?} does not exist ({purpose})")]
    HnsNetworkMissing {
        /// The network's name.
        name: String,
        /// What it was needed for.
        purpose: &'static str,
    },
    /// Something the operation waits for did not happen in time.
    #[error("{op}: not done within {waited:?}")]
    Timeout {
        /// What was waited for.
        op: String,
        /// How long.
        waited: std::time::Duration,
    },
}

impl Error {
    /// An [`Error::Os`] for `op`.
    pub fn os(op: impl Into<String>, source: impl Into<std::io::Error>) -> Error {
        Error::Os {
            op: op.into(),
            source: source.into(),
        }
    }
}
