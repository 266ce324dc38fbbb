//! [`TakeoverWatch`]: the takeover watchdog kept on for `takeoverWatchdog.duration` after the
//! takeover.
//!
//! It runs [`Watchdog::watch`] over and over: each watch ends at the first probe round either
//! target answers (the next starts one probe interval later), or with a rollback once both
//! targets missed `lostProbes` rounds in a row. When the duration is over, the watch in
//! progress is stopped and supervision goes on without it.

use std::future::Future;

use hostnet::windows::watchdog::{
    Reachability, TakeoverRollback, Watchdog, WatchdogConfig, WatchdogVerdict,
};
use tokio::time::Instant;

use crate::config::TakeoverWatchdogConfig;
use crate::error::AgentError;

/// The watchdog of one takeover.
#[derive(Debug)]
pub struct TakeoverWatch<R, G, A> {
    watchdog: Watchdog<G, A>,
    rollback: R,
    settings: TakeoverWatchdogConfig,
    /// The NIC taken over and the two targets, for the error.
    nic: String,
    targets: (String, String),
}

impl<R, G, A> TakeoverWatch<R, G, A>
where
    R: TakeoverRollback,
    G: Reachability,
    A: Reachability,
{
    /// Watches `gateway` and `api_server` after the takeover of `nic`, rolling back with
    /// `rollback`.
    pub fn new(
        nic: impl Into<String>,
        gateway: G,
        api_server: A,
        rollback: R,
        settings: TakeoverWatchdogConfig,
    ) -> Self {
        let rounds = settings.lost_probes.max(1);
        let config = WatchdogConfig {
            // Rounds start at 0, interval, … while within the window: `rounds` of them.
            window: settings.probe_interval * (rounds - 1),
            interval: settings.probe_interval,
            probe_timeout: settings.probe_interval,
        };
        let targets = (gateway.target(), api_server.target());
        TakeoverWatch {
            watchdog: Watchdog::new(gateway, api_server, config),
            rollback,
            settings,
            nic: nic.into(),
            targets,
        }
    }

    /// Watches until the duration is over or `stop` completes (`Ok`), or until a rollback
    /// (the error saying why and how it went).
    pub async fn run(&self, stop: impl Future<Output = ()>) -> Result<(), AgentError> {
        let deadline = Instant::now() + self.settings.duration;
        tracing::info!(
            nic = self.nic,
            gateway = self.targets.0,
            api_server = self.targets.1,
            "watching the Node's connectivity after the NIC takeover for {:?}",
            self.settings.duration
        );
        let mut end = std::pin::pin!(async {
            tokio::select! {
                () = stop => {}
                () = tokio::time::sleep_until(deadline) => {}
            }
        });
        loop {
            match self.watchdog.watch(&self.rollback, end.as_mut()).await {
                WatchdogVerdict::Confirmed { .. } => {}
                WatchdogVerdict::Stopped { .. } => {
                    tracing::info!(nic = self.nic, "takeover watchdog over");
                    return Ok(());
                }
                WatchdogVerdict::RolledBack { rounds, result } => {
                    let outcome = match result {
                        Ok(()) => format!("{} holds the Node's configuration again", self.nic),
                        Err(error) => format!("rolling it back failed: {error}"),
                    };
                    return Err(AgentError::TakeoverRolledBack {
                        nic: self.nic.clone(),
                        gateway: self.targets.0.clone(),
                        api_server: self.targets.1.clone(),
                        rounds,
                        outcome,
                    });
                }
            }
            tokio::select! {
                () = end.as_mut() => {
                    tracing::info!(nic = self.nic, "takeover watchdog over");
                    return Ok(());
                }
                () = tokio::time::sleep(self.settings.probe_interval) => {}
            }
        }
    }
}
