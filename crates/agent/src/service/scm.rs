//! The service control manager side of `install-service` and `uninstall-service` (Windows only),
//! through `windows-service`'s service manager: create, read back, update, stop and delete. What
//! to do is decided by [`super::plan`]; this module only talks to the SCM.
//!
//! A service's dependencies are read from the SCM's database in the registry
//! (`HKLM\SYSTEM\CurrentControlSet\Services\<name>\DependOnService`) rather than from
//! `QueryServiceConfigW`: the same data on Windows, and Wine's `QueryServiceConfigW` leaves them
//! out.

use std::ffi::OsString;
use std::ptr;
use std::time::{Duration, Instant};

use windows_service::service::{
    Service, ServiceAccess, ServiceAction, ServiceActionType, ServiceDependency,
    ServiceErrorControl, ServiceFailureActions, ServiceFailureResetPeriod, ServiceInfo,
    ServiceStartType, ServiceState, ServiceType,
};
use windows_service::service_manager::{ServiceManager, ServiceManagerAccess};
use windows_sys::Win32::Foundation::{ERROR_FILE_NOT_FOUND, ERROR_SUCCESS};
use windows_sys::Win32::System::Registry::{HKEY_LOCAL_MACHINE, RRF_RT_REG_MULTI_SZ, RegGetValueW};

use super::lifecycle::{STOP_WAIT_HINT, State};
use super::plan::{InstallPlan, Installed, UninstallStep, Uninstalled};
use super::spec::{FailureAction, FailureActions, InstalledService, ServiceSpec, StartType};

/// `ERROR_SERVICE_DOES_NOT_EXIST`.
const SERVICE_DOES_NOT_EXIST: i32 = 1060;
/// `ERROR_INVALID_LEVEL`: Wine's `QueryServiceConfig2W` answers it for the failure actions.
const INVALID_LEVEL: i32 = 124;
/// How long `uninstall-service` waits for the service to stop: its stop wait hint and as much
/// again.
const STOP_WAIT: Duration = Duration::from_secs(2 * STOP_WAIT_HINT.as_secs());
/// How often the service's state is read while waiting for it to stop.
const STOP_POLL: Duration = Duration::from_millis(200);

/// A failure talking to the service control manager.
#[derive(Debug, thiserror::Error)]
pub enum ScmError {
    #[error("cannot connect to the service control manager: {}", detail(.0))]
    Connect(#[source] windows_service::Error),
    #[error("service {name}: cannot {what}: {}", detail(.source))]
    Service {
        name: String,
        what: &'static str,
        #[source]
        source: windows_service::Error,
    },
    #[error("service {name}: cannot read its dependencies from the registry: {source}")]
    Registry {
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("service {name} did not stop within {waited:?} (last state {state:?})")]
    StopTimeout {
        name: String,
        waited: Duration,
        state: Option<State>,
    },
}

/// A connection to the local SCM.
pub struct Scm {
    manager: ServiceManager,
}

impl std::fmt::Debug for Scm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scm(local computer)")
    }
}

impl Scm {
    /// Connects with the rights to create services (administrators only).
    pub fn connect() -> Result<Scm, ScmError> {
        let access = ServiceManagerAccess::CONNECT | ServiceManagerAccess::CREATE_SERVICE;
        ServiceManager::local_computer(None::<&str>, access)
            .map(|manager| Scm { manager })
            .map_err(ScmError::Connect)
    }

    /// Creates `spec`'s service, or updates it when it differs, or leaves it alone.
    pub fn install(&self, spec: &ServiceSpec) -> Result<Installed, ScmError> {
        let name = spec.name.as_str();
        let info = service_info(spec);
        // Restart failure actions need the right to start the service.
        let access = ServiceAccess::CHANGE_CONFIG | ServiceAccess::START;
        match InstallPlan::new(spec, self.installed(name)?.as_ref()) {
            InstallPlan::Create => {
                let service = self
                    .manager
                    .create_service(&info, access)
                    .map_err(failed(name, "create the service"))?;
                set_description(&service, spec)?;
                set_failure_actions(&service, spec)?;
                Ok(Installed::Created)
            }
            InstallPlan::Update(differences) => {
                let service = self.open(name, access)?;
                service
                    .change_config(&info)
                    .map_err(failed(name, "change the configuration"))?;
                set_description(&service, spec)?;
                set_failure_actions(&service, spec)?;
                Ok(Installed::Updated(differences))
            }
            InstallPlan::Unchanged => Ok(Installed::Unchanged),
        }
    }

    /// Stops the service named `name` if it runs (waiting for Stopped), then deletes it.
    pub fn uninstall(&self, name: &str) -> Result<Uninstalled, ScmError> {
        let access = ServiceAccess::QUERY_STATUS | ServiceAccess::STOP | ServiceAccess::DELETE;
        let service = match self.manager.open_service(name, access) {
            Ok(service) => service,
            Err(error) if is_missing(&error) => return Ok(Uninstalled::Missing),
            Err(source) => return Err(failed(name, "open the service")(source)),
        };
        let start = Instant::now();
        let mut stop_sent = false;
        loop {
            let state = state_of(&service, name)?;
            match UninstallStep::next(state, stop_sent) {
                UninstallStep::Gone => return Ok(Uninstalled::Missing),
                UninstallStep::Delete => {
                    service
                        .delete()
                        .map_err(failed(name, "delete the service"))?;
                    return Ok(Uninstalled::Deleted { stopped: stop_sent });
                }
                UninstallStep::Stop => {
                    tracing::info!("stopping service {name}");
                    service.stop().map_err(failed(name, "stop the service"))?;
                    stop_sent = true;
                }
                UninstallStep::Wait if start.elapsed() >= STOP_WAIT => {
                    return Err(ScmError::StopTimeout {
                        name: name.to_owned(),
                        waited: STOP_WAIT,
                        state,
                    });
                }
                UninstallStep::Wait => std::thread::sleep(STOP_POLL),
            }
        }
    }

    /// The registered configuration of the service named `name`, `None` when there is none.
    pub fn installed(&self, name: &str) -> Result<Option<InstalledService>, ScmError> {
        let service = match self.manager.open_service(name, ServiceAccess::QUERY_CONFIG) {
            Ok(service) => service,
            Err(error) if is_missing(&error) => return Ok(None),
            Err(source) => return Err(failed(name, "open the service")(source)),
        };
        let config = service
            .query_config()
            .map_err(failed(name, "read the configuration"))?;
        let failure_actions = match service.get_failure_actions() {
            Ok(registered) => Some(failure_actions_of(&registered)),
            Err(windows_service::Error::Winapi(io)) if io.raw_os_error() == Some(INVALID_LEVEL) => {
                None
            }
            Err(source) => return Err(failed(name, "read the failure actions")(source)),
        };
        Ok(Some(InstalledService {
            display_name: config.display_name.to_string_lossy().into_owned(),
            start: match config.start_type {
                ServiceStartType::AutoStart => StartType::Auto,
                ServiceStartType::OnDemand => StartType::Demand,
                ServiceStartType::Disabled => StartType::Disabled,
                ServiceStartType::BootStart | ServiceStartType::SystemStart => StartType::Driver,
            },
            command_line: config.executable_path.to_string_lossy().into_owned(),
            dependencies: registered_dependencies(name)?,
            failure_actions,
        }))
    }

    /// The state of the service named `name`, `None` when there is no such service.
    pub fn state(&self, name: &str) -> Result<Option<State>, ScmError> {
        match self.manager.open_service(name, ServiceAccess::QUERY_STATUS) {
            Ok(service) => state_of(&service, name),
            Err(error) if is_missing(&error) => Ok(None),
            Err(source) => Err(failed(name, "open the service")(source)),
        }
    }

    fn open(&self, name: &str, access: ServiceAccess) -> Result<Service, ScmError> {
        self.manager
            .open_service(name, access)
            .map_err(failed(name, "open the service"))
    }
}

/// `windows-service`'s description of `spec`: an own-process service running as LocalSystem.
fn service_info(spec: &ServiceSpec) -> ServiceInfo {
    ServiceInfo {
        name: spec.name.clone().into(),
        display_name: spec.display_name.clone().into(),
        service_type: ServiceType::OWN_PROCESS,
        start_type: match spec.start {
            StartType::Auto => ServiceStartType::AutoStart,
            StartType::Demand => ServiceStartType::OnDemand,
            StartType::Disabled => ServiceStartType::Disabled,
            StartType::Driver => ServiceStartType::SystemStart,
        },
        error_control: ServiceErrorControl::Normal,
        executable_path: spec.program.clone(),
        launch_arguments: spec.arguments.clone(),
        dependencies: spec
            .dependencies
            .iter()
            .map(|name| ServiceDependency::Service(OsString::from(name)))
            .collect(),
        account_name: None,
        account_password: None,
    }
}

fn set_description(service: &Service, spec: &ServiceSpec) -> Result<(), ScmError> {
    service
        .set_description(&spec.description)
        .map_err(failed(&spec.name, "set the description"))
}

/// Registers `spec`'s failure actions (`ChangeServiceConfig2W` with
/// `SERVICE_CONFIG_FAILURE_ACTIONS`), replacing any.
fn set_failure_actions(service: &Service, spec: &ServiceSpec) -> Result<(), ScmError> {
    let wanted = &spec.failure_actions;
    let actions = wanted
        .actions
        .iter()
        .map(|action| {
            let (action_type, delay) = match *action {
                FailureAction::Restart(delay) => (ServiceActionType::Restart, delay),
                FailureAction::Reboot(delay) => (ServiceActionType::Reboot, delay),
                FailureAction::RunCommand(delay) => (ServiceActionType::RunCommand, delay),
                FailureAction::Nothing(delay) => (ServiceActionType::None, delay),
            };
            ServiceAction { action_type, delay }
        })
        .collect();
    service
        .update_failure_actions(ServiceFailureActions {
            reset_period: ServiceFailureResetPeriod::After(wanted.reset_period),
            reboot_msg: None,
            command: None,
            actions: Some(actions),
        })
        .map_err(failed(&spec.name, "set the failure actions"))
}

/// The registered failure actions as [`FailureActions`] (a reset period of "never" as the
/// longest one).
fn failure_actions_of(registered: &ServiceFailureActions) -> FailureActions {
    FailureActions {
        reset_period: match registered.reset_period {
            ServiceFailureResetPeriod::Never => Duration::MAX,
            ServiceFailureResetPeriod::After(period) => period,
        },
        actions: registered
            .actions
            .iter()
            .flatten()
            .map(|action| match action.action_type {
                ServiceActionType::Restart => FailureAction::Restart(action.delay),
                ServiceActionType::Reboot => FailureAction::Reboot(action.delay),
                ServiceActionType::RunCommand => FailureAction::RunCommand(action.delay),
                ServiceActionType::None => FailureAction::Nothing(action.delay),
            })
            .collect(),
    }
}

/// The service's state, `None` when it was deleted meanwhile.
fn state_of(service: &Service, name: &str) -> Result<Option<State>, ScmError> {
    match service.query_status() {
        Ok(status) => Ok(Some(match status.current_state {
            ServiceState::Stopped => State::Stopped,
            ServiceState::StartPending
            | ServiceState::PausePending
            | ServiceState::ContinuePending => State::StartPending,
            ServiceState::Running | ServiceState::Paused => State::Running,
            ServiceState::StopPending => State::StopPending,
        })),
        Err(error) if is_missing(&error) => Ok(None),
        Err(source) => Err(failed(name, "read the status")(source)),
    }
}

/// The `DependOnService` value of the service named `name` (none when the value is absent).
fn registered_dependencies(name: &str) -> Result<Vec<String>, ScmError> {
    let key = wide(&format!(r"SYSTEM\CurrentControlSet\Services\{name}"));
    let value = wide("DependOnService");
    let error = |status: u32| ScmError::Registry {
        name: name.to_owned(),
        source: std::io::Error::from_raw_os_error(status as i32),
    };
    let size = match read_multi_sz(&key, &value, &mut []) {
        Ok(size) => size,
        Err(ERROR_FILE_NOT_FOUND) => return Ok(Vec::new()),
        Err(status) => return Err(error(status)),
    };
    let mut buffer = vec![0u16; size.div_ceil(2)];
    let size = read_multi_sz(&key, &value, &mut buffer).map_err(error)?;
    buffer.truncate(size / 2);
    Ok(buffer
        .split(|&unit| unit == 0)
        .filter(|name| !name.is_empty())
        .map(String::from_utf16_lossy)
        .collect())
}

/// Reads the `REG_MULTI_SZ` value `value` of `HKLM\<key>` (NUL-terminated UTF-16) into
/// `buffer`; an empty buffer asks for the size only. Returns the value's size in bytes, or the
/// Win32 error.
fn read_multi_sz(key: &[u16], value: &[u16], buffer: &mut [u16]) -> Result<usize, u32> {
    let mut size = u32::try_from(std::mem::size_of_val(buffer)).unwrap_or(u32::MAX);
    let data = if buffer.is_empty() {
        ptr::null_mut()
    } else {
        buffer.as_mut_ptr().cast()
    };
    // SAFETY: `key` and `value` are NUL-terminated UTF-16 strings alive for the call; `data` is
    // null (size query) or `buffer`, writable for `size` bytes; no type is asked for.
    let status = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            value.as_ptr(),
            RRF_RT_REG_MULTI_SZ,
            ptr::null_mut(),
            data,
            &mut size,
        )
    };
    match status {
        ERROR_SUCCESS => Ok(size as usize),
        other => Err(other),
    }
}

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(std::iter::once(0)).collect()
}

/// `windows-service`'s error with the operating system's message, which its own message lacks.
fn detail(error: &windows_service::Error) -> String {
    match error {
        windows_service::Error::Winapi(io) => io.to_string(),
        other => other.to_string(),
    }
}

fn is_missing(error: &windows_service::Error) -> bool {
    matches!(error, windows_service::Error::Winapi(io) if io.raw_os_error() == Some(SERVICE_DOES_NOT_EXIST))
}

fn failed(name: &str, what: &'static str) -> impl FnOnce(windows_service::Error) -> ScmError {
    let name = name.to_owned();
    move |source| ScmError::Service { name, what, source }
}
