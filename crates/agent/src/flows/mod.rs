//! The agent's OpenFlow side: one connection to the bridge whose on-connect hook replays the
//! desired flows (ovs-vswitchd forgets every flow when it restarts), the agent round on start
//! ([`Flows::start_round`]), and owner updates, with every flow mod counted.

mod round;
mod switch;

pub use round::RoundOutcome;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use localipc::Endpoint;
use openflow::conn::{ConnOptions, OfConnection};
use openflow::msg::flow_mod::FlowMod;
use pipeline::cache::{FlowCache, SharedCache, replay};
use pipeline::{FlowDiff, FlowInstaller, FlowOwner, Round};

use crate::error::AgentError;

/// The bridge's flows as the agent keeps them.
#[derive(Debug)]
pub struct Flows {
    /// The management endpoint, for error messages.
    endpoint: String,
    conn: OfConnection,
    installer: FlowInstaller,
    /// Set once the first round is in the switch; from then on every reconnect replays the
    /// cache. Before, the cache is still being filled and a replay would delete what the switch
    /// holds.
    armed: Arc<AtomicBool>,
    mods: AtomicU64,
}

impl Flows {
    /// Connects to the bridge's management socket, retrying until `timeout` (ovs-vswitchd
    /// creates the socket shortly after the bridge). The cache stays empty, and reconnects
    /// replay nothing, until [`Flows::start_round`].
    pub async fn connect(endpoint: Endpoint, timeout: Duration) -> Result<Flows, AgentError> {
        let cache: SharedCache = Arc::new(std::sync::Mutex::new(FlowCache::new(Round::FIRST)));
        let armed = Arc::new(AtomicBool::new(false));
        let hook_cache = cache.clone();
        let hook_armed = armed.clone();
        let options = ConnOptions::default().on_connect(move |conn| {
            let cache = hook_cache.clone();
            let armed = hook_armed.load(Ordering::Acquire);
            async move {
                if armed {
                    tracing::info!(
                        "OpenFlow connection (re)established: replaying the desired flows"
                    );
                    replay(&conn, &cache).await?;
                }
                Ok(())
            }
        });
        let deadline = tokio::time::Instant::now() + timeout;
        let conn = loop {
            match OfConnection::connect(endpoint.clone(), options.clone()).await {
                Ok(conn) => break conn,
                Err(source) if tokio::time::Instant::now() >= deadline => {
                    return Err(AgentError::OpenFlow {
                        endpoint: endpoint.to_string(),
                        source,
                    });
                }
                Err(error) => {
                    tracing::debug!("OpenFlow connection to {endpoint} not ready yet: {error}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        let installer = FlowInstaller::new(conn.clone(), cache);
        Ok(Flows {
            endpoint: endpoint.to_string(),
            conn,
            installer,
            armed,
            mods: AtomicU64::new(0),
        })
    }

    /// Flow mods sent so far (bundle contents and deletes).
    pub fn mods(&self) -> u64 {
        self.mods.load(Ordering::Relaxed)
    }

    /// The connection (for closing it at shutdown).
    pub fn connection(&self) -> &OfConnection {
        &self.conn
    }

    /// Makes the cache a new one of `round` holding `desired` (nothing is sent).
    fn fill(&self, round: Round, desired: &[(FlowOwner, Vec<FlowMod>)]) -> Result<(), AgentError> {
        let mut cache = FlowCache::new(round);
        for (owner, flows) in desired {
            cache.replace(owner.clone(), flows.clone())?;
        }
        *self
            .installer
            .cache()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = cache;
        Ok(())
    }

    /// Replaces `owner`'s flows in the switch (one bundle with the difference, confirmed).
    pub async fn set(&self, owner: FlowOwner, flows: Vec<FlowMod>) -> Result<FlowDiff, AgentError> {
        let diff = self.installer.replace(owner, flows).await?;
        self.mods.fetch_add(diff.len() as u64, Ordering::Relaxed);
        Ok(diff)
    }

    /// Removes every flow of `owner` from the switch.
    pub async fn remove(&self, owner: FlowOwner) -> Result<FlowDiff, AgentError> {
        self.set(owner, Vec::new()).await
    }

    /// The owners with flows.
    pub fn owners(&self) -> Vec<FlowOwner> {
        self.installer
            .cache()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .owners()
            .cloned()
            .collect()
    }
}
