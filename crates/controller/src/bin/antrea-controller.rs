//! `antrea-controller`: NetworkPolicy computed once for the cluster.
//!
//! `antrea-controller [--kubeconfig <file>] [--lease-namespace kube-system] [--lease-name
//! antrea-controller] [--identity <name>] [--lease-duration-seconds 15] [--retry-seconds 2]
//! [--bind-address 0.0.0.0:10349] [--tls-cert-file <pem> --tls-key-file <pem>] [--tls-san
//! <name>]...` runs one replica: it waits for the Lease, then watches Pods, Namespaces and
//! NetworkPolicies, computes each policy's span and serves each agent its Node's span (agents'
//! tokens checked by TokenReview). Logs go to stderr (`RUST_LOG` filters them, default `info`).
//! Losing the Lease, or any failure, is logged and ends the process with status 1.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use controller::leader::LeaseTiming;
use controller::run::{Options, Serving, run};
use controller::serve::ServeOptions;
use controller::tls::TlsSource;

#[derive(Debug, Parser)]
#[command(
    name = "antrea-controller",
    version = buildinfo::version(),
    about = "antrea-rs controller: NetworkPolicy spans for the cluster"
)]
struct Cli {
    /// The kubeconfig; without one, the Pod's service account.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// The Namespace of the leader-election Lease.
    #[arg(long, default_value = "kube-system")]
    lease_namespace: String,
    /// The name of the leader-election Lease.
    #[arg(long, default_value = "antrea-controller")]
    lease_name: String,
    /// This replica's name in the Lease [default: POD_NAME, else the host name].
    #[arg(long, env = "POD_NAME")]
    identity: Option<String>,
    /// How long a holder's renewal keeps the other replicas off.
    #[arg(long, default_value_t = 15)]
    lease_duration_seconds: u64,
    /// How often the Lease is renewed, or tried by a follower.
    #[arg(long, default_value_t = 2)]
    retry_seconds: u64,
    /// Where the leader serves the agents (gRPC over TLS).
    #[arg(long, default_value = "0.0.0.0:10349")]
    bind_address: SocketAddr,
    /// The serving certificate chain, PEM [default: a certificate signed by the CA kept in the
    /// Secret kube-system/antrea-controller-tls and published in the ConfigMap
    /// kube-system/antrea-ca].
    #[arg(long, requires = "tls_key_file")]
    tls_cert_file: Option<PathBuf>,
    /// The serving certificate's private key, PEM.
    #[arg(long, requires = "tls_cert_file")]
    tls_key_file: Option<PathBuf>,
    /// Another DNS name or IP address for the self-signed serving certificate (repeatable).
    #[arg(long = "tls-san")]
    tls_sans: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    if cli.retry_seconds == 0 || cli.retry_seconds >= cli.lease_duration_seconds {
        return fail("--retry-seconds must be above 0 and below --lease-duration-seconds");
    }
    let identity = match cli.identity.clone().or_else(host_name) {
        Some(identity) => identity,
        None => return fail("no --identity, POD_NAME or host name"),
    };
    let options = Options {
        kubeconfig: cli.kubeconfig,
        lease_namespace: cli.lease_namespace,
        lease_name: cli.lease_name,
        identity,
        timing: LeaseTiming {
            duration: Duration::from_secs(cli.lease_duration_seconds),
            retry: Duration::from_secs(cli.retry_seconds),
        },
        serving: Some(Serving {
            options: ServeOptions {
                bind_address: cli.bind_address,
                tls: match (cli.tls_cert_file, cli.tls_key_file) {
                    (Some(cert), Some(key)) => TlsSource::Files { cert, key },
                    _ => TlsSource::default(),
                },
                sans: cli.tls_sans,
                ..ServeOptions::default()
            },
            authenticator: |client| {
                Arc::new(controller::auth::TokenReviewAuthenticator::new(client))
            },
        }),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(format!("cannot start the async runtime: {error}")),
    };
    match runtime.block_on(run(&options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!("{error}");
            fail(error)
        }
    }
}

fn host_name() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("antrea-controller: {message}");
    ExitCode::FAILURE
}
