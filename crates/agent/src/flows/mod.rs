//! The agent's OpenFlow side: one connection to the bridge whose on-connect hook asks for the
//! pipeline's packet-ins and replays the desired flows, groups and meters (ovs-vswitchd forgets
//! them all when it restarts), the agent round on start ([`Flows::start_round`]), changes of
//! owners, with every mod counted, the desired flows per table and groups as metrics
//! ([`DesiredFlowMetrics`]), conntrack flushes with their counts ([`ConntrackFlushMetrics`]),
//! and the answers to Services' rejections ([`ServiceRejects`]).

mod conntrack;
mod metrics;
mod round;
mod service_reject;
mod switch;

pub use conntrack::{ConntrackFlushCounts, ConntrackFlushMetrics};
pub use metrics::DesiredFlowMetrics;
pub use round::RoundOutcome;
pub use service_reject::ServiceRejects;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use localipc::Endpoint;
use openflow::conn::{ConnOptions, Encoded, OfConnection};
use openflow::msg::config::{SetConfig, SwitchConfig, config_flags};
use openflow::msg::flow_mod::FlowMod;
use openflow::msg::packet_in::packet_in_format;
use pipeline::cache::{DesiredCache, SharedCache, replay};
use pipeline::layout::packet_in::PACKET_IN_MAX_LEN;
use pipeline::render::revalidation_nudge;
use pipeline::{Change, ChangeDiff, FlowDiff, Installer, Objects, Owner, Round};

use crate::error::AgentError;

/// Asks the switch to send this connection the packets the pipeline hands to the agent, as
/// `NXT_PACKET_IN2` (which carries the controller action's userdata). Open vSwitch sends a
/// management connection no packet-in until its `miss_send_len` is set, and forgets both
/// settings on reconnect.
async fn receive_packet_ins(conn: &OfConnection) -> Result<(), openflow::conn::ConnError> {
    conn.set_packet_in_format(packet_in_format::NXT_PACKET_IN2)
        .await?;
    conn.batch(&[Encoded::new(&SetConfig(SwitchConfig {
        flags: config_flags::FRAG_NORMAL,
        miss_send_len: PACKET_IN_MAX_LEN,
    }))?])
    .await
}

/// The bridge's flows, groups and meters as the agent keeps them.
#[derive(Debug)]
pub struct Flows {
    /// The management endpoint, for error messages.
    endpoint: String,
    conn: OfConnection,
    installer: Installer,
    /// Set once the first round is in the switch; from then on every reconnect replays the
    /// cache. Before, the cache is still being filled and a replay would delete what the switch
    /// holds.
    armed: Arc<AtomicBool>,
    mods: AtomicU64,
    conntrack_flushes: Arc<ConntrackFlushCounts>,
}

impl Flows {
    /// Connects to the bridge's management socket, retrying until `timeout` (ovs-vswitchd
    /// creates the socket shortly after the bridge). The cache stays empty, and reconnects
    /// replay nothing, until [`Flows::start_round`].
    pub async fn connect(endpoint: Endpoint, timeout: Duration) -> Result<Flows, AgentError> {
        let cache: SharedCache = Arc::new(std::sync::Mutex::new(DesiredCache::new(Round::FIRST)));
        let armed = Arc::new(AtomicBool::new(false));
        let hook_cache = cache.clone();
        let hook_armed = armed.clone();
        let options = ConnOptions::default().on_connect(move |conn| {
            let cache = hook_cache.clone();
            let armed = hook_armed.load(Ordering::Acquire);
            async move {
                receive_packet_ins(&conn).await?;
                if armed {
                    tracing::info!(
                        "OpenFlow connection (re)established: replaying the desired flows, groups and meters"
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
        let installer = Installer::new(conn.clone(), cache);
        Ok(Flows {
            endpoint: endpoint.to_string(),
            conn,
            installer,
            armed,
            mods: AtomicU64::new(0),
            conntrack_flushes: Arc::default(),
        })
    }

    /// Flow, group and meter mods sent so far (bundle contents and deletes).
    pub fn mods(&self) -> u64 {
        self.mods.load(Ordering::Relaxed)
    }

    /// Whether the switch has the packet-rate meters that bound packet-ins to the agent
    /// (`PacketInOperation::meter`). A switch that refuses the question has none; one that
    /// cannot be asked is an error.
    pub async fn has_packet_rate_meters(&self) -> Result<bool, AgentError> {
        match self.conn.meter_features().await {
            Ok(features) => Ok(features.drops_packets_per_second()),
            Err(openflow::conn::ConnError::Rejected(refusal)) => {
                tracing::info!(
                    "the switch has no meters ({refusal}): packet-ins to the agent are not metered in it"
                );
                Ok(false)
            }
            Err(source) => Err(AgentError::OpenFlow {
                endpoint: self.endpoint.clone(),
                source,
            }),
        }
    }

    /// The connection (for closing it at shutdown).
    pub fn connection(&self) -> &OfConnection {
        &self.conn
    }

    /// Makes the cache a new one of `round` holding `desired` (nothing is sent).
    fn fill(&self, round: Round, desired: &[(Owner, Objects)]) -> Result<(), AgentError> {
        let mut cache = DesiredCache::new(round);
        let change = desired
            .iter()
            .fold(Change::new(), |change, (owner, objects)| {
                change.replace(owner.clone(), objects.clone())
            });
        cache.apply(change)?;
        *self
            .installer
            .cache()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = cache;
        Ok(())
    }

    /// The desired-state cache (for the metrics that count it).
    pub fn cache(&self) -> SharedCache {
        self.installer.cache().clone()
    }

    /// Applies `change` to the switch (meters first, then one bundle with the groups and flows
    /// that differ, confirmed).
    pub async fn apply(&self, change: Change) -> Result<ChangeDiff, AgentError> {
        let diff = self.installer.apply(change).await?;
        self.mods.fetch_add(diff.len() as u64, Ordering::Relaxed);
        Ok(diff)
    }

    /// Makes ovs-vswitchd begin a revalidation round of its datapath's cached flows now rather
    /// than at its next periodic one ([`revalidation_nudge`], which changes nothing in the
    /// tables). Sent without waiting for the switch; not counted among [`Flows::mods`].
    pub async fn nudge_revalidation(&self) -> Result<(), AgentError> {
        match self.conn.send(&revalidation_nudge()).await {
            Ok(_) => Ok(()),
            Err(source) => Err(AgentError::OpenFlow {
                endpoint: self.endpoint.clone(),
                source,
            }),
        }
    }

    /// Replaces `owner`'s flows in the switch; returns the flow mods sent.
    pub async fn set(&self, owner: Owner, flows: Vec<FlowMod>) -> Result<FlowDiff, AgentError> {
        Ok(self.apply(Change::new().replace(owner, flows)).await?.flows)
    }

    /// Removes everything of `owner` from the switch; returns the flow mods sent.
    pub async fn remove(&self, owner: Owner) -> Result<FlowDiff, AgentError> {
        Ok(self.apply(Change::new().remove(owner)).await?.flows)
    }

    /// The owners with objects.
    pub fn owners(&self) -> Vec<Owner> {
        self.installer
            .cache()
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .owners()
            .cloned()
            .collect()
    }
}
