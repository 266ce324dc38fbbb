//! The rollback watchdog: after the NIC takeover, [`Watchdog::watch`] checks that the Node can
//! still reach its default gateway or the API server, and rolls the takeover back when it
//! can reach neither for a whole window.
//!
//! The rule, exactly: probe rounds start at 0, `interval`, 2·`interval`, … after the watch
//! starts, for as long as a round's start is within `window`. A round probes both targets at
//! once, each given `probe_timeout`. The first round in which either target answers confirms
//! the takeover and ends the watch. When every round of the window went unanswered by both
//! targets, that is `floor(window / interval) + 1` lost rounds in a row, the watchdog calls
//! [`TakeoverRollback::rollback`] once, logs it at error level, and reports it. A `stop`
//! signal ends the watch without a rollback, but never interrupts a rollback under way.
//!
//! Probes: [`TcpProbe`] on every platform (the API server; the gateway with
//! [`TcpAnswer::AcceptedOrRefused`]), `IcmpEchoProbe` on Windows (the gateway), and
//! `ScriptedProbe` for tests (cargo feature `fake`).

#[cfg(windows)]
mod icmp;
mod probe;
#[cfg(feature = "fake")]
mod scripted;

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

#[cfg(windows)]
pub use icmp::IcmpEchoProbe;
pub use probe::{ProbeError, Reachability, TcpAnswer, TcpProbe};
#[cfg(feature = "fake")]
pub use scripted::ScriptedProbe;

use crate::windows::CallbackError;

/// Puts the Node's configuration back on its NIC, undoing the takeover.
pub trait TakeoverRollback: Send + Sync {
    /// The caller's error.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Undoes the takeover. Called at most once per watch.
    fn rollback(&self) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

/// Settings of the watchdog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchdogConfig {
    /// How long both targets must stay unreachable for a rollback.
    pub window: Duration,
    /// Time between the starts of two probe rounds.
    pub interval: Duration,
    /// How long one probe may wait for an answer.
    pub probe_timeout: Duration,
}

impl Default for WatchdogConfig {
    /// 30 s window, a round every 3 s, 2 s per probe: 11 rounds.
    fn default() -> Self {
        WatchdogConfig {
            window: Duration::from_secs(30),
            interval: Duration::from_secs(3),
            probe_timeout: Duration::from_secs(2),
        }
    }
}

/// Which of the two targets answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The default gateway.
    Gateway,
    /// The API server.
    ApiServer,
}

/// How a watch ended.
#[derive(Debug)]
pub enum WatchdogVerdict {
    /// A target answered: the takeover stays.
    Confirmed {
        /// The target that answered (the gateway when both did).
        target: Target,
        /// The round it answered in (1 for the first).
        round: u32,
        /// Time from the start of the watch to the start of that round.
        after: Duration,
    },
    /// Neither target answered in any round of the window; the rollback ran and returned this.
    RolledBack {
        /// The rounds lost.
        rounds: u32,
        /// The rollback's result.
        result: Result<(), CallbackError>,
    },
    /// `stop` came first; nothing was rolled back.
    Stopped {
        /// The rounds completed before.
        rounds: u32,
    },
}

/// Watches the gateway `G` and the API server `A` after a takeover.
#[derive(Debug, Clone)]
pub struct Watchdog<G, A> {
    gateway: G,
    api_server: A,
    config: WatchdogConfig,
}

impl<G: Reachability, A: Reachability> Watchdog<G, A> {
    /// A watchdog probing `gateway` and `api_server`.
    pub fn new(gateway: G, api_server: A, config: WatchdogConfig) -> Self {
        Watchdog {
            gateway,
            api_server,
            config,
        }
    }

    /// Watches from now on; see the module documentation for the rule.
    pub async fn watch<R: TakeoverRollback>(
        &self,
        rollback: &R,
        stop: impl Future<Output = ()>,
    ) -> WatchdogVerdict {
        let start = Instant::now();
        let deadline = start + self.config.window;
        let mut stop = std::pin::pin!(stop);
        let mut round_start = start;
        let mut rounds = 0;
        while round_start <= deadline {
            let outcome = tokio::select! {
                biased;
                () = &mut stop => return self.stopped(rounds),
                outcome = async {
                    tokio::time::sleep_until(round_start).await;
                    self.round().await
                } => outcome,
            };
            rounds += 1;
            let after = round_start - start;
            match outcome {
                (Ok(()), _) => return self.confirmed(Target::Gateway, rounds, after),
                (_, Ok(())) => return self.confirmed(Target::ApiServer, rounds, after),
                (Err(gateway), Err(api_server)) => tracing::warn!(
                    round = rounds,
                    after = ?after,
                    gateway = %self.gateway.target(),
                    gateway_error = %gateway,
                    api_server = %self.api_server.target(),
                    api_server_error = %api_server,
                    "after the NIC takeover neither the gateway nor the API server answers"
                ),
            }
            round_start += self.config.interval;
        }
        tracing::error!(
            rounds,
            window = ?self.config.window,
            gateway = %self.gateway.target(),
            api_server = %self.api_server.target(),
            "ROLLING BACK THE NIC TAKEOVER: neither the gateway nor the API server answered for the whole window"
        );
        let result = match rollback.rollback().await {
            Ok(()) => {
                tracing::error!(
                    "NIC takeover rolled back; the Node's configuration is on its NIC again"
                );
                Ok(())
            }
            Err(error) => {
                tracing::error!(%error, "rolling the NIC takeover back failed; the Node may be unreachable");
                Err(Box::new(error) as CallbackError)
            }
        };
        WatchdogVerdict::RolledBack { rounds, result }
    }

    /// Probes both targets at once, each within the probe timeout.
    async fn round(&self) -> (Result<(), ProbeError>, Result<(), ProbeError>) {
        let timeout = self.config.probe_timeout;
        tokio::join!(
            bounded(timeout, self.gateway.probe(timeout)),
            bounded(timeout, self.api_server.probe(timeout))
        )
    }

    fn confirmed(&self, target: Target, round: u32, after: Duration) -> WatchdogVerdict {
        tracing::info!(
            ?target,
            round,
            ?after,
            "connectivity after the NIC takeover confirmed"
        );
        WatchdogVerdict::Confirmed {
            target,
            round,
            after,
        }
    }

    fn stopped(&self, rounds: u32) -> WatchdogVerdict {
        tracing::info!(rounds, "takeover watchdog stopped before its verdict");
        WatchdogVerdict::Stopped { rounds }
    }
}

/// `probe`, or [`ProbeError::TimedOut`] when it has not finished after `timeout`.
async fn bounded(
    timeout: Duration,
    probe: impl Future<Output = Result<(), ProbeError>>,
) -> Result<(), ProbeError> {
    tokio::time::timeout(timeout, probe)
        .await
        .unwrap_or(Err(ProbeError::TimedOut(timeout)))
}
