//! The crate's error types: bad model input, flow ownership conflicts in the cache, and failures
//! to apply flows to the switch.

use openflow::conn::ConnError;

/// Malformed input to the model.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    #[error("invalid round number {0:?} in the bridge's external_ids (expected 1..65535)")]
    BadRound(String),
}

/// A desired flow that two owners both claim.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("flow {flow} of {owner} has the same table, priority and match as a flow of {holder}")]
pub struct FlowConflict {
    /// The owner whose update was refused.
    pub owner: String,
    /// The owner that already has the flow.
    pub holder: String,
    /// The conflicting flow, in `ovs-ofctl` syntax.
    pub flow: String,
}

/// Why applying flows failed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Conflict(#[from] FlowConflict),
    #[error("the switch did not apply {what}: {source}")]
    Switch {
        /// What was being applied: `the flows of pod:ns/name`, `all flows of round N`, …
        what: String,
        #[source]
        source: ConnError,
    },
}
