//! What is registered with the SCM: [`ServiceSpec`] (the agent's service, and `install-ovs`'s
//! Open vSwitch services), and how a registered service ([`InstalledService`], as read back from
//! the SCM) differs from it.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use super::{DESCRIPTION, DISPLAY_NAME, OVS_SERVICES, RUN_SERVICE, SERVICE_NAME, command_line};

/// When the SCM starts a service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartType {
    /// At boot, by the SCM (`SERVICE_AUTO_START`).
    Auto,
    /// On request (`SERVICE_DEMAND_START`).
    Demand,
    /// Never (`SERVICE_DISABLED`).
    Disabled,
    /// A driver's boot or system start.
    Driver,
}

/// One thing the SCM does when the service fails, after a delay (`sc.exe failure ... actions=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureAction {
    /// Restart the service.
    Restart(Duration),
    /// Reboot the computer.
    Reboot(Duration),
    /// Run the registered failure command.
    RunCommand(Duration),
    /// Nothing.
    Nothing(Duration),
}

impl fmt::Display for FailureAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (name, delay) = match self {
            FailureAction::Restart(delay) => ("restart", delay),
            FailureAction::Reboot(delay) => ("reboot", delay),
            FailureAction::RunCommand(delay) => ("run", delay),
            FailureAction::Nothing(delay) => ("none", delay),
        };
        write!(f, "{name}/{}", delay.as_millis())
    }
}

/// What the SCM does when the service's process ends without reporting Stopped: each action in
/// turn (the last one repeats), the failure count starting from zero again after
/// `reset_period` without one. `sc.exe failure <name> reset= <s> actions= <action>/<ms>/...`
/// registers the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureActions {
    /// How long without a failure resets the failure count.
    pub reset_period: Duration,
    /// The actions, first failure first (empty: the SCM does nothing).
    pub actions: Vec<FailureAction>,
}

impl FailureActions {
    /// No action on failure (what the SCM holds for a service created without any).
    pub fn none() -> FailureActions {
        FailureActions {
            reset_period: Duration::ZERO,
            actions: Vec::new(),
        }
    }

    /// Antrea's for the Open vSwitch services: restart at once, three times, the count reset
    /// at once (`reset= 0 actions= restart/0/restart/0/restart/0`).
    pub fn restart_at_once() -> FailureActions {
        FailureActions {
            reset_period: Duration::ZERO,
            actions: vec![FailureAction::Restart(Duration::ZERO); 3],
        }
    }
}

impl fmt::Display for FailureActions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "reset= {}", self.reset_period.as_secs())?;
        if self.actions.is_empty() {
            return f.write_str(" actions= none");
        }
        let actions: Vec<String> = self.actions.iter().map(ToString::to_string).collect();
        write!(f, " actions= {}", actions.join("/"))
    }
}

/// A service as it is registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceSpec {
    /// The service name (the SCM's key).
    pub name: String,
    /// The name shown in the Services console.
    pub display_name: String,
    /// The description shown in the Services console.
    pub description: String,
    /// The executable.
    pub program: PathBuf,
    /// The executable's arguments.
    pub arguments: Vec<OsString>,
    /// When it starts.
    pub start: StartType,
    /// The services that must run first.
    pub dependencies: Vec<String>,
    /// What the SCM does when the process fails.
    pub failure_actions: FailureActions,
}

impl ServiceSpec {
    /// The agent's service named `name`: `program run-service --service-name <name>
    /// <run_arguments>`, started at boot after the Open vSwitch services. The SCM wants display
    /// names unique too: a service not named [`SERVICE_NAME`] shows its name in it.
    pub fn agent(name: &str, program: PathBuf, run_arguments: Vec<OsString>) -> ServiceSpec {
        let mut arguments: Vec<OsString> =
            vec![RUN_SERVICE.into(), "--service-name".into(), name.into()];
        arguments.extend(run_arguments);
        ServiceSpec {
            name: name.to_owned(),
            display_name: if name == SERVICE_NAME {
                DISPLAY_NAME.to_owned()
            } else {
                format!("{DISPLAY_NAME} ({name})")
            },
            description: DESCRIPTION.to_owned(),
            program,
            arguments,
            start: StartType::Auto,
            dependencies: OVS_SERVICES.map(str::to_owned).to_vec(),
            failure_actions: FailureActions::none(),
        }
    }

    /// The program and its arguments, as the registered command line splits into.
    pub fn command_line(&self) -> Vec<String> {
        std::iter::once(self.program.as_os_str())
            .chain(self.arguments.iter().map(OsString::as_os_str))
            .map(|part| part.to_string_lossy().into_owned())
            .collect()
    }

    /// What differs between the registered service and this one (empty: nothing to update).
    /// Dependencies compare as sets of case-insensitive names, as the SCM treats them.
    pub fn differences(&self, installed: &InstalledService) -> Vec<Difference> {
        let mut differences = Vec::new();
        if installed.display_name != self.display_name {
            differences.push(Difference::DisplayName {
                registered: installed.display_name.clone(),
                wanted: self.display_name.clone(),
            });
        }
        if installed.start != self.start {
            differences.push(Difference::Start {
                registered: installed.start,
                wanted: self.start,
            });
        }
        let registered = command_line::split(&installed.command_line);
        let wanted = self.command_line();
        if registered != wanted {
            differences.push(Difference::CommandLine { registered, wanted });
        }
        if names_key(&installed.dependencies) != names_key(&self.dependencies) {
            differences.push(Difference::Dependencies {
                registered: installed.dependencies.clone(),
                wanted: self.dependencies.clone(),
            });
        }
        if let Some(registered) = &installed.failure_actions
            && *registered != self.failure_actions
        {
            differences.push(Difference::FailureActions {
                registered: registered.clone(),
                wanted: self.failure_actions.clone(),
            });
        }
        differences
    }
}

fn names_key(names: &[String]) -> Vec<String> {
    let mut key: Vec<String> = names.iter().map(|name| name.to_lowercase()).collect();
    key.sort();
    key.dedup();
    key
}

/// A registered service's configuration, as read back from the SCM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledService {
    /// The name shown in the Services console.
    pub display_name: String,
    /// When it starts.
    pub start: StartType,
    /// The registered command line (program and arguments, quoted, as one string).
    pub command_line: String,
    /// The services that must run first.
    pub dependencies: Vec<String>,
    /// What the SCM does when the process fails; `None` when the SCM cannot tell (Wine's
    /// `QueryServiceConfig2W` refuses the level), and then they are not compared.
    pub failure_actions: Option<FailureActions>,
}

/// One way a registered service differs from the wanted one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// The display name.
    DisplayName { registered: String, wanted: String },
    /// The start type.
    Start {
        registered: StartType,
        wanted: StartType,
    },
    /// The program or its arguments.
    CommandLine {
        registered: Vec<String>,
        wanted: Vec<String>,
    },
    /// The dependencies.
    Dependencies {
        registered: Vec<String>,
        wanted: Vec<String>,
    },
    /// The failure actions.
    FailureActions {
        registered: FailureActions,
        wanted: FailureActions,
    },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::DisplayName { registered, wanted } => {
                write!(f, "display name {registered:?} -> {wanted:?}")
            }
            Difference::Start { registered, wanted } => {
                write!(f, "start type {registered:?} -> {wanted:?}")
            }
            Difference::CommandLine { registered, wanted } => {
                write!(f, "command line {registered:?} -> {wanted:?}")
            }
            Difference::Dependencies { registered, wanted } => {
                write!(f, "dependencies {registered:?} -> {wanted:?}")
            }
            Difference::FailureActions { registered, wanted } => {
                write!(f, "failure actions \"{registered}\" -> \"{wanted}\"")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> ServiceSpec {
        ServiceSpec::agent(
            "antrea-agent",
            PathBuf::from(r"C:\Program Files\antrea\antrea-agent.exe"),
            vec!["--config".into(), r"C:\etc\antrea\antrea-agent.conf".into()],
        )
    }

    /// The service as `sc.exe`/`CreateService` would hold it after installing `spec()`.
    fn installed() -> InstalledService {
        InstalledService {
            display_name: DISPLAY_NAME.to_owned(),
            start: StartType::Auto,
            command_line: r#""C:\Program Files\antrea\antrea-agent.exe" run-service --service-name antrea-agent --config C:\etc\antrea\antrea-agent.conf"#.to_owned(),
            dependencies: vec!["ovsdb-server".to_owned(), "ovs-vswitchd".to_owned()],
            failure_actions: Some(FailureActions::none()),
        }
    }

    #[test]
    fn the_agent_service_runs_run_service_at_boot_after_ovs() {
        let spec = spec();
        assert_eq!(spec.name, "antrea-agent");
        assert_eq!(spec.display_name, "antrea-rs agent");
        assert_eq!(spec.start, StartType::Auto);
        assert_eq!(spec.dependencies, ["ovsdb-server", "ovs-vswitchd"]);
        assert_eq!(
            spec.command_line(),
            [
                r"C:\Program Files\antrea\antrea-agent.exe",
                "run-service",
                "--service-name",
                "antrea-agent",
                "--config",
                r"C:\etc\antrea\antrea-agent.conf",
            ]
        );
    }

    #[test]
    fn another_service_name_shows_in_the_display_name() {
        let other = ServiceSpec::agent("antrea-agent-2", PathBuf::from(r"C:\a.exe"), vec![]);
        assert_eq!(other.display_name, "antrea-rs agent (antrea-agent-2)");
        assert_eq!(
            other.command_line()[1..4],
            ["run-service", "--service-name", "antrea-agent-2"]
        );
    }

    #[test]
    fn a_service_registered_as_wanted_has_no_differences() {
        assert_eq!(spec().differences(&installed()), []);
        let reordered = InstalledService {
            dependencies: vec!["OVS-VSWITCHD".to_owned(), "ovsdb-server".to_owned()],
            ..installed()
        };
        assert_eq!(spec().differences(&reordered), []);
    }

    #[test]
    fn every_field_that_differs_is_listed() {
        let old = InstalledService {
            display_name: "Antrea Agent".to_owned(),
            start: StartType::Demand,
            command_line: r"C:\antrea\antrea-agent.exe --config C:\old.conf".to_owned(),
            dependencies: vec!["ovs-vswitchd".to_owned()],
            failure_actions: Some(FailureActions::restart_at_once()),
        };
        let differences = spec().differences(&old);
        assert_eq!(differences.len(), 5, "{differences:?}");
        assert_eq!(
            differences[0].to_string(),
            r#"display name "Antrea Agent" -> "antrea-rs agent""#
        );
        assert_eq!(differences[1].to_string(), "start type Demand -> Auto");
        assert!(
            matches!(&differences[2], Difference::CommandLine { registered, .. }
                if registered == &[r"C:\antrea\antrea-agent.exe", "--config", r"C:\old.conf"]),
            "{differences:?}"
        );
        assert!(
            matches!(&differences[3], Difference::Dependencies { registered, .. }
            if registered == &["ovs-vswitchd"])
        );
        let reboot = FailureActions {
            reset_period: Duration::from_secs(86400),
            actions: vec![
                FailureAction::Restart(Duration::from_secs(60)),
                FailureAction::Reboot(Duration::ZERO),
            ],
        };
        assert_eq!(
            reboot.to_string(),
            "reset= 86400 actions= restart/60000/reboot/0"
        );
        assert_eq!(
            differences[4].to_string(),
            r#"failure actions "reset= 0 actions= restart/0/restart/0/restart/0" -> "reset= 0 actions= none""#
        );
    }

    #[test]
    fn failure_actions_the_scm_cannot_report_are_not_compared() {
        let unknown = InstalledService {
            failure_actions: None,
            ..installed()
        };
        assert_eq!(spec().differences(&unknown), []);
    }

    #[test]
    fn a_changed_argument_is_a_command_line_difference() {
        let other = ServiceSpec::agent(
            "antrea-agent",
            PathBuf::from(r"C:\Program Files\antrea\antrea-agent.exe"),
            vec!["--config".into(), r"C:\etc\antrea\other.conf".into()],
        );
        assert!(matches!(
            other.differences(&installed()).as_slice(),
            [Difference::CommandLine { .. }]
        ));
    }
}
