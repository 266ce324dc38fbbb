//! Conntrack flushes on the bridge ([`Flows::flush_conntrack`]: `NXT_CT_FLUSH`es and a barrier,
//! Open vSwitch 3.1 and later) and their count as metrics ([`ConntrackFlushMetrics`]):
//!
//! | name | kind | meaning |
//! |---|---|---|
//! | `antrea_agent_ovs_conntrack_flushes_total` | counter | flushes the switch took |
//! | `antrea_agent_ovs_conntrack_flush_failures_total` | counter | flushes that failed (rejected, or the connection failed) |
//!
//! A switch older than 3.1 rejects every flush (an unknown Nicira message): the failures count
//! them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use openflow::conn::Encoded;
use openflow::msg::ct_flush::CtFlush;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::registry::Registry;

use super::Flows;
use crate::error::AgentError;

/// Flushes sent so far, by outcome.
#[derive(Debug, Default)]
pub struct ConntrackFlushCounts {
    flushed: AtomicU64,
    failed: AtomicU64,
}

impl Flows {
    /// Sends `flushes` and a barrier, and waits for it: when this returns `Ok`, the switch has
    /// deleted the entries they match. Every flush is counted, as taken or as failed.
    pub async fn flush_conntrack(&self, flushes: &[CtFlush]) -> Result<(), AgentError> {
        let counts = &self.conntrack_flushes;
        let count = flushes.len() as u64;
        let sent = async {
            let msgs = flushes
                .iter()
                .map(Encoded::new)
                .collect::<Result<Vec<_>, _>>()?;
            self.conn.batch(&msgs).await
        };
        match sent.await {
            Ok(()) => {
                counts.flushed.fetch_add(count, Ordering::Relaxed);
                Ok(())
            }
            Err(source) => {
                let rejected = match &source {
                    openflow::conn::ConnError::BatchRejected(rejections) => rejections.len() as u64,
                    _ => count,
                };
                counts.failed.fetch_add(rejected, Ordering::Relaxed);
                counts
                    .flushed
                    .fetch_add(count - rejected, Ordering::Relaxed);
                Err(AgentError::OpenFlow {
                    endpoint: self.endpoint.clone(),
                    source,
                })
            }
        }
    }

    /// The conntrack flush counts (for the metrics).
    pub fn conntrack_flush_counts(&self) -> Arc<ConntrackFlushCounts> {
        self.conntrack_flushes.clone()
    }
}

/// The collector of the conntrack flush counts.
#[derive(Debug)]
pub struct ConntrackFlushMetrics {
    counts: Arc<ConntrackFlushCounts>,
}

impl ConntrackFlushMetrics {
    /// Registers `counts` in `registry`.
    pub fn register(registry: &mut Registry, counts: Arc<ConntrackFlushCounts>) {
        registry.register_collector(Box::new(ConntrackFlushMetrics { counts }));
    }
}

impl Collector for ConntrackFlushMetrics {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        for (name, help, counter) in [
            (
                "antrea_agent_ovs_conntrack_flushes",
                "Conntrack flushes the switch took",
                &self.counts.flushed,
            ),
            (
                "antrea_agent_ovs_conntrack_flush_failures",
                "Conntrack flushes that failed",
                &self.counts.failed,
            ),
        ] {
            ConstCounter::new(counter.load(Ordering::Relaxed))
                .encode(encoder.encode_descriptor(name, help, None, MetricType::Counter)?)?;
        }
        Ok(())
    }
}
