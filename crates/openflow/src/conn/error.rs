//! The connection's error type: transport and framing failures, handshake failures, and the
//! switch's `OFPT_ERROR` replies routed back to the request (or batch, or bundle) they answer.

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use crate::conn::frame::{FrameError, ReadError};
use crate::msg::error::ErrorMsg;
use crate::msg::hello::NegotiationError;
use crate::{DecodeError, EncodeError};

/// A message of a batch or bundle that the switch rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// Position of the message in the batch or bundle.
    pub index: usize,
    /// The xid the message was sent with.
    pub xid: u32,
    pub error: ErrorMsg,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "message #{} (xid {:#x}): {}",
            self.index, self.xid, self.error.kind
        )
    }
}

fn list(rejections: &[Rejection]) -> String {
    rejections
        .iter()
        .map(Rejection::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Why a connection or a request failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConnError {
    #[error("cannot connect to {endpoint}: {source}")]
    Connect {
        endpoint: String,
        source: Arc<io::Error>,
    },
    #[error("I/O error on the OpenFlow connection: {0}")]
    Io(Arc<io::Error>),
    #[error("bad framing from the switch: {0}")]
    Frame(#[from] FrameError),
    #[error("undecodable message from the switch: {0}")]
    Decode(#[from] DecodeError),
    /// A message to send cannot be encoded (too long); nothing was sent.
    #[error("cannot send: {0}")]
    Encode(#[from] EncodeError),
    #[error(transparent)]
    Negotiation(#[from] NegotiationError),
    #[error("handshake failed: expected {expected}, got message type {got}")]
    Handshake { expected: &'static str, got: u8 },
    #[error("the switch sent nothing for {0:?}; connection declared dead")]
    Inactive(Duration),
    #[error("the switch closed the connection")]
    Closed,
    /// The connection dropped (for the reason inside) before the reply arrived.
    #[error("disconnected before the reply arrived: {0}")]
    Disconnected(Arc<ConnError>),
    /// The request waited this long for the connection to be re-established; nothing was sent.
    #[error("not connected: the switch has been unreachable for {0:?}; nothing was sent")]
    NotConnected(Duration),
    /// The switch answered the request with `OFPT_ERROR`.
    #[error("the switch rejected the request: {0}")]
    Rejected(ErrorMsg),
    /// The switch rejected these messages of a batch; the others were applied.
    #[error("the switch rejected {n} message(s) of the batch: {list}", n = .0.len(), list = list(.0))]
    BatchRejected(Vec<Rejection>),
    /// The bundle was not applied: nothing of it changed the switch.
    #[error("bundle not applied: {}{}", list(.rejections), .control.as_ref().map(|e| format!(" (bundle control: {e})")).unwrap_or_default())]
    BundleRejected {
        /// The bundled messages the switch rejected.
        rejections: Vec<Rejection>,
        /// The error on the bundle control message (open or commit), if any.
        control: Option<ErrorMsg>,
    },
    #[error("expected {expected} in reply, got message type {got}")]
    UnexpectedReply { expected: &'static str, got: u8 },
    #[error("the on-connect hook failed: {0}")]
    Hook(Arc<ConnError>),
    #[error("the connection was shut down")]
    Shutdown,
}

impl ConnError {
    /// The OpenFlow names of every switch error this error carries (`["OFPBAC_BAD_OUT_PORT"]`),
    /// with `"unknown"` for errors without a known name.
    pub fn error_names(&self) -> Vec<&'static str> {
        let name = |e: &ErrorMsg| e.name().unwrap_or("unknown");
        match self {
            ConnError::Rejected(e) => vec![name(e)],
            ConnError::BatchRejected(r) => r.iter().map(|r| name(&r.error)).collect(),
            ConnError::BundleRejected {
                rejections,
                control,
            } => rejections
                .iter()
                .map(|r| name(&r.error))
                .chain(control.iter().map(name))
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl From<io::Error> for ConnError {
    fn from(e: io::Error) -> ConnError {
        ConnError::Io(Arc::new(e))
    }
}

impl From<ReadError> for ConnError {
    fn from(e: ReadError) -> ConnError {
        match e {
            ReadError::Frame(f) => ConnError::Frame(f),
            ReadError::Io(io) => io.into(),
        }
    }
}
