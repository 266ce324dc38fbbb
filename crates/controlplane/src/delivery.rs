//! [`Delivery`]: what a watching agent is handed, by whatever transport brought it.

use serde::{Deserialize, Serialize};

use crate::{NodeUpdate, NodeView};

/// One thing an agent receives for its Node: its whole view (when it first connects, or when
/// it cannot resume where it left off), or the updates that follow what it already has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Delivery {
    /// The Node's whole view: it replaces whatever the agent held.
    Snapshot(NodeView),
    /// Updates, in order, to apply to the view the agent holds.
    Updates(Vec<NodeUpdate>),
}
