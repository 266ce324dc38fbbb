//! The statuses the service reports to the SCM, as a state machine: StartPending while the
//! process sets itself up, Running (accepting Stop and Shutdown) while the agent runs,
//! StopPending once a stop was asked for, Stopped with an exit code when the agent returned.

use std::time::Duration;

/// How long the SCM should wait for the service to report Running.
pub const START_WAIT_HINT: Duration = Duration::from_secs(10);
/// How long the SCM should wait for the service to stop: the CNI server finishes the requests in
/// flight first.
pub const STOP_WAIT_HINT: Duration = Duration::from_secs(30);

/// A service state, as the SCM knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// The process is setting itself up.
    StartPending,
    /// The agent runs.
    Running,
    /// A stop was asked for; the agent is finishing.
    StopPending,
    /// The agent returned.
    Stopped,
}

/// Why the service stopped: the exit code reported with [`State::Stopped`]. Success is Win32
/// code 0; the failures are service-specific codes (the Win32 code is then
/// `ERROR_SERVICE_SPECIFIC_ERROR`, 1066), detailed in the log file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServiceExit {
    /// The agent stopped as asked (or ended without error).
    Success,
    /// The agent failed (configuration, Node, bring-up, CNI server...): service-specific code 1.
    AgentFailed,
    /// The process could not set itself up (async runtime): service-specific code 2.
    SetupFailed,
    /// The log file could not be opened: service-specific code 3.
    LogFileFailed,
}

impl ServiceExit {
    /// The service-specific exit code, `None` for success.
    pub fn service_specific_code(self) -> Option<u32> {
        match self {
            ServiceExit::Success => None,
            ServiceExit::AgentFailed => Some(1),
            ServiceExit::SetupFailed => Some(2),
            ServiceExit::LogFileFailed => Some(3),
        }
    }
}

/// One status report to the SCM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The state.
    pub state: State,
    /// Whether Stop and Shutdown controls are accepted (only while Running).
    pub accepts_stop: bool,
    /// Progress of a pending state (1, 2, ...); 0 otherwise.
    pub checkpoint: u32,
    /// How long the SCM should wait for the next report of a pending state; zero otherwise.
    pub wait_hint: Duration,
    /// Why the service stopped (success until Stopped says otherwise).
    pub exit: ServiceExit,
}

/// A control sent by the SCM, as far as the service cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// `SERVICE_CONTROL_STOP`.
    Stop,
    /// `SERVICE_CONTROL_SHUTDOWN` (the system shuts down).
    Shutdown,
    /// `SERVICE_CONTROL_INTERROGATE`: the SCM asks for the current status.
    Interrogate,
    /// Anything else (pause, parameter change, power events...).
    Other,
}

impl Control {
    /// Whether the service handles this control (the others are answered "not implemented").
    pub fn is_handled(self) -> bool {
        !matches!(self, Control::Other)
    }
}

/// What to do about a control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaction {
    /// Report this status and stop the agent.
    Stop(Status),
    /// Nothing to do (already stopping, or interrogate: the SCM keeps the last status).
    Nothing,
}

/// The service's state machine; every transition returns the status to report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifecycle {
    current: Status,
}

impl Lifecycle {
    /// The first report: StartPending, checkpoint 1, no controls accepted.
    pub fn start() -> (Lifecycle, Status) {
        let current = Status {
            state: State::StartPending,
            accepts_stop: false,
            checkpoint: 1,
            wait_hint: START_WAIT_HINT,
            exit: ServiceExit::Success,
        };
        (Lifecycle { current }, current)
    }

    /// The last status reported.
    pub fn current(&self) -> Status {
        self.current
    }

    /// The process is set up and the agent is starting: Running, accepting Stop and Shutdown.
    /// Only from StartPending; later it changes nothing and returns `None`.
    pub fn running(&mut self) -> Option<Status> {
        (self.current.state == State::StartPending).then(|| {
            self.report(Status {
                state: State::Running,
                accepts_stop: true,
                checkpoint: 0,
                wait_hint: Duration::ZERO,
                exit: ServiceExit::Success,
            })
        })
    }

    /// The SCM sent `control`. Stop and Shutdown while Running move to StopPending (once).
    pub fn control(&mut self, control: Control) -> Reaction {
        match control {
            Control::Stop | Control::Shutdown if self.current.state == State::Running => {
                Reaction::Stop(self.report(Status {
                    state: State::StopPending,
                    accepts_stop: false,
                    checkpoint: 1,
                    wait_hint: STOP_WAIT_HINT,
                    exit: ServiceExit::Success,
                }))
            }
            _ => Reaction::Nothing,
        }
    }

    /// The agent returned (or never started): Stopped with `exit`, from any state. A failure
    /// reported while stopping still counts: the exit code tells the SCM what happened.
    pub fn stopped(&mut self, exit: ServiceExit) -> Status {
        self.report(Status {
            state: State::Stopped,
            accepts_stop: false,
            checkpoint: 0,
            wait_hint: Duration::ZERO,
            exit,
        })
    }

    fn report(&mut self, status: Status) -> Status {
        self.current = status;
        status
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_run_stop_reports_the_four_states_in_order() {
        let (mut life, first) = Lifecycle::start();
        assert_eq!(
            (
                first.state,
                first.accepts_stop,
                first.checkpoint,
                first.wait_hint
            ),
            (State::StartPending, false, 1, START_WAIT_HINT)
        );
        let running = life.running().expect("from StartPending");
        assert_eq!(
            (
                running.state,
                running.accepts_stop,
                running.checkpoint,
                running.wait_hint
            ),
            (State::Running, true, 0, Duration::ZERO)
        );
        let Reaction::Stop(stopping) = life.control(Control::Stop) else {
            panic!("Stop while Running stops the agent");
        };
        assert_eq!(
            (
                stopping.state,
                stopping.accepts_stop,
                stopping.checkpoint,
                stopping.wait_hint
            ),
            (State::StopPending, false, 1, STOP_WAIT_HINT)
        );
        let stopped = life.stopped(ServiceExit::Success);
        assert_eq!(
            (
                stopped.state,
                stopped.accepts_stop,
                stopped.exit.service_specific_code()
            ),
            (State::Stopped, false, None)
        );
        assert_eq!(life.current(), stopped);
    }

    #[test]
    fn shutdown_stops_like_stop_and_a_second_request_changes_nothing() {
        let (mut life, _) = Lifecycle::start();
        life.running();
        assert!(matches!(life.control(Control::Shutdown), Reaction::Stop(_)));
        assert_eq!(life.control(Control::Stop), Reaction::Nothing);
        assert_eq!(life.current().state, State::StopPending);
    }

    #[test]
    fn controls_before_running_or_not_stopping_do_nothing() {
        let (mut life, first) = Lifecycle::start();
        assert_eq!(life.control(Control::Stop), Reaction::Nothing);
        life.running();
        assert_eq!(life.control(Control::Interrogate), Reaction::Nothing);
        assert_eq!(life.control(Control::Other), Reaction::Nothing);
        assert_eq!(life.current().state, State::Running);
        assert!(life.running().is_none(), "Running only once");
        assert_ne!(life.current(), first);
    }

    #[test]
    fn a_failure_while_running_stops_with_its_code() {
        let (mut life, _) = Lifecycle::start();
        life.running();
        let stopped = life.stopped(ServiceExit::AgentFailed);
        assert_eq!(stopped.state, State::Stopped);
        assert_eq!(stopped.exit.service_specific_code(), Some(1));
    }

    #[test]
    fn only_other_controls_are_not_handled() {
        assert!(Control::Stop.is_handled());
        assert!(Control::Shutdown.is_handled());
        assert!(Control::Interrogate.is_handled());
        assert!(!Control::Other.is_handled());
    }

    #[test]
    fn exit_codes_are_distinct() {
        let codes = [
            ServiceExit::AgentFailed,
            ServiceExit::SetupFailed,
            ServiceExit::LogFileFailed,
        ]
        .map(|exit| exit.service_specific_code().expect("a failure has a code"));
        assert_eq!(codes, [1, 2, 3]);
    }
}
