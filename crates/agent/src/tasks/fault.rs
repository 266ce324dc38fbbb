//! Fault injection for the agent's own tests, compiled only with the cargo feature
//! `fault-injection` (which only the agent's dev-dependency on itself enables: a release
//! build has none of this). When [`PANIC_TASK`] names a supervised task, that task panics on
//! the first SIGUSR1 the process receives, so a test can watch a real panic in a running
//! agent go through the supervisor.

use std::future::Future;

use tokio::signal::unix::{SignalKind, signal};

/// The environment variable naming the task that panics on SIGUSR1.
pub const PANIC_TASK: &str = "ANTREA_AGENT_INJECT_PANIC";

/// `task`, made to panic on SIGUSR1 when [`PANIC_TASK`] names it (as it is otherwise).
pub(super) fn armed<F>(name: &'static str, task: F) -> impl Future<Output = F::Output> + Send
where
    F: Future + Send + 'static,
{
    let trigger = (std::env::var(PANIC_TASK).ok().as_deref() == Some(name)).then(|| {
        // Registered now, so a signal sent once the task is spawned is seen.
        signal(SignalKind::user_defined1())
            .unwrap_or_else(|error| panic!("cannot watch SIGUSR1 for {PANIC_TASK}: {error}"))
    });
    async move {
        match trigger {
            None => task.await,
            Some(mut trigger) => {
                tokio::select! {
                    output = task => output,
                    _ = trigger.recv() => panic!("fault injected: SIGUSR1 made the {name} task panic"),
                }
            }
        }
    }
}
