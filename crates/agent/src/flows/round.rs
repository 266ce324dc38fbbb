//! The agent round on start: keep the switch's objects when they already are exactly the
//! desired ones of the recorded round; otherwise install everything under the next round
//! (meters first, then one bundle that replaces same-id groups and same-key flows in place, so
//! existing traffic keeps flowing), delete what is left of the previous round — its flows, then
//! the groups and meters nothing wants — and record the new round on the bridge.

use std::sync::atomic::Ordering;

use hostnet::Outcome;
use pipeline::cookie::ROUND_EXTERNAL_ID;
use pipeline::{Objects, Owner, Round};

use super::Flows;
use crate::error::AgentError;
use crate::ovs::OvsBridge;

/// What [`Flows::start_round`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoundOutcome {
    /// The switch already held exactly the desired objects of this (recorded) round.
    Unchanged(Round),
    /// The objects were installed as `round`; `previous` (if any) was deleted.
    Replaced {
        previous: Option<Round>,
        round: Round,
    },
}

impl Flows {
    /// The round recorded on the bridge, if any.
    pub async fn recorded_round(bridge: &OvsBridge) -> Result<Option<Round>, AgentError> {
        match bridge.external_id(ROUND_EXTERNAL_ID).await? {
            Some(text) => Ok(Some(Round::parse_external_id(&text)?)),
            None => Ok(None),
        }
    }

    /// Brings the switch to `desired` (every owner's objects) and arms the replay on reconnect.
    pub async fn start_round(
        &self,
        recorded: Option<Round>,
        desired: &[(Owner, Objects)],
        bridge: &OvsBridge,
    ) -> Result<RoundOutcome, AgentError> {
        if let Some(round) = recorded {
            self.fill(round, desired)?;
            let switch = self.switch_objects().await?;
            let desired = self.desired_objects();
            if switch == desired {
                self.armed.store(true, Ordering::Release);
                return Ok(RoundOutcome::Unchanged(round));
            }
            tracing::info!(
                "the switch holds {switch}, {desired} desired in {round}: installing a new round"
            );
        }
        let round = match recorded {
            Some(previous) => previous.next(),
            None => Round::FIRST,
        };
        self.fill(round, desired)?;
        let sent = self.installer.install_all().await?;
        self.armed.store(true, Ordering::Release);
        self.mods.fetch_add(sent as u64, Ordering::Relaxed);
        if let Some(previous) = recorded {
            let sent = self.installer.delete_round(previous).await?;
            self.mods.fetch_add(sent as u64, Ordering::Relaxed);
        }
        if bridge
            .set_external_id(ROUND_EXTERNAL_ID, &round.to_external_id())
            .await?
            == Outcome::Changed
        {
            tracing::info!("recorded {round} on bridge {}", bridge.name());
        }
        Ok(RoundOutcome::Replaced {
            previous: recorded,
            round,
        })
    }
}
