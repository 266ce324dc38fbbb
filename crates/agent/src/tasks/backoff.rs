//! [`Backoff`]: the delays between retries of a failed update — a first delay, doubling on
//! every further failure up to a cap, back to the first after a success.

use std::time::Duration;

/// The first delay before a failed datapath update is retried.
pub const REQUEUE_INITIAL: Duration = Duration::from_millis(100);
/// The longest delay between retries of a failed datapath update.
pub const REQUEUE_MAX: Duration = Duration::from_secs(30);

/// Exponential backoff with a cap, without jitter (one agent retries against its own switch).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    /// Delays from `initial`, doubling up to `max`.
    pub fn new(initial: Duration, max: Duration) -> Backoff {
        Backoff {
            initial,
            max,
            next: initial.min(max),
        }
    }

    /// The delay before the next retry; each call doubles the one after, up to the cap.
    pub fn next_delay(&mut self) -> Duration {
        let delay = self.next;
        self.next = delay.saturating_mul(2).min(self.max);
        delay
    }

    /// After a success: the next failure waits the first delay again.
    pub fn reset(&mut self) {
        self.next = self.initial.min(self.max);
    }
}

impl Default for Backoff {
    /// [`REQUEUE_INITIAL`] doubling to [`REQUEUE_MAX`].
    fn default() -> Backoff {
        Backoff::new(REQUEUE_INITIAL, REQUEUE_MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_the_cap_and_start_over_after_a_reset() {
        let mut backoff = Backoff::default();
        let delays: Vec<u64> = (0..12)
            .map(|_| backoff.next_delay().as_millis() as u64)
            .collect();
        assert_eq!(
            delays,
            [
                100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000
            ]
        );
        backoff.reset();
        assert_eq!(backoff.next_delay(), Duration::from_millis(100));
        assert_eq!(backoff.next_delay(), Duration::from_millis(200));
    }
}
