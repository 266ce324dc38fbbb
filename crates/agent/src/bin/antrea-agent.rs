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
//! and `run-service` is what the service control manager runs (see docs/windows-service.md).

use std::process::ExitCode;

use agent::cli::{Cli, RunArgs};
use agent::logging::{self, LogTargets};
use clap::Parser;
use tokio_util::sync::CancellationToken;

fn main() -> ExitCode {
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
    use agent::service::{Installed, ServiceSpec, Uninstalled, dispatcher};

    use super::fail;

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
        }
    }
}
