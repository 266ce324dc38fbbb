//! [`ScriptedProbe`]: a [`Reachability`] whose answers a test writes in advance.

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::probe::{ProbeError, Reachability};

/// Answers probes from a script: each probe takes the next answer (`true`: reachable), and the
/// last one repeats once the script runs out. Clones share the script and the count.
#[derive(Debug, Clone)]
pub struct ScriptedProbe {
    name: String,
    state: Arc<Mutex<Script>>,
}

#[derive(Debug)]
struct Script {
    answers: VecDeque<bool>,
    last: bool,
    probes: usize,
}

impl ScriptedProbe {
    /// A probe named `name` (for logs) answering `answers` in order, then the last one forever
    /// (unreachable when `answers` is empty).
    pub fn new(name: impl Into<String>, answers: impl IntoIterator<Item = bool>) -> Self {
        let answers: VecDeque<bool> = answers.into_iter().collect();
        let last = answers.back().copied().unwrap_or(false);
        ScriptedProbe {
            name: name.into(),
            state: Arc::new(Mutex::new(Script {
                answers,
                last,
                probes: 0,
            })),
        }
    }

    /// A probe that always answers `reachable`.
    pub fn always(name: impl Into<String>, reachable: bool) -> Self {
        ScriptedProbe::new(name, [reachable])
    }

    /// How many probes were made.
    pub fn probes(&self) -> usize {
        self.lock().probes
    }

    fn lock(&self) -> MutexGuard<'_, Script> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Reachability for ScriptedProbe {
    fn target(&self) -> String {
        format!("scripted {}", self.name)
    }

    async fn probe(&self, _timeout: Duration) -> Result<(), ProbeError> {
        let reachable = {
            let mut script = self.lock();
            script.probes += 1;
            let last = script.last;
            script.answers.pop_front().unwrap_or(last)
        };
        if reachable {
            Ok(())
        } else {
            Err(ProbeError::Io {
                target: self.name.clone(),
                source: io::Error::from(io::ErrorKind::HostUnreachable),
            })
        }
    }
}
