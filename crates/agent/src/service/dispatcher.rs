//! The service main run by the SCM (Windows only): `run-service` hands the process to the
//! service control dispatcher, which calls [`service_main`] on its own thread. It reports the
//! statuses [`Lifecycle`] gives, logs to the log file only (a service has no console), runs the
//! agent on a tokio runtime, and turns Stop/Shutdown controls into the agent's shutdown token.

use std::ffi::OsString;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use windows_service::define_windows_service;
use windows_service::service::{
    ServiceControl, ServiceControlAccept, ServiceExitCode, ServiceState, ServiceStatus, ServiceType,
};
use windows_service::service_control_handler::{
    self, ServiceControlHandlerResult, ServiceStatusHandle,
};
use windows_service::service_dispatcher;

use super::lifecycle::{Control, Lifecycle, Reaction, ServiceExit, State, Status};
use crate::cli::RunArgs;
use crate::logging::{self, LogTargets, SERVICE_LOG_FILE};

/// `ERROR_FAILED_SERVICE_CONTROLLER_CONNECT`: the process was not started by the SCM.
const NOT_STARTED_BY_SCM: i32 = 1063;

/// What the service main runs: the service's name and the run options of its command line.
static SERVICE: OnceLock<(String, RunArgs)> = OnceLock::new();

define_windows_service!(ffi_service_main, service_main);

/// `run-service` could not hand the process to the SCM.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error(
        "run-service is what the service control manager runs (register it with install-service); to run in a console, give the run options without a sub-command"
    )]
    NotStartedByScm,
    #[error("the service control dispatcher failed: {0}")]
    Dispatcher(#[source] windows_service::Error),
    #[error("run-service was already started in this process")]
    AlreadyStarted,
}

/// Runs the service named `name` with `run` under the SCM; returns once it has stopped.
pub fn run_service(name: String, run: RunArgs) -> Result<(), DispatchError> {
    SERVICE
        .set((name.clone(), run))
        .map_err(|_| DispatchError::AlreadyStarted)?;
    service_dispatcher::start(&name, ffi_service_main).map_err(|error| match &error {
        windows_service::Error::Winapi(io) if io.raw_os_error() == Some(NOT_STARTED_BY_SCM) => {
            DispatchError::NotStartedByScm
        }
        _ => DispatchError::Dispatcher(error),
    })
}

/// The service's life, on the dispatcher's thread. The arguments of `StartService` are not used:
/// the options come from the registered command line.
fn service_main(_start_arguments: Vec<OsString>) {
    let Some((name, run)) = SERVICE.get() else {
        return;
    };
    let (controls_tx, controls_rx) = mpsc::unbounded_channel();
    let handler = move |control: ServiceControl| {
        let control = control_of(&control);
        if !control.is_handled() {
            return ServiceControlHandlerResult::NotImplemented;
        }
        if control != Control::Interrogate {
            let _ = controls_tx.send(control);
        }
        ServiceControlHandlerResult::NoError
    };
    // Without a status handle nothing can be reported: the SCM sees the process end.
    let Ok(handle) = service_control_handler::register(name, handler) else {
        return;
    };
    let (mut life, first) = Lifecycle::start();
    report(&handle, first);
    let exit = serve(&handle, &mut life, name, run, controls_rx);
    report(&handle, life.stopped(exit));
}

/// Sets up logging and the runtime, reports Running and runs the agent until it returns.
fn serve(
    handle: &ServiceStatusHandle,
    life: &mut Lifecycle,
    name: &str,
    run: &RunArgs,
    mut controls: mpsc::UnboundedReceiver<Control>,
) -> ServiceExit {
    let log_file = run
        .log_file
        .clone()
        .unwrap_or_else(|| SERVICE_LOG_FILE.into());
    if logging::init(&LogTargets {
        console: false,
        file: Some(log_file),
    })
    .is_err()
    {
        return ServiceExit::LogFileFailed;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!("cannot start the async runtime: {error}");
            return ServiceExit::SetupFailed;
        }
    };
    if let Some(running) = life.running() {
        report(handle, running);
    }
    tracing::info!("running as service {name}");
    let shutdown = CancellationToken::new();
    let result = runtime.block_on(async {
        let agent = crate::agent::run(run.options(), shutdown.clone());
        tokio::pin!(agent);
        loop {
            tokio::select! {
                result = &mut agent => return result,
                Some(control) = controls.recv() => {
                    if let Reaction::Stop(stopping) = life.control(control) {
                        tracing::info!("{control:?} from the service control manager: stopping");
                        report(handle, stopping);
                        shutdown.cancel();
                    }
                }
            }
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    match result {
        Ok(()) => ServiceExit::Success,
        Err(error) => {
            tracing::error!("{error}");
            ServiceExit::AgentFailed
        }
    }
}

fn report(handle: &ServiceStatusHandle, status: Status) {
    if let Err(error) = handle.set_service_status(service_status(status)) {
        tracing::warn!(
            "cannot report {:?} to the service control manager: {error}",
            status.state
        );
    }
}

/// The SCM's form of `status`.
fn service_status(status: Status) -> ServiceStatus {
    ServiceStatus {
        service_type: ServiceType::OWN_PROCESS,
        current_state: match status.state {
            State::StartPending => ServiceState::StartPending,
            State::Running => ServiceState::Running,
            State::StopPending => ServiceState::StopPending,
            State::Stopped => ServiceState::Stopped,
        },
        controls_accepted: if status.accepts_stop {
            ServiceControlAccept::STOP | ServiceControlAccept::SHUTDOWN
        } else {
            ServiceControlAccept::empty()
        },
        exit_code: match status.exit.service_specific_code() {
            None => ServiceExitCode::NO_ERROR,
            Some(code) => ServiceExitCode::ServiceSpecific(code),
        },
        checkpoint: status.checkpoint,
        wait_hint: status.wait_hint,
        process_id: None,
    }
}

fn control_of(control: &ServiceControl) -> Control {
    match control {
        ServiceControl::Stop => Control::Stop,
        ServiceControl::Shutdown => Control::Shutdown,
        ServiceControl::Interrogate => Control::Interrogate,
        _ => Control::Other,
    }
}
