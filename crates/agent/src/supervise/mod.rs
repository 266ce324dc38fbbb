//! What runs beside the controllers to keep the host network right once the Node is up.
//!
//! On Windows two things (docs/windows.md):
//!
//! - the HNS self-healing loop ([`HealLoop`]): a first *settled* pass before the CNI server
//!   listens, then a pass every `hnsReconcileInterval`, each against a snapshot of the Pod
//!   endpoints the agent owns ([`PodEndpoints`]);
//! - after a NIC takeover made by this run, the takeover watchdog ([`TakeoverWatch`]): for
//!   `takeoverWatchdog.duration` it probes the default gateway and the API server, and rolls the
//!   takeover back, ending supervision with [`AgentError::TakeoverRolledBack`], when both stay
//!   silent for `takeoverWatchdog.lostProbes` probes in a row.
//!
//! A Linux host has nothing to supervise. Each host backend says what it needs through
//! [`Supervise`], so the agent has one call site for every platform.

mod endpoints;
mod heal;
mod host;
mod takeover;
mod watch;

use std::sync::Arc;

use hostnet::windows::heal::NetworkRecreator;
use hostnet::windows::watchdog::{Reachability, TakeoverRollback};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub use endpoints::PodEndpoints;
pub use heal::HealLoop;
pub use host::{Supervise, SupervisionPlan, Takeover, WindowsSupervision, windows_supervision};
pub use takeover::{NotRecreated, SharedTakeover};
pub use watch::TakeoverWatch;

use crate::error::AgentError;

/// The parts of supervision a host needs: either may be absent.
#[derive(Debug)]
pub struct Supervision<R, G, A> {
    /// The HNS self-healing loop.
    pub heal: Option<HealLoop<R>>,
    /// The takeover watchdog.
    pub watch: Option<TakeoverWatch<R, G, A>>,
}

impl<R, G, A> Supervision<R, G, A>
where
    R: NetworkRecreator + TakeoverRollback + 'static,
    G: Reachability + 'static,
    A: Reachability + 'static,
{
    /// Runs the settled healing pass now (call it before the CNI server listens: no CNI ADD
    /// can be in flight, so `endpoints` names every endpoint a Pod owns), then runs the healing
    /// loop and the watchdog on a task of their own until `stop` is cancelled.
    pub async fn start<E: PodEndpoints + 'static>(
        self,
        endpoints: Arc<E>,
        stop: CancellationToken,
    ) -> Supervisor {
        let Supervision { mut heal, watch } = self;
        if let Some(heal) = &mut heal {
            heal.settled_pass(&*endpoints).await;
        }
        if heal.is_none() && watch.is_none() {
            return Supervisor::idle();
        }
        let task = tokio::spawn(async move {
            let healing = async {
                if let Some(heal) = heal {
                    heal.run(&*endpoints, stop.cancelled()).await;
                }
                Ok(())
            };
            let watching = async {
                match watch {
                    Some(watch) => watch.run(stop.cancelled()).await,
                    None => Ok(()),
                }
            };
            // A rollback ends both at once: the network the loop would heal is gone.
            tokio::try_join!(healing, watching).map(|_| ())
        });
        Supervisor { task: Some(task) }
    }
}

/// Supervision started by [`Supervision::start`] (or nothing to supervise).
#[derive(Debug)]
pub struct Supervisor {
    task: Option<JoinHandle<Result<(), AgentError>>>,
}

impl Supervisor {
    /// Nothing to supervise.
    pub fn idle() -> Self {
        Supervisor { task: None }
    }

    /// Resolves when supervision fails, with the reason; never when it ends well.
    pub async fn failure(&mut self) -> AgentError {
        if let Some(task) = &mut self.task {
            let outcome = task.await;
            self.task = None;
            if let Err(error) = finished(outcome) {
                return error;
            }
        }
        std::future::pending().await
    }

    /// Waits for the end of supervision (after its stop token was cancelled, or once its parts
    /// ended on their own) and returns how it ended.
    pub async fn join(self) -> Result<(), AgentError> {
        match self.task {
            Some(task) => finished(task.await),
            None => Ok(()),
        }
    }
}

/// The task's result; a panic in it goes on in the caller.
fn finished(
    outcome: Result<Result<(), AgentError>, tokio::task::JoinError>,
) -> Result<(), AgentError> {
    match outcome {
        Ok(result) => result,
        Err(join) => match join.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            // Only a runtime shutting down cancels the task.
            Err(_) => Ok(()),
        },
    }
}
