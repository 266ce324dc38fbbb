//! The `antrea-agent` command line: run options ([`RunArgs`]) for a run in the console, and on
//! Windows the sub-commands (`Command`) that register the agent with the service control
//! manager and run it under it, and the Node's lifecycle (`install-ovs`, `prepare-node`,
//! `uninstall`, see [`crate::node_setup`]).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser};

use crate::agent::{ClusterChoice, Options};
use crate::logging::SERVICE_LOG_FILE;

/// `antrea-agent [RUN OPTIONS]` or, on Windows, `antrea-agent <install-service | uninstall-service
/// | run-service> ...`.
#[derive(Debug, Parser)]
#[command(
    name = "antrea-agent",
    about = "The antrea-rs node agent",
    version = buildinfo::version(),
    args_conflicts_with_subcommands = true,
    arg_required_else_help = true
)]
pub struct Cli {
    /// A service sub-command (Windows).
    #[cfg(windows)]
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Run in the console until SIGTERM/SIGINT (Ctrl-C).
    #[command(flatten)]
    pub run: Option<RunArgs>,
}

/// The options of a run of the agent.
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct RunArgs {
    /// The agent configuration file (antrea-agent.conf).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// The kubeconfig of the Kubernetes API server (default: `clientConnection.kubeconfig`,
    /// else the in-cluster service account).
    #[arg(long, value_name = "FILE", conflicts_with = "cluster_dir")]
    pub kubeconfig: Option<PathBuf>,
    /// A directory of Node and Pod YAML files standing in for the Kubernetes API (the lab).
    #[arg(long, value_name = "DIR")]
    pub cluster_dir: Option<PathBuf>,
    /// Also append the logs to this file (created with its directory; never rotated). The
    /// service logs only there, by default to C:\var\log\antrea\antrea-agent.log.
    #[arg(long, value_name = "FILE")]
    pub log_file: Option<PathBuf>,
}

impl RunArgs {
    /// The options [`crate::agent::run`] takes.
    pub fn options(&self) -> Options {
        let cluster = match &self.cluster_dir {
            Some(dir) => ClusterChoice::Directory(dir.clone()),
            None => ClusterChoice::Kubernetes {
                kubeconfig: self.kubeconfig.clone(),
            },
        };
        Options {
            config: self.config.clone(),
            cluster,
            log_file: self.log_file.clone(),
        }
    }

    /// These options as the service's arguments: paths made absolute (the SCM starts services in
    /// the system directory) and the log file spelled out (the service's default when not given),
    /// so that the registered command line says where everything is.
    pub fn service_arguments(&self) -> std::io::Result<Vec<OsString>> {
        let log_file = match &self.log_file {
            Some(path) => std::path::absolute(path)?,
            None => PathBuf::from(SERVICE_LOG_FILE),
        };
        let mut arguments: Vec<OsString> =
            vec!["--config".into(), std::path::absolute(&self.config)?.into()];
        if let Some(kubeconfig) = &self.kubeconfig {
            arguments.extend([
                "--kubeconfig".into(),
                std::path::absolute(kubeconfig)?.into(),
            ]);
        }
        if let Some(dir) = &self.cluster_dir {
            arguments.extend(["--cluster-dir".into(), std::path::absolute(dir)?.into()]);
        }
        arguments.extend(["--log-file".into(), log_file.into()]);
        Ok(arguments)
    }
}

/// The Windows service sub-commands.
#[cfg(windows)]
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Register the agent as an auto-start service running `run-service` with these run options,
    /// after the ovsdb-server and ovs-vswitchd services; update it if it differs.
    InstallService {
        #[command(flatten)]
        service: ServiceNameArg,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Stop the service if it runs, then delete it; succeeds when there is no such service.
    UninstallService {
        #[command(flatten)]
        service: ServiceNameArg,
    },
    /// Run under the service control manager (the command line `install-service` registers).
    RunService {
        #[command(flatten)]
        service: ServiceNameArg,
        #[command(flatten)]
        run: RunArgs,
    },
    /// Register the ovsdb-server and ovs-vswitchd services (Open vSwitch already unpacked in
    /// the install directory) and create the OVS database when missing.
    InstallOvs {
        #[command(flatten)]
        ovs: OvsDirArg,
    },
    /// Check the Node's prerequisites (each missing one is printed with its fix, and the exit
    /// status is 1), write the CNI conflist, install the CNI plugin and open the firewall for
    /// the Pod CIDR and the tunnel port.
    PrepareNode {
        /// The agent configuration file (for the tunnel type and port).
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// The Node's Pod CIDR (default: the agent opens the firewall for it at bring-up).
        #[arg(long, value_name = "CIDR")]
        pod_cidr: Option<ipnet::Ipv4Net>,
        /// The CNI plugin to install (default: antrea.exe beside this program).
        #[arg(long, value_name = "FILE")]
        cni_plugin: Option<PathBuf>,
        #[command(flatten)]
        ovs: OvsDirArg,
    },
    /// Undo install-service, install-ovs, prepare-node and the agent's host network: services,
    /// HNS network (the NIC gets its configuration back), firewall rules and files.
    #[command(alias = "reset-node")]
    Uninstall {
        #[command(flatten)]
        ovs: OvsDirArg,
    },
}

/// The Open vSwitch install directory.
#[cfg(windows)]
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct OvsDirArg {
    /// The Open vSwitch install directory.
    #[arg(
        long = "ovs-dir",
        value_name = "DIR",
        default_value = r"C:\openvswitch"
    )]
    pub dir: String,
}

#[cfg(windows)]
impl OvsDirArg {
    /// The Node's paths with this OVS directory.
    pub fn paths(&self) -> crate::node_setup::NodePaths {
        crate::node_setup::NodePaths {
            ovs_dir: self.dir.clone(),
            ..crate::node_setup::NodePaths::default()
        }
    }
}

/// The service's name.
#[cfg(windows)]
#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct ServiceNameArg {
    /// The service name.
    #[arg(long = "service-name", value_name = "NAME", default_value = crate::service::SERVICE_NAME)]
    pub name: String,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("antrea-agent").chain(args.iter().copied()))
    }

    #[test]
    fn run_options_without_a_sub_command_run_in_the_console() {
        let cli = parse(&["--config", "a.conf", "--cluster-dir", "c"]).unwrap();
        assert_eq!(
            cli.run,
            Some(RunArgs {
                config: "a.conf".into(),
                kubeconfig: None,
                cluster_dir: Some("c".into()),
                log_file: None,
            })
        );
    }

    #[test]
    fn a_missing_run_option_is_a_usage_error() {
        let error = parse(&["--cluster-dir", "c"]).unwrap_err();
        assert_eq!(
            error.kind(),
            clap::error::ErrorKind::MissingRequiredArgument
        );
        assert!(error.to_string().contains("--config"), "{error}");
        let help = parse(&[]).unwrap_err();
        assert_eq!(
            help.kind(),
            clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        );
    }

    #[test]
    fn service_arguments_are_absolute_and_parse_back_to_the_same_run() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunArgs {
            config: dir.path().join("antrea-agent.conf"),
            kubeconfig: Some(dir.path().join("kubeconfig")),
            cluster_dir: None,
            log_file: Some(dir.path().join("agent.log")),
        };
        let arguments = run.service_arguments().unwrap();
        let mut line: Vec<OsString> = vec!["antrea-agent".into()];
        line.extend(arguments);
        let parsed = Cli::try_parse_from(line).unwrap();
        assert_eq!(parsed.run, Some(run));
    }

    #[test]
    fn service_arguments_make_relative_paths_absolute_and_name_the_default_log_file() {
        let run = RunArgs {
            config: "antrea-agent.conf".into(),
            kubeconfig: None,
            cluster_dir: Some("cluster".into()),
            log_file: None,
        };
        let cwd = std::env::current_dir().unwrap();
        let arguments = run.service_arguments().unwrap();
        assert_eq!(
            arguments,
            [
                OsString::from("--config"),
                cwd.join("antrea-agent.conf").into(),
                "--cluster-dir".into(),
                cwd.join("cluster").into(),
                "--log-file".into(),
                SERVICE_LOG_FILE.into(),
            ]
        );
    }

    #[cfg(windows)]
    #[test]
    fn service_sub_commands_take_the_run_options_and_a_service_name() {
        let cli = parse(&[
            "install-service",
            "--config",
            "a.conf",
            "--cluster-dir",
            "c",
        ])
        .unwrap();
        let Some(Command::InstallService { service, run }) = cli.command else {
            panic!("install-service: {cli:?}");
        };
        assert_eq!(service.name, "antrea-agent");
        assert_eq!(run.config, PathBuf::from("a.conf"));
        let cli = parse(&["uninstall-service", "--service-name", "x"]).unwrap();
        assert!(
            matches!(cli.command, Some(Command::UninstallService { service }) if service.name == "x")
        );
        let mixed = parse(&["--config", "a.conf", "--cluster-dir", "c", "run-service"]);
        assert!(mixed.is_err(), "run options belong after the sub-command");
    }

    #[cfg(windows)]
    #[test]
    fn node_setup_sub_commands() {
        let Some(Command::InstallOvs { ovs }) = parse(&["install-ovs"]).unwrap().command else {
            panic!("install-ovs");
        };
        assert_eq!(ovs.paths(), crate::node_setup::NodePaths::default());
        let cli = parse(&[
            "prepare-node",
            "--config",
            "a.conf",
            "--pod-cidr",
            "10.244.1.0/24",
            "--ovs-dir",
            r"D:\ovs",
        ])
        .unwrap();
        let Some(Command::PrepareNode {
            config,
            pod_cidr,
            cni_plugin,
            ovs,
        }) = cli.command
        else {
            panic!("prepare-node: {cli:?}");
        };
        assert_eq!(config, PathBuf::from("a.conf"));
        assert_eq!(pod_cidr, Some("10.244.1.0/24".parse().unwrap()));
        assert_eq!(cni_plugin, None);
        assert_eq!(ovs.paths().ovs_db(), r"D:\ovs\etc\openvswitch\conf.db");
        for name in ["uninstall", "reset-node"] {
            assert!(matches!(
                parse(&[name]).unwrap().command,
                Some(Command::Uninstall { .. })
            ));
        }
    }
}
