//! What the switch holds: its flows, groups and meters read back over the connection, in the
//! same text form as the cache's, so the two can be compared.

use std::fmt;

use openflow::conn::{ConnError, group_dump};
use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use openflow::msg::flow_stats::{FlowDescRequest, FlowStats};

use super::Flows;
use crate::error::AgentError;

/// Flows (`add-flow` text, cookie included, counters left out), groups and meters (normalised),
/// each sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ObjectTexts {
    pub flows: Vec<String>,
    pub groups: Vec<String>,
    pub meters: Vec<String>,
}

impl ObjectTexts {
    fn sorted(mut self) -> ObjectTexts {
        self.flows.sort();
        self.groups.sort();
        self.meters.sort();
        self
    }
}

impl fmt::Display for ObjectTexts {
    /// `12 flows, 1 group(s), 0 meter(s)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} flows, {} group(s), {} meter(s)",
            self.flows.len(),
            self.groups.len(),
            self.meters.len()
        )
    }
}

impl Flows {
    /// Everything the switch holds, in the form of [`Flows::desired_objects`].
    pub(crate) async fn switch_objects(&self) -> Result<ObjectTexts, AgentError> {
        let failed = |source: ConnError| AgentError::OpenFlow {
            endpoint: self.endpoint.clone(),
            source,
        };
        let flows = self
            .conn
            .dump_flows(&FlowDescRequest::default())
            .await
            .map_err(failed)?;
        let wanted: Vec<u32> = self
            .installer
            .cache()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .all_groups()
            .iter()
            .map(|g| g.group_id)
            .collect();
        let bound = group_dump::group_bound(&wanted, &flows);
        let groups = self.conn.dump_groups(bound).await.map_err(failed)?;
        let meters = self.conn.dump_meters().await.map_err(failed)?;
        Ok(ObjectTexts {
            flows: flows.iter().map(|f| as_add(f).to_string()).collect(),
            groups: groups.iter().map(ToString::to_string).collect(),
            meters: meters.iter().map(|m| m.normalized().to_string()).collect(),
        }
        .sorted())
    }

    /// The cache's objects in the form of [`Flows::switch_objects`].
    pub(crate) fn desired_objects(&self) -> ObjectTexts {
        let cache = self
            .installer
            .cache()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        ObjectTexts {
            flows: cache.all_flows().iter().map(FlowMod::to_string).collect(),
            groups: cache.all_groups().iter().map(ToString::to_string).collect(),
            meters: cache.all_meters().iter().map(ToString::to_string).collect(),
        }
        .sorted()
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
