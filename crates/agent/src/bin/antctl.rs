//! `antctl`: asks a running agent what it enforces.
//!
//! `antctl get networkpolicies [--pod <namespace/name>] [--server <host:port>] [-o json]` prints
//! the NetworkPolicy rules the agent enforces on its Node (or applies to one Pod), the flows
//! behind each and their packet and byte counters. The server defaults to the agent API on this
//! host (`127.0.0.1:10350`). `antctl get pipeline [-o json]` prints the bridge's tables as the
//! switch holds them: id, name, stage and the number of flows in each. `antctl get metrics`
//! prints the agent's metrics, `antctl get readiness` whether it is ready (or, exit status 1,
//! what it waits for). Exit status 1 with one line on stderr when the agent cannot answer.
//!
//! The API is HTTPS with a bearer token: `--token` (or `ANTCTL_TOKEN`) or `--token-file`, else
//! the agent's loopback token in `--local-access-dir`, else the Pod's ServiceAccount token; the
//! agent's certificate is checked against `--ca-file`, else the `ca.crt` the agent wrote there.

use std::process::ExitCode;

use std::path::PathBuf;

use agent::antctl::{CredentialSources, Credentials, get, pipeline_table, policy_table};
use agent::config::Platform;
use clap::{Parser, Subcommand, ValueEnum};
use serde::de::DeserializeOwned;

#[derive(Debug, Parser)]
#[command(
    name = "antctl",
    about = "Ask a running antrea-rs agent what it enforces"
)]
struct Cli {
    /// The agent API (`host:port`).
    #[arg(long, global = true, default_value = "127.0.0.1:10350")]
    server: String,
    /// The bearer token.
    #[arg(long, global = true, env = "ANTCTL_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// A file holding the bearer token.
    #[arg(long, global = true)]
    token_file: Option<PathBuf>,
    /// The CA (PEM) that signed the agent's certificate.
    #[arg(long, global = true)]
    ca_file: Option<PathBuf>,
    /// The agent's `apiLocalAccessDir` (its loopback token and CA).
    #[arg(long, global = true, default_value = Platform::current().default_api_local_access_dir())]
    local_access_dir: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show objects the agent holds.
    Get {
        #[command(subcommand)]
        what: Get,
    },
}

#[derive(Debug, Subcommand)]
enum Get {
    /// NetworkPolicy rules, the flows behind each and their counters.
    #[command(alias = "networkpolicy", alias = "netpol")]
    Networkpolicies {
        /// Only the rules applied to this Pod (`namespace/name`).
        #[arg(long)]
        pod: Option<String>,
        /// Output format.
        #[arg(short, long, value_enum, default_value_t = Output::Table)]
        output: Output,
    },
    /// The bridge's tables: id, name, stage and the flows the switch holds in each.
    Pipeline {
        /// Output format.
        #[arg(short, long, value_enum, default_value_t = Output::Table)]
        output: Output,
    },
    /// The agent's metrics (Prometheus text).
    Metrics,
    /// Whether the agent is ready, and what it still waits for.
    Readiness,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    Table,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let Command::Get { what } = cli.command;
    // The NetworkPolicy and pipeline reports are JSON, shown as a table unless JSON is asked
    // for; the other documents are printed as they come.
    let (path, shown) = match &what {
        Get::Networkpolicies { pod, output } => (
            match pod {
                Some(pod) => format!("/v1/networkpolicies?pod={pod}"),
                None => "/v1/networkpolicies".to_owned(),
            },
            (*output == Output::Table).then_some(Shown::Policy),
        ),
        Get::Pipeline { output } => (
            "/v1/pipeline".to_owned(),
            (*output == Output::Table).then_some(Shown::Pipeline),
        ),
        Get::Metrics => ("/metrics".to_owned(), None),
        Get::Readiness => ("/readyz".to_owned(), None),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(&format!("cannot start the async runtime: {error}")),
    };
    let credentials = match Credentials::resolve(&CredentialSources {
        token: cli.token,
        token_file: cli.token_file,
        ca_file: cli.ca_file,
        local_access_dir: cli.local_access_dir,
    }) {
        Ok(credentials) => credentials,
        Err(error) => return fail(&error.to_string()),
    };
    let body = match runtime.block_on(get(&cli.server, &path, &credentials)) {
        Ok(body) => body,
        Err(error) => return fail(&error.to_string()),
    };
    match shown {
        None => {
            print!("{body}");
            ExitCode::SUCCESS
        }
        Some(Shown::Policy) => print_table(&body, "NetworkPolicy report", policy_table),
        Some(Shown::Pipeline) => print_table(&body, "pipeline report", pipeline_table),
    }
}

/// The JSON reports shown as tables.
enum Shown {
    Policy,
    Pipeline,
}

/// Prints `body`, a JSON `what`, as `table` formats it.
fn print_table<T: DeserializeOwned>(body: &str, what: &str, table: fn(&T) -> String) -> ExitCode {
    match serde_json::from_str::<T>(body) {
        Ok(report) => {
            print!("{}", table(&report));
            ExitCode::SUCCESS
        }
        Err(error) => fail(&format!("not a {what}: {error}")),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("antctl: {message}");
    ExitCode::FAILURE
}
