//! `antrea-fake-apiserver`: the in-process fake Kubernetes API server as a long-lived process,
//! for agents in other processes and network namespaces (the lab's `--api fake`). It serves
//! plain HTTP on `--listen` (and, on Unix, on `--unix-socket`), writes a kubeconfig for the TCP
//! address once both listen (its appearance is the readiness signal), logs every request with
//! its peer, and runs until it is killed. Objects live in memory only. It runs the EndpointSlice
//! controller (as kube-controller-manager would) unless `--endpointslice-controller=false`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use fakeapi::FakeApiServer;
use tracing_subscriber::EnvFilter;

/// A fake Kubernetes API server (plain HTTP, no authentication, state in memory).
#[derive(Debug, Parser)]
#[command(name = "antrea-fake-apiserver", version)]
struct Cli {
    /// The TCP address to serve on, e.g. 10.10.0.2:6443 (the kubeconfig points at it, so not a
    /// wildcard address).
    #[arg(long)]
    listen: SocketAddr,
    /// Where to write the kubeconfig for `--listen` (written atomically once serving).
    #[arg(long, value_name = "PATH")]
    kubeconfig_out: PathBuf,
    /// Also serve on a Unix socket created at this path (it must not exist).
    #[cfg(unix)]
    #[arg(long, value_name = "PATH")]
    unix_socket: Option<PathBuf>,
    /// Keep the EndpointSlices of every Service with a selector, as kube-controller-manager's
    /// EndpointSlice controller does (`false`: slices are only what clients write).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
    endpointslice_controller: bool,
}

/// Writes `text` to `path` through a temporary file and a rename, so a reader never sees half.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

async fn run(cli: Cli) -> Result<(), String> {
    let server = FakeApiServer::builder().record_requests(false).build();
    if cli.endpointslice_controller {
        server
            .start_endpointslice_controller()
            .map_err(|e| e.to_string())?;
    }
    let tcp = server
        .serve_tcp_on(cli.listen)
        .await
        .map_err(|e| format!("listening on {}: {e}", cli.listen))?;
    #[cfg(unix)]
    let _unix = match &cli.unix_socket {
        Some(path) => Some(
            server
                .serve_unix(path)
                .await
                .map_err(|e| format!("listening on {}: {e}", path.display()))?,
        ),
        None => None,
    };
    write_atomically(&cli.kubeconfig_out, &tcp.kubeconfig()).map_err(|e| {
        format!(
            "writing the kubeconfig {}: {e}",
            cli.kubeconfig_out.display()
        )
    })?;
    tracing::info!(
        url = %tcp.url(),
        kubeconfig = %cli.kubeconfig_out.display(),
        "serving"
    );
    std::future::pending::<()>().await;
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("info,fakeapi=debug")),
        )
        .with_ansi(false)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("antrea-fake-apiserver: cannot start the Tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("antrea-fake-apiserver: {e}");
            ExitCode::FAILURE
        }
    }
}
