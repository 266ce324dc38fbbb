//! [`StepClock`]: how long each step of one datapath operation took, for the log line of the
//! command that asked for it (the CNI ADD benchmark reads these lines to show where an ADD's time
//! goes). A step made of concurrent parts also records when each part ended, counted from the
//! step's start.

use std::fmt;
use std::time::{Duration, Instant};

/// Times consecutive steps of one command.
#[derive(Debug)]
pub struct StepClock {
    start: Instant,
    last: Instant,
    steps: Vec<(&'static str, Duration)>,
    parts: Vec<(&'static str, Duration)>,
}

impl StepClock {
    /// A clock started now.
    pub fn start() -> StepClock {
        let now = Instant::now();
        StepClock {
            start: now,
            last: now,
            steps: Vec::new(),
            parts: Vec::new(),
        }
    }

    /// When the current step began: its concurrent parts measure from here.
    pub fn step_started(&self) -> Instant {
        self.last
    }

    /// Part `name` of the current step ended at `ended` (an instant after
    /// [`StepClock::step_started`]); parts overlap, so they are not added to the total.
    pub fn part(&mut self, name: &'static str, ended: Instant) {
        self.parts
            .push((name, ended.saturating_duration_since(self.last)));
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
        write!(f, ")")?;
        for (i, (name, ended)) in self.parts.iter().enumerate() {
            let sep = if i == 0 { " [parts ended at: " } else { ", " };
            write!(f, "{sep}{name} {:.1}", ms(*ended))?;
        }
        if !self.parts.is_empty() {
            write!(f, "]")?;
        }
        Ok(())
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

    #[test]
    fn parts_are_shown_after_the_steps_measured_from_their_steps_start() {
        let mut clock = StepClock::start();
        clock.lap("interface");
        let begun = clock.step_started();
        std::thread::sleep(Duration::from_millis(3));
        clock.part("port", Instant::now());
        clock.part("flows", begun);
        clock.lap("attach");
        let text = clock.to_string();
        let (steps, parts) = text.split_once(" [parts ended at: ").unwrap();
        assert!(steps.ends_with(')'), "{text}");
        let parts: Vec<(&str, f64)> = parts
            .strip_suffix(']')
            .unwrap()
            .split(", ")
            .map(|p| {
                let (name, ms) = p.split_once(' ').unwrap();
                (name, ms.parse().unwrap())
            })
            .collect();
        assert_eq!(parts[0].0, "port");
        assert!(parts[0].1 >= 3.0, "{text}");
        assert_eq!(parts[1], ("flows", 0.0), "{text}");
        assert!(!StepClock::start().to_string().contains('['));
    }
}
