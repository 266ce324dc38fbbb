//! `antrea-agent`: the antrea-rs node agent.
//!
//! `antrea-agent --config <antrea-agent.conf> [--kubeconfig <file> | --cluster-dir <dir>]
//! [--log-file <file>]` runs in the console until SIGTERM/SIGINT. The cluster comes from the
//! Kubernetes API (the kubeconfig given, else the configuration's `clientConnection.kubeconfig`,
//! else the in-cluster service account) or, in the lab, from a directory of YAML files. The
//! Node's name comes from `NODE_NAME` (else the host name). Logs go to stderr and, with
//! `--log-file`, to that file too (`RUST_LOG` filters them, default `info`). A failure is logged,
//! then one line on stderr, and exit status 1.
//!
//! On Windows, `install-service` / `uninstall-service` register and remove the agent's service,
//! and `run-service` is what the service control manager runs (see docs/windows-service.md);
//! `install-ovs`, `prepare-node` and `uninstall` (alias `reset-node`) set the Node up and take
//! it down again (see docs/windows-node-setup.md).

use std::process::ExitCode;

use agent::cli::{Cli, RunArgs};
use agent::logging::{self, LogTargets};
use clap::Parser;
use tokio_util::sync::CancellationToken;

fn main() -> ExitCode {
    agent::heap::use_one_arena();
    let cli = Cli::parse();
    #[cfg(windows)]
    if let Some(command) = cli.command {
        return windows::run_command(command);
    }
    match cli.run {
        Some(run) => run_in_console(&run),
        None => fail("no run options"),
    }
}

/// Runs the agent until SIGTERM/SIGINT.
fn run_in_console(run: &RunArgs) -> ExitCode {
    if let Err(error) = logging::init(&LogTargets {
        console: true,
        file: run.log_file.clone(),
    }) {
        return fail(error);
    }
    if let Some(arenas) = agent::heap::arena_count() {
        tracing::info!("heap: {arenas} allocator arena(s)");
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(format!("cannot start the async runtime: {error}")),
    };
    let shutdown = CancellationToken::new();
    let on_signal = shutdown.clone();
    runtime.spawn(async move {
        agent::agent::stop_signal().await;
        on_signal.cancel();
    });
    match runtime.block_on(agent::agent::run(run.options(), shutdown)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            fail(error)
        }
    }
}

/// The one line on stderr and exit status 1.
fn fail(error: impl std::fmt::Display) -> ExitCode {
    eprintln!("antrea-agent: {error}");
    ExitCode::FAILURE
}

#[cfg(windows)]
mod windows {
    //! The service sub-commands.

    use std::process::ExitCode;

    use agent::cli::Command;
    use agent::service::scm::Scm;
    use agent::service::{Installed, Uninstalled};
    use agent::service::{ServiceSpec, dispatcher};

    use super::{fail, node_setup};

    pub fn run_command(command: Command) -> ExitCode {
        match command {
            Command::InstallService { service, run } => {
                let program = match std::env::current_exe() {
                    Ok(program) => program,
                    Err(error) => return fail(format!("cannot find this program's path: {error}")),
                };
                let arguments = match run.service_arguments() {
                    Ok(arguments) => arguments,
                    Err(error) => return fail(format!("cannot make the paths absolute: {error}")),
                };
                let spec = ServiceSpec::agent(&service.name, program, arguments);
                match Scm::connect().and_then(|scm| scm.install(&spec)) {
                    Ok(Installed::Created) => println!("service {} created", spec.name),
                    Ok(Installed::Unchanged) => {
                        println!("service {} already installed as wanted", spec.name)
                    }
                    Ok(Installed::Updated(differences)) => {
                        println!("service {} updated:", spec.name);
                        for difference in differences {
                            println!("  {difference}");
                        }
                        println!("  (a running service uses the new configuration once restarted)");
                    }
                    Err(error) => return fail(error),
                }
                ExitCode::SUCCESS
            }
            Command::UninstallService { service } => {
                match Scm::connect().and_then(|scm| scm.uninstall(&service.name)) {
                    Ok(Uninstalled::Deleted { stopped: true }) => {
                        println!("service {} stopped and deleted", service.name)
                    }
                    Ok(Uninstalled::Deleted { stopped: false }) => {
                        println!("service {} deleted", service.name)
                    }
                    Ok(Uninstalled::Missing) => {
                        println!("service {} is not installed; nothing to do", service.name)
                    }
                    Err(error) => return fail(error),
                }
                ExitCode::SUCCESS
            }
            Command::RunService { service, run } => {
                match dispatcher::run_service(service.name, run) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(error) => fail(error),
                }
            }
            Command::InstallOvs { ovs } => node_setup::install_ovs(&ovs.paths()),
            Command::PrepareNode {
                config,
                pod_cidr,
                cni_plugin,
                ovs,
            } => node_setup::prepare_node(&config, pod_cidr, cni_plugin, &ovs.paths()),
            Command::Uninstall { ovs } => node_setup::uninstall(&ovs.paths()),
        }
    }
}

#[cfg(windows)]
mod node_setup {
    //! `install-ovs`, `prepare-node` and `uninstall` on this host: the SCM, WMI, the firewall
    //! COM API, HNS and IP Helper, and the files where their paths say.

    use std::path::{Path, PathBuf};
    use std::process::ExitCode;
    use std::sync::Arc;

    use agent::config::{AgentConfig, Platform};
    use agent::node_setup::prepare::{PrepareHost, PrepareSettings};
    use agent::node_setup::uninstall::UninstallHost;
    use agent::node_setup::{HostFiles, NodePaths, Report, SetupError, ovs, prepare, uninstall};
    use agent::service::scm::Scm;

    use super::fail;

    /// Prints the report, then the failure if any.
    fn finish(report: &Report, result: Result<(), SetupError>) -> ExitCode {
        print!("{report}");
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => fail(error),
        }
    }

    fn scm() -> Result<Scm, SetupError> {
        Scm::connect().map_err(SetupError::of("connect to the service control manager"))
    }

    pub fn install_ovs(paths: &NodePaths) -> ExitCode {
        let mut report = Report::default();
        let result =
            scm().and_then(|scm| ovs::install_ovs(&scm, &HostFiles::native(), paths, &mut report));
        finish(&report, result)
    }

    pub fn prepare_node(
        config: &Path,
        pod_cidr: Option<ipnet::Ipv4Net>,
        cni_plugin: Option<PathBuf>,
        paths: &NodePaths,
    ) -> ExitCode {
        let config = match AgentConfig::load(config, Platform::Windows) {
            Ok(loaded) => loaded.config,
            Err(error) => return fail(error),
        };
        let cni_plugin = match cni_plugin {
            Some(path) => path,
            None => match std::env::current_exe() {
                Ok(exe) => exe.with_file_name("antrea.exe"),
                Err(error) => return fail(format!("cannot find this program's path: {error}")),
            },
        };
        let settings = PrepareSettings {
            pod_cidr,
            tunnel_port: config
                .traffic_encap_mode
                .uses_tunnel()
                .then(|| config.tunnel_destination_port()),
            cni_plugin,
        };
        let mut report = Report::default();
        let result = scm().and_then(|scm| {
            let host = PrepareHost {
                services: &scm,
                features: &winos::features::WmiFeatures::new(),
                firewall: &winos::ComFirewall::new(),
                files: &HostFiles::native(),
            };
            prepare::prepare_node(&host, paths, &settings, &mut report)
        });
        let missing = report.missing().count();
        match result {
            Ok(()) if missing > 0 => finish(
                &report,
                Err(SetupError::new(
                    "prepare-node",
                    format!(
                        "{missing} prerequisite(s) missing; fix them and run prepare-node again"
                    ),
                )),
            ),
            result => finish(&report, result),
        }
    }

    pub fn uninstall(paths: &NodePaths) -> ExitCode {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => return fail(format!("cannot start the async runtime: {error}")),
        };
        let hcn = match hcn::HcnClient::new() {
            Ok(hcn) => hcn,
            Err(error) => {
                return fail(format!("cannot load the Host Compute Network API: {error}"));
            }
        };
        let firewall = Arc::new(winos::ComFirewall::new());
        // The Pod CIDR is only used to create the HNS network, which uninstall never does.
        let settings = hostnet::windows::WindowsSettings::new(ipnet::Ipv4Net::default());
        let network = hostnet::windows::WindowsHost::new(
            Arc::new(hcn),
            Arc::new(winos::NativeIpHelper::new()),
            Arc::new(winos::WmiNetNat::new()),
            firewall.clone(),
            settings,
        );
        let mut report = Report::default();
        let result = scm().and_then(|scm| {
            let host = UninstallHost {
                services: &scm,
                network: &network,
                firewall: firewall.as_ref(),
                files: &HostFiles::native(),
            };
            runtime.block_on(uninstall::uninstall(&host, paths, &mut report))
        });
        finish(&report, result)
    }
}
