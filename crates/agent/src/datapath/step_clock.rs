//! [`StepClock`]: how long each step of one datapath operation took, for the log line of the
//! command that asked for it (the CNI ADD benchmark reads these lines to show where an ADD's time
//! goes).

use std::fmt;
use std::time::{Duration, Instant};

/// Times consecutive steps of one command.
#[derive(Debug)]
pub struct StepClock {
    start: Instant,
    last: Instant,
    steps: Vec<(&'static str, Duration)>,
}

impl StepClock {
    /// A clock started now.
    pub fn start() -> StepClock {
        let now = Instant::now();
        StepClock {
            start: now,
            last: now,
            steps: Vec::new(),
        }
    }

    /// Ends step `name`: the time since the previous step ended (or the clock started).
    pub fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        self.steps.push((name, now - self.last));
        self.last = now;
    }
}

/// `total 12.3 ms (ipam 0.4, interface 5.1, ...)`, in milliseconds.
impl fmt::Display for StepClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        write!(f, "total {:.1} ms (", ms(self.last - self.start))?;
        for (i, (name, took)) in self.steps.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{name} {:.1}", ms(*took))?;
        }
        write!(f, ")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_every_step_in_order_and_the_total_is_their_sum() {
        let mut clock = StepClock::start();
        clock.lap("ipam");
        std::thread::sleep(Duration::from_millis(2));
        clock.lap("interface");
        let text = clock.to_string();
        let inner = text
            .split_once(" (")
            .and_then(|(_, rest)| rest.strip_suffix(')'))
            .unwrap();
        let steps: Vec<(&str, f64)> = inner
            .split(", ")
            .map(|s| {
                let (name, ms) = s.split_once(' ').unwrap();
                (name, ms.parse().unwrap())
            })
            .collect();
        assert_eq!(
            steps.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            ["ipam", "interface"]
        );
        assert!(steps[1].1 >= 2.0, "{text}");
        let total: f64 = text
            .strip_prefix("total ")
            .and_then(|t| t.split_once(" ms"))
            .map(|(t, _)| t.parse().unwrap())
            .unwrap();
        let sum: f64 = steps.iter().map(|(_, ms)| ms).sum();
        assert!((total - sum).abs() <= 0.1 + 1e-9, "{text}");
    }
}
