//! What `install-service` and `uninstall-service` do, decided from what the SCM holds.

use super::lifecycle::State;
use super::spec::{Difference, InstalledService, ServiceSpec};

/// What `install-service` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallPlan {
    /// No such service: create it.
    Create,
    /// The service exists but differs: change its configuration (it keeps running as it is; the
    /// change applies at its next start).
    Update(Vec<Difference>),
    /// The service exists as wanted: nothing to do.
    Unchanged,
}

impl InstallPlan {
    /// The plan for `spec` given the registered service, if any.
    pub fn new(spec: &ServiceSpec, installed: Option<&InstalledService>) -> InstallPlan {
        match installed {
            None => InstallPlan::Create,
            Some(installed) => {
                let differences = spec.differences(installed);
                if differences.is_empty() {
                    InstallPlan::Unchanged
                } else {
                    InstallPlan::Update(differences)
                }
            }
        }
    }
}

/// What installing a service did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Installed {
    /// The service was created.
    Created,
    /// The service existed and was changed in these ways.
    Updated(Vec<Difference>),
    /// The service existed as wanted.
    Unchanged,
}

/// What uninstalling a service did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uninstalled {
    /// The service was deleted; `stopped` says whether it was running and had to be stopped.
    Deleted { stopped: bool },
    /// There was no such service.
    Missing,
}

/// The next step of `uninstall-service`, taken again after each step until [`Gone`](Self::Gone)
/// or [`Delete`](Self::Delete): a running service is stopped first, then deleted once Stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UninstallStep {
    /// No such service (any more).
    Gone,
    /// Send Stop.
    Stop,
    /// Wait for the service to reach a state where it can be stopped or deleted.
    Wait,
    /// Delete the stopped service.
    Delete,
}

impl UninstallStep {
    /// The step for a service in `state` (`None`: not registered); `stop_sent` says whether Stop
    /// was already sent.
    pub fn next(state: Option<State>, stop_sent: bool) -> UninstallStep {
        match state {
            None => UninstallStep::Gone,
            Some(State::Stopped) => UninstallStep::Delete,
            Some(State::Running) if !stop_sent => UninstallStep::Stop,
            Some(State::StartPending | State::Running | State::StopPending) => UninstallStep::Wait,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::service::spec::StartType;

    fn spec() -> ServiceSpec {
        ServiceSpec::agent("antrea-agent", PathBuf::from(r"C:\a.exe"), vec![])
    }

    #[test]
    fn install_creates_updates_or_leaves_alone() {
        assert_eq!(InstallPlan::new(&spec(), None), InstallPlan::Create);
        let same = InstalledService {
            display_name: spec().display_name,
            start: StartType::Auto,
            command_line: r"C:\a.exe run-service --service-name antrea-agent".to_owned(),
            dependencies: spec().dependencies,
            failure_actions: Some(spec().failure_actions),
        };
        assert_eq!(
            InstallPlan::new(&spec(), Some(&same)),
            InstallPlan::Unchanged
        );
        let disabled = InstalledService {
            start: StartType::Disabled,
            ..same
        };
        assert_eq!(
            InstallPlan::new(&spec(), Some(&disabled)),
            InstallPlan::Update(vec![Difference::Start {
                registered: StartType::Disabled,
                wanted: StartType::Auto
            }])
        );
    }

    #[test]
    fn uninstall_stops_once_waits_then_deletes() {
        assert_eq!(UninstallStep::next(None, false), UninstallStep::Gone);
        assert_eq!(
            UninstallStep::next(Some(State::Stopped), false),
            UninstallStep::Delete
        );
        assert_eq!(
            UninstallStep::next(Some(State::Running), false),
            UninstallStep::Stop
        );
        assert_eq!(
            UninstallStep::next(Some(State::Running), true),
            UninstallStep::Wait
        );
        assert_eq!(
            UninstallStep::next(Some(State::StartPending), false),
            UninstallStep::Wait
        );
        assert_eq!(
            UninstallStep::next(Some(State::StopPending), true),
            UninstallStep::Wait
        );
        assert_eq!(
            UninstallStep::next(Some(State::Stopped), true),
            UninstallStep::Delete
        );
    }
}
