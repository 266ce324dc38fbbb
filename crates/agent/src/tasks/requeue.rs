//! [`Requeue`]: a controller's retry of its failed datapath update, kube-runtime style. A failed
//! update owes a retry after the next [`Backoff`] delay; the controller keeps taking inputs
//! meanwhile and folds them into that retry; a success clears the debt and resets the backoff.
//! No new cluster event is needed for the retry.

use std::time::Duration;

use tokio::time::Instant;

use super::backoff::Backoff;
use super::metrics::{ControllerSeries, RequeueMetrics};

/// The retry one controller owes, if any.
#[derive(Debug)]
pub struct Requeue {
    backoff: Backoff,
    /// When the owed retry is due.
    due: Option<Instant>,
    series: ControllerSeries,
}

impl Requeue {
    /// The requeue of `controller` (its metrics label), with the default [`Backoff`].
    pub fn new(controller: &'static str, metrics: &RequeueMetrics) -> Requeue {
        Requeue {
            backoff: Backoff::default(),
            due: None,
            series: metrics.of(controller),
        }
    }

    /// Whether a failed update awaits its retry (inputs are then folded into it).
    pub fn is_owed(&self) -> bool {
        self.due.is_some()
    }

    /// Resolves when the owed retry is due, and counts it; never when none is owed.
    /// Cancel-safe: dropped before it resolves, the retry stays owed.
    pub async fn due(&mut self) {
        match self.due {
            Some(at) => {
                tokio::time::sleep_until(at).await;
                self.due = None;
                self.series.retries.inc();
            }
            None => std::future::pending().await,
        }
    }

    /// The update succeeded: nothing is owed, and the next failure waits the first delay.
    pub fn succeeded(&mut self) {
        self.due = None;
        self.backoff.reset();
        self.series.pending.set(0);
    }

    /// The update failed: it is counted and owes a retry after the returned delay.
    pub fn failed(&mut self) -> Duration {
        let delay = self.backoff.next_delay();
        self.due = Some(Instant::now() + delay);
        self.series.failures.inc();
        self.series.pending.set(1);
        delay
    }
}

#[cfg(test)]
mod tests {
    use prometheus_client::encoding::text::encode;
    use prometheus_client::registry::Registry;

    use super::*;

    fn scrape(registry: &Registry) -> String {
        let mut text = String::new();
        encode(&mut text, registry).unwrap();
        text
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_owes_a_retry_after_a_growing_delay_until_a_success() {
        let mut registry = Registry::default();
        let metrics = RequeueMetrics::register(&mut registry);
        let mut requeue = Requeue::new("peers", &metrics);
        assert!(!requeue.is_owed());
        assert!(
            scrape(&registry)
                .contains("antrea_agent_datapath_update_failures_total{controller=\"peers\"} 0")
        );

        let start = Instant::now();
        assert_eq!(requeue.failed(), Duration::from_millis(100));
        assert!(requeue.is_owed());
        requeue.due().await;
        assert_eq!(start.elapsed(), Duration::from_millis(100));
        assert!(!requeue.is_owed());
        assert_eq!(requeue.failed(), Duration::from_millis(200));
        requeue.due().await;
        assert_eq!(start.elapsed(), Duration::from_millis(300));

        let text = scrape(&registry);
        for series in [
            "antrea_agent_datapath_update_failures_total{controller=\"peers\"} 2",
            "antrea_agent_datapath_update_retries_total{controller=\"peers\"} 2",
            "antrea_agent_datapath_update_retry_pending{controller=\"peers\"} 1",
        ] {
            assert!(text.contains(series), "{series} in\n{text}");
        }

        requeue.succeeded();
        assert!(!requeue.is_owed());
        assert_eq!(requeue.failed(), Duration::from_millis(100));
        requeue.succeeded();
        assert!(
            scrape(&registry)
                .contains("antrea_agent_datapath_update_retry_pending{controller=\"peers\"} 0")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_owed_is_never_due() {
        let mut requeue = Requeue::new("networkpolicy", &RequeueMetrics::default());
        let waited = tokio::time::timeout(Duration::from_secs(3600), requeue.due()).await;
        assert!(waited.is_err());
    }
}
