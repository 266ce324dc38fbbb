//! `antrea-agent`: the antrea-rs node agent.
//!
//! `antrea-agent --config <antrea-agent.conf> [--kubeconfig <file> | --cluster-dir <dir>]`: the
//! cluster comes from the Kubernetes API (the kubeconfig given, else the configuration's
//! `clientConnection.kubeconfig`, else the in-cluster service account) or, in the lab, from a
//! directory of YAML files. The Node's name comes from `NODE_NAME` (else the host name). Logs go to stderr (`RUST_LOG` filters them, default
//! `info`). A failure is one line on stderr and exit status 1.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use agent::agent::{ClusterChoice, Options, run};
use clap::Parser;

#[derive(Debug, Parser)]
#[command(name = "antrea-agent", about = "The antrea-rs node agent", version)]
struct Args {
    /// The agent configuration file (antrea-agent.conf).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// The kubeconfig of the Kubernetes API server (default: `clientConnection.kubeconfig`,
    /// else the in-cluster service account).
    #[arg(long, value_name = "FILE", conflicts_with = "cluster_dir")]
    kubeconfig: Option<PathBuf>,
    /// A directory of Node and Pod YAML files standing in for the Kubernetes API (the lab).
    #[arg(long, value_name = "DIR")]
    cluster_dir: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("antrea-agent: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let cluster = match args.cluster_dir {
        Some(dir) => ClusterChoice::Directory(dir),
        None => ClusterChoice::Kubernetes {
            kubeconfig: args.kubeconfig,
        },
    };
    match runtime.block_on(run(Options {
        config: args.config,
        cluster,
    })) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("antrea-agent: {error}");
            ExitCode::FAILURE
        }
    }
}
