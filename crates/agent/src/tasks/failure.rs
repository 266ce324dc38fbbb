//! [`TaskFailure`]: how a supervised task failed — it panicked (with the panic's message), it
//! returned an error, or it ended while it should have kept running.

use std::any::Any;
use std::fmt;

/// The error a task returns.
pub type TaskError = Box<dyn std::error::Error + Send + Sync>;

/// How a task failed.
#[derive(Debug)]
pub enum TaskFailure {
    /// The task panicked; the panic's message (or a note that it had none in text).
    Panicked(String),
    /// The task returned an error.
    Failed(TaskError),
    /// The task ended while the agent was running, and it is not one that may end.
    Ended,
}

impl TaskFailure {
    /// The failure of a task that panicked with `payload`.
    pub fn panicked(payload: &(dyn Any + Send)) -> TaskFailure {
        let message = if let Some(text) = payload.downcast_ref::<&str>() {
            (*text).to_owned()
        } else if let Some(text) = payload.downcast_ref::<String>() {
            text.clone()
        } else {
            "(the panic carried no message)".to_owned()
        };
        TaskFailure::Panicked(message)
    }

    /// Whether the failure is the task's own (a panic or an error). A task that merely ended
    /// may have ended because another one failed and closed its inputs.
    pub fn is_own(&self) -> bool {
        !matches!(self, TaskFailure::Ended)
    }
}

impl fmt::Display for TaskFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TaskFailure::Panicked(message) => write!(f, "panicked: {message}"),
            TaskFailure::Failed(error) => write!(f, "failed: {error}"),
            TaskFailure::Ended => f.write_str("ended while the agent was running"),
        }
    }
}
