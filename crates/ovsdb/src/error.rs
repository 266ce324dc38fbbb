//! The crate's error type: connection failures, server-reported errors, malformed replies and
//! the Open_vSwitch helpers' own conditions.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use crate::schema::SchemaError;
use crate::txn::OperationError;
use crate::wire::WireError;

/// Why a connection ended.
#[derive(Debug, Clone)]
pub enum DisconnectReason {
    /// The server closed the connection.
    PeerClosed,
    /// Reading or writing failed.
    Io(Arc<io::Error>),
    /// The server sent bytes that are not JSON-RPC.
    Malformed(Arc<WireError>),
    /// The server broke the protocol (unknown response id, malformed notification, ...).
    Protocol(String),
    /// Nothing arrived for two inactivity-probe intervals, not even an echo reply.
    Inactive(Duration),
    /// The client was dropped.
    Shutdown,
}

impl fmt::Display for DisconnectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DisconnectReason::PeerClosed => f.write_str("server closed the connection"),
            DisconnectReason::Io(e) => write!(f, "I/O error: {e}"),
            DisconnectReason::Malformed(e) => write!(f, "malformed data from server: {e}"),
            DisconnectReason::Protocol(e) => write!(f, "protocol violation by server: {e}"),
            DisconnectReason::Inactive(d) => {
                write!(f, "no data from server for {:?} (echo unanswered)", *d * 2)
            }
            DisconnectReason::Shutdown => f.write_str("client shut down"),
        }
    }
}

/// Every failure of the OVSDB client.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The first connection could not be made.
    #[error("cannot connect to OVSDB at {endpoint} after {attempts} attempts: {source}")]
    Connect {
        /// Where.
        endpoint: String,
        /// How many attempts were made.
        attempts: u32,
        /// The last attempt's error.
        source: io::Error,
    },
    /// The client is between connections (reconnecting).
    #[error("not connected to OVSDB at {endpoint} (reconnecting)")]
    NotConnected {
        /// Where.
        endpoint: String,
    },
    /// The connection ended while the request was outstanding.
    #[error("OVSDB connection lost before {method} completed: {reason}")]
    Disconnected {
        /// The request's method.
        method: String,
        /// Why the connection ended.
        reason: DisconnectReason,
    },
    /// The request was cancelled with [`crate::Client::cancel`].
    #[error("OVSDB {method} request {id} was cancelled")]
    Canceled {
        /// The request's method.
        method: String,
        /// The request's id.
        id: u64,
    },
    /// The server answered with a JSON-RPC error.
    #[error("OVSDB {method} failed: {error}{}", details.as_ref().map(|d| format!(": {d}")).unwrap_or_default())]
    Rpc {
        /// The request's method.
        method: String,
        /// The server's `error`.
        error: String,
        /// The server's `details`.
        details: Option<String>,
    },
    /// A transaction failed; carries the failing operation and the server's error and details.
    #[error(transparent)]
    Transaction(#[from] OperationError),
    /// The server's reply does not have the shape the method defines.
    #[error("unexpected OVSDB {method} reply: {reason}")]
    BadReply {
        /// The request's method.
        method: String,
        /// What is wrong.
        reason: String,
    },
    /// The schema returned by `get_schema` cannot be understood.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// A helper gave up waiting.
    #[error("timed out after {after:?} waiting for {what}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// How long.
        after: Duration,
    },
    /// A bridge named in a request does not exist.
    #[error("bridge {0:?} does not exist")]
    BridgeNotFound(String),
    /// An interface named in a request does not exist.
    #[error("interface {0:?} does not exist")]
    InterfaceNotFound(String),
    /// ovs-vswitchd could not realise an interface (ofport -1); `error` is its `error` column.
    #[error("interface {name:?} could not be created: {error}")]
    InterfaceFailed {
        /// Interface name.
        name: String,
        /// The Interface row's `error` column.
        error: String,
    },
}

impl Error {
    pub(crate) fn bad_reply(method: &str, reason: impl Into<String>) -> Error {
        Error::BadReply {
            method: method.to_owned(),
            reason: reason.into(),
        }
    }
}
