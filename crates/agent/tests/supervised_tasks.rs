//! The supervisor of the agent's tasks with real tokio tasks: a panic ends the run with the
//! task's name and the panic's message; an error and an unexpected end are failures, the end
//! of a task that may end is not; a panic is the cause rather than the neighbours it took down;
//! the stop ends every task and is no failure, but a panic during it is.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agent::AgentError;
use agent::tasks::{Ending, TaskFailure, Tasks};
use tokio::sync::{mpsc, oneshot};

/// A task that runs until the stop and records that it saw it.
fn until_stop(tasks: &mut Tasks, name: &'static str) -> Arc<AtomicBool> {
    let stopped = Arc::new(AtomicBool::new(false));
    let seen = stopped.clone();
    let stop = tasks.stop_token();
    tasks.spawn(name, Ending::AtStop, async move {
        stop.cancelled().await;
        seen.store(true, Ordering::SeqCst);
    });
    stopped
}

/// Panics with `message` (a task's body ending in `panic!` would have the type `!`).
fn panic_with(message: String) {
    panic!("{message}");
}

#[tokio::test]
async fn a_panicking_task_ends_the_run_with_its_name_and_message() {
    let mut tasks = Tasks::new();
    let steady = until_stop(&mut tasks, "steady");
    let (go, went) = oneshot::channel::<u32>();
    tasks.spawn("peer controller", Ending::AtStop, async move {
        let step = went.await.unwrap();
        panic_with(format!("boom at step {step}"));
    });
    go.send(3).unwrap();
    assert_eq!(tasks.failed().await, "peer controller");
    let error = tasks.stop().await.unwrap_err();
    assert!(
        matches!(&error, AgentError::Task { task: "peer controller", failure: TaskFailure::Panicked(m) } if m == "boom at step 3"),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the peer controller task panicked: boom at step 3"
    );
    assert!(steady.load(Ordering::SeqCst), "the other task was stopped");
}

#[tokio::test]
async fn an_error_is_a_failure_with_its_cause() {
    let mut tasks = Tasks::new();
    tasks.spawn("CNI server", Ending::AtStop, async {
        Err::<(), _>(std::io::Error::other("socket gone"))
    });
    assert_eq!(tasks.failed().await, "CNI server");
    let error = tasks.stop().await.unwrap_err();
    assert_eq!(error.to_string(), "the CNI server task failed: socket gone");
}

#[tokio::test(start_paused = true)]
async fn an_end_is_a_failure_unless_the_task_may_end() {
    let mut tasks = Tasks::new();
    tasks.spawn("host supervision", Ending::MayEnd, async {});
    let steady = until_stop(&mut tasks, "steady");
    // The paused clock jumps ahead as soon as every task waits: no failure is coming.
    let waited = tokio::time::timeout(Duration::from_secs(3600), tasks.failed()).await;
    assert!(waited.is_err(), "a task that may end ended: no failure");
    assert!(tasks.stop().await.is_ok());
    assert!(steady.load(Ordering::SeqCst));

    let mut tasks = Tasks::new();
    tasks.spawn("cluster source", Ending::AtStop, async {});
    assert_eq!(tasks.failed().await, "cluster source");
    let error = tasks.stop().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the cluster source task ended while the agent was running"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_panic_is_the_cause_not_the_neighbours_it_took_down() {
    let mut tasks = Tasks::new();
    let (events, mut received) = mpsc::channel::<u32>(1);
    // The fan-out ends once its input closes, which the panicking source's unwinding does.
    tasks.spawn("event fan-out", Ending::AtStop, async move {
        while received.recv().await.is_some() {}
    });
    let (go, went) = oneshot::channel::<()>();
    tasks.spawn("cluster source", Ending::AtStop, async move {
        let _events = events;
        went.await.unwrap();
        panic_with("source broke".into());
    });
    go.send(()).unwrap();
    let failed = tasks.failed().await;
    let error = tasks.stop().await.unwrap_err();
    assert!(
        matches!(&error, AgentError::Task { task: "cluster source", failure: TaskFailure::Panicked(m) } if m == "source broke"),
        "seen first: {failed}; ended with {error:?}"
    );
}

#[tokio::test]
async fn a_stop_ends_every_task_and_is_no_failure() {
    let mut tasks = Tasks::new();
    let (inputs, mut received) = mpsc::channel::<u32>(1);
    let stop = tasks.stop_token();
    tasks.spawn("feed", Ending::AtStop, async move {
        let _inputs = inputs;
        stop.cancelled().await;
    });
    // Ends with its inputs, once the feed has stopped.
    tasks.spawn("controller", Ending::AtStop, async move {
        while received.recv().await.is_some() {}
    });
    let server = until_stop(&mut tasks, "server");
    assert!(tasks.stop().await.is_ok());
    assert!(server.load(Ordering::SeqCst));
}

#[tokio::test]
async fn a_panic_during_the_stop_is_still_a_failure() {
    let mut tasks = Tasks::new();
    let stop = tasks.stop_token();
    tasks.spawn("NetworkPolicy controller", Ending::AtStop, async move {
        stop.cancelled().await;
        panic_with("dropped a lock while stopping".into());
    });
    let error = tasks.stop().await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "the NetworkPolicy controller task panicked: dropped a lock while stopping"
    );
}
