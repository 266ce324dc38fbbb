//! NetworkPolicy on the OVS datapath: the rules rendered as conjunctive flows (owner
//! `networkpolicy`, one bundle per change), and each rule's flows and counters read back for
//! reports and metrics. The renderer keeps the owner's flows between changes: a delta renders
//! only the rules it names, its patch (the flows that changed) goes to the cache as a patch of
//! the owner, costing the size of the patch, and a refused install is undone in the renderer,
//! so it always matches the cache and the switch.

use std::collections::BTreeMap;

use netpol::{PolicyDelta, RuleId, Snapshot};
use openflow::msg::flow_mod::FlowMod;
use openflow::msg::flow_stats::FlowDescRequest;
use pipeline::cache::FlowKey;
use pipeline::owners::NETWORK_POLICY;
use pipeline::render::PolicyRenderer;
use pipeline::{Change, Owner, Patch};

use super::OvsDatapath;
use crate::datapath::{PolicyChanges, RuleEnforcement};
use crate::error::AgentError;

/// The renderer: each rule's conjunction id and the owner's flows as last installed.
#[derive(Debug, Default)]
pub(super) struct PolicyState {
    renderer: PolicyRenderer,
}

impl PolicyState {
    /// Renders `policy` whole, as the state later deltas change; returns the owner's flows.
    pub(super) fn render(&mut self, policy: &Snapshot) -> Vec<FlowMod> {
        self.renderer.render(policy).flows
    }
}

impl<H> OvsDatapath<H> {
    pub(super) async fn install_policy(
        &self,
        delta: &PolicyDelta,
    ) -> Result<PolicyChanges, AgentError> {
        let mut state = self.policy.lock().await;
        let update = state.renderer.update(delta);
        let mut changes = PolicyChanges {
            rules: state.renderer.rules(),
            rendered: update.rules_rendered,
            changed: 0,
        };
        if update.patch.is_empty() {
            return Ok(changes);
        }
        let patch = Patch {
            upsert: update.patch.upsert.into(),
            remove_flows: update.patch.remove,
            ..Patch::default()
        };
        let change = Change::new().patch(Owner::from(NETWORK_POLICY), patch);
        match self.flows.apply(change).await {
            Ok(diff) => {
                changes.changed = diff.len();
                Ok(changes)
            }
            Err(error) => {
                state.renderer.undo(update.undo);
                Err(error)
            }
        }
    }

    pub(super) async fn enforcement(
        &self,
    ) -> Result<BTreeMap<RuleId, RuleEnforcement>, AgentError> {
        let stats = self
            .flows
            .connection()
            .dump_flows(&FlowDescRequest::default())
            .await
            .map_err(|source| AgentError::OpenFlow {
                endpoint: self.bridge.name().to_owned(),
                source,
            })?;
        let rendered = self.policy.lock().await.renderer.flows();
        let counters = rendered.counters(&stats);
        // Each flow's key and text once, for every rule's lookup of the flows behind it.
        let texts: Vec<(FlowKey, String)> = rendered
            .flows
            .iter()
            .map(|flow| (FlowKey::of(flow), flow.to_string()))
            .collect();
        Ok(rendered
            .rules
            .iter()
            .map(|(id, rule)| {
                let counted = counters.get(id).copied().unwrap_or_default();
                let enforcement = RuleEnforcement {
                    conj_id: rule.conj_id,
                    entries: rule.flows,
                    entries_expanded: rule.without_conjunction,
                    texts: flows_behind(&texts, rule.conj_id, &rule.counted),
                    packets: counted.packets,
                    bytes: counted.bytes,
                };
                (id.clone(), enforcement)
            })
            .collect())
    }
}

/// The flows carrying a rule (of `flows`, each with its key and text): its counted flows and,
/// for a conjunctive rule, every flow that adds to or acts on its conjunction.
fn flows_behind(flows: &[(FlowKey, String)], conj_id: u32, counted: &[FlowKey]) -> Vec<String> {
    let conjunction = format!("conjunction({conj_id},");
    let conj_match = format!("conj_id={conj_id},");
    flows
        .iter()
        .filter(|(key, text)| {
            counted.contains(key)
                || (conj_id != 0 && (text.contains(&conjunction) || text.contains(&conj_match)))
        })
        .map(|(_, text)| text.clone())
        .collect()
}
