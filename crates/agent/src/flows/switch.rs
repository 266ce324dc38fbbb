//! What the switch holds: its flows read back over the connection, in the same text form as
//! the cache's, so the two can be compared.

use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use openflow::msg::flow_stats::{FlowDescReply, FlowDescRequest, FlowStats};

use super::Flows;
use crate::error::AgentError;

impl Flows {
    /// Every flow of the switch as `add-flow` text (cookie included, counters left out), sorted.
    pub async fn switch_flows(&self) -> Result<Vec<String>, AgentError> {
        let endpoint = || self.endpoint.clone();
        let replies = self
            .conn
            .multipart(&FlowDescRequest::default())
            .await
            .map_err(|source| AgentError::OpenFlow {
                endpoint: endpoint(),
                source,
            })?;
        let mut texts = Vec::new();
        for reply in replies {
            let reply: FlowDescReply = reply.parse().map_err(|source| AgentError::OpenFlow {
                endpoint: endpoint(),
                source,
            })?;
            texts.extend(reply.flows.iter().map(|f| as_add(f).to_string()));
        }
        texts.sort();
        Ok(texts)
    }

    /// The cache's flows in the form of [`Flows::switch_flows`].
    pub fn desired_flows(&self) -> Vec<String> {
        let cache = self
            .installer
            .cache()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut texts: Vec<String> = cache.all_flows().iter().map(FlowMod::to_string).collect();
        texts.sort();
        texts
    }
}

/// The `add` that would create `flow`.
fn as_add(flow: &FlowStats) -> FlowMod {
    let mut fm = FlowMod::new(FlowModCommand::Add);
    fm.table_id = flow.table_id;
    fm.priority = flow.priority;
    fm.idle_timeout = flow.idle_timeout;
    fm.hard_timeout = flow.hard_timeout;
    fm.flags = flow.flags;
    fm.importance = flow.importance;
    fm.cookie = flow.cookie;
    fm.flow_match = flow.flow_match.clone();
    fm.instructions = flow.instructions.clone();
    fm
}
