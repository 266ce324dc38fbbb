//! The agent's long-running tasks: [`Tasks`] supervises them — a panic, an error or an
//! unexpected end of any of them is logged with the task's name and ends the agent after an
//! orderly stop — and [`Requeue`] retries a controller's failed datapath update with
//! exponential [`Backoff`] until it succeeds, counted in [`RequeueMetrics`].
//!
//! (Not to be confused with [`crate::supervise`], the host network's supervision on Windows,
//! which runs as one of these tasks.)

mod backoff;
mod failure;
#[cfg(all(feature = "fault-injection", unix))]
mod fault;
mod metrics;
mod requeue;
mod supervisor;

pub use backoff::{Backoff, REQUEUE_INITIAL, REQUEUE_MAX};
pub use failure::{TaskError, TaskFailure};
#[cfg(all(feature = "fault-injection", unix))]
pub use fault::PANIC_TASK;
pub use metrics::RequeueMetrics;
pub use requeue::Requeue;
pub use supervisor::{Ending, Outcome, Tasks};
