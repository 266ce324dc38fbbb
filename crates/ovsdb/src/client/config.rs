//! Connection settings: connect timeouts, reconnect backoff, keepalive, message size limit.

use std::time::Duration;

use crate::wire::DEFAULT_MAX_MESSAGE_SIZE;

/// How the client connects, keeps the connection alive and reconnects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    /// Time allowed for the first connect attempt; doubles per attempt up to
    /// `connect_timeout_max` (Antrea: 2 s → 8 s).
    pub connect_timeout: Duration,
    /// Largest per-attempt connect timeout, also used for every reconnect attempt.
    pub connect_timeout_max: Duration,
    /// Attempts made by [`crate::Client::connect`] before it gives up.
    pub connect_attempts: u32,
    /// Pause between failed attempts, and before each reconnect attempt.
    pub backoff: Duration,
    /// Reconnect (forever, every `backoff`) after the connection is lost.
    pub reconnect: bool,
    /// After this long without receiving anything, send an `echo`; if the next interval also
    /// passes in silence, declare the connection dead. `None` disables the probe.
    pub inactivity_probe: Option<Duration>,
    /// Largest message accepted from the server.
    pub max_message_size: usize,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            connect_timeout: Duration::from_secs(2),
            connect_timeout_max: Duration::from_secs(8),
            connect_attempts: 3,
            backoff: Duration::from_secs(1),
            reconnect: true,
            inactivity_probe: Some(Duration::from_secs(5)),
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
        }
    }
}
