//! [`Tasks`]: the supervisor of the agent's long-running tasks. Each task is spawned with a
//! name and whether it may end on its own ([`Ending`]). [`Tasks::failed`] resolves when one
//! panics, returns an error, or ends while it should run — logged with the task's name and the
//! cause — and [`Tasks::stop`] is the orderly stop after a failure or a shutdown alike: the stop
//! token is cancelled, every task is waited for, and the failure that ended the agent comes back
//! as [`AgentError::Task`]. Nothing is dropped silently: an end during the stop is normal, a
//! panic or an error then is still a failure.

use std::collections::HashMap;
use std::future::Future;

use tokio::task::{Id, JoinError, JoinSet};
use tokio_util::sync::CancellationToken;

use super::failure::{TaskError, TaskFailure};
use crate::error::AgentError;

/// Whether a task may end on its own while the agent runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// It runs until the stop; ending before is a failure.
    AtStop,
    /// It may finish its work and end (logged); an error or a panic is still a failure.
    MayEnd,
}

/// What a task's future gives: `()`, or a `Result` whose error is the task's failure.
pub trait Outcome: Send + 'static {
    /// The outcome as a result.
    fn into_result(self) -> Result<(), TaskError>;
}

impl Outcome for () {
    fn into_result(self) -> Result<(), TaskError> {
        Ok(())
    }
}

impl<E: Into<TaskError> + Send + 'static> Outcome for Result<(), E> {
    fn into_result(self) -> Result<(), TaskError> {
        self.map_err(Into::into)
    }
}

#[derive(Debug)]
struct Supervised {
    name: &'static str,
    ending: Ending,
}

/// The running tasks. Dropping it (an error path that skips [`Tasks::stop`]) cancels the stop
/// token and aborts every task.
#[derive(Debug)]
pub struct Tasks {
    running: JoinSet<Result<(), TaskError>>,
    supervised: HashMap<Id, Supervised>,
    stop: CancellationToken,
    stopping: bool,
    /// Every failure seen, in the order seen.
    failures: Vec<(&'static str, TaskFailure)>,
}

impl Default for Tasks {
    fn default() -> Tasks {
        Tasks::new()
    }
}

impl Tasks {
    /// No task yet.
    pub fn new() -> Tasks {
        Tasks {
            running: JoinSet::new(),
            supervised: HashMap::new(),
            stop: CancellationToken::new(),
            stopping: false,
            failures: Vec::new(),
        }
    }

    /// Cancelled when the stop begins. A task that does not end with its inputs watches it.
    pub fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Runs `task` on the runtime under `name` (the name the logs and the error use).
    pub fn spawn<F>(&mut self, name: &'static str, ending: Ending, task: F)
    where
        F: Future + Send + 'static,
        F::Output: Outcome,
    {
        #[cfg(all(feature = "fault-injection", unix))]
        let task = super::fault::armed(name, task);
        let handle = self.running.spawn(async move { task.await.into_result() });
        self.supervised
            .insert(handle.id(), Supervised { name, ending });
    }

    /// Resolves when a task has failed, with the name of the task whose failure ends the agent
    /// (see [`Tasks::stop`]); pending as long as none fails. Cancel-safe.
    pub async fn failed(&mut self) -> &'static str {
        loop {
            let Some(ended) = self.running.join_next_with_id().await else {
                return std::future::pending().await;
            };
            self.judge(ended);
            // Tasks that ended meanwhile: a failed task's neighbours see their channels close.
            while let Some(ended) = self.running.try_join_next_with_id() {
                self.judge(ended);
            }
            if let Some(index) = self.cause() {
                return self.failures[index].0;
            }
        }
    }

    /// The orderly stop: cancels the stop token, waits for every task to end, and returns the
    /// failure that ends the agent — the first panic or error seen, else the first task that
    /// ended too early — or `Ok` when none failed.
    pub async fn stop(mut self) -> Result<(), AgentError> {
        self.stopping = true;
        self.stop.cancel();
        while let Some(ended) = self.running.join_next_with_id().await {
            self.judge(ended);
        }
        match self.cause() {
            Some(index) => {
                let (task, failure) = self.failures.swap_remove(index);
                Err(AgentError::Task { task, failure })
            }
            None => Ok(()),
        }
    }

    /// Where in `failures` the failure that ends the agent is, of those seen so far.
    fn cause(&self) -> Option<usize> {
        self.failures
            .iter()
            .position(|(_, failure)| failure.is_own())
            .or((!self.failures.is_empty()).then_some(0))
    }

    /// Takes the end of one task: a failure is logged and kept.
    fn judge(&mut self, ended: Result<(Id, Result<(), TaskError>), JoinError>) {
        let (id, failure) = match ended {
            Ok((id, Ok(()))) => (id, None),
            Ok((id, Err(error))) => (id, Some(TaskFailure::Failed(error))),
            // Nothing aborts a task but the runtime going away, which counts as an end.
            Err(join) => {
                let id = join.id();
                match join.try_into_panic() {
                    Ok(payload) => (id, Some(TaskFailure::panicked(&*payload))),
                    Err(_) => (id, None),
                }
            }
        };
        let Some(Supervised { name, ending }) = self.supervised.remove(&id) else {
            return;
        };
        let failure = match failure {
            Some(failure) => failure,
            None if self.stopping => {
                tracing::debug!("the {name} task stopped");
                return;
            }
            None if ending == Ending::MayEnd => {
                tracing::info!("the {name} task has finished");
                return;
            }
            None => TaskFailure::Ended,
        };
        tracing::error!("the {name} task {failure}");
        self.failures.push((name, failure));
    }
}

impl Drop for Tasks {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
