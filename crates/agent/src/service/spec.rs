//! What `install-service` registers: [`ServiceSpec`], and how a registered service
//! ([`InstalledService`], as read back from the SCM) differs from it.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

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

/// A service as `install-service` registers it.
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
        };
        let differences = spec().differences(&old);
        assert_eq!(differences.len(), 4, "{differences:?}");
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
