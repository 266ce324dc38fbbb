//! Waiting for ovs-vswitchd's datapath to follow a change of the OpenFlow tables. The datapath
//! caches flows (megaflows) and ovs-vswitchd revalidates them against the tables
//! asynchronously, so right after a change is committed a new connection may still take the
//! old path, e.g. to an endpoint just removed.
//!
//! `revalidator/wait` answers when the first revalidation round that ends after the request
//! was read ends, and that round may have begun before the change; so it is asked twice: the
//! second round begins after the first ended, hence after the change, and checks every cached
//! flow against the changed tables. For "after the change" to hold, the first request must be
//! read after ovs-vswitchd woke its revalidators for the change, which it does in the main
//! loop's pass after the one that applied it; one control command answered before the first
//! request is dialled makes sure of it (ovs-vswitchd takes a new control connection only at
//! the start of a pass, after that pass's wake-ups).
//!
//! A round begins when the tables change or at the periodic timer
//! (`other_config:max-revalidator`, 500 ms by default), so a request read just after a round
//! ended would wait for the timer. Each request is therefore followed by a revalidation nudge
//! (`Flows::nudge_revalidation`: a flow modified into itself) sent once the request is written:
//! ovs-vswitchd reads both in the same pass of its main loop at the latest, and bumps its
//! tables' version only in the next pass, so the round the nudge starts ends after the request
//! was read and answers it (docs/services.md, "Revalidation").

use std::time::Duration;

use super::OvsDatapath;

/// How long both rounds may take before the wait is given up (and logged): a hang guard for an
/// ovs-vswitchd that does not answer, not a performance bound.
const REVALIDATION_WAIT: Duration = Duration::from_secs(5);

impl<H> OvsDatapath<H> {
    /// Returns once no datapath flow cached before the change just committed for `what` is
    /// used any more. A failure is logged, not returned: the tables are right, and
    /// ovs-vswitchd's own revalidation brings the datapath to them within a period.
    pub(super) async fn wait_for_revalidation(&self, what: &str) {
        let rounds = async {
            self.vswitchd.call("version", &[]).await?;
            for _ in 0..2 {
                let round = self.vswitchd.start("revalidator/wait", &[]).await?;
                self.flows
                    .nudge_revalidation()
                    .await
                    .map_err(|e| format!("revalidation nudge: {e}"))?;
                round.reply().await?;
            }
            Ok::<(), String>(())
        };
        let failure = match tokio::time::timeout(REVALIDATION_WAIT, rounds).await {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e,
            Err(_) => format!("no revalidation round ended within {REVALIDATION_WAIT:?}"),
        };
        tracing::warn!(
            "{what}: installed, but the datapath's cached flows may still be the old ones for a while: {failure}"
        );
    }
}
