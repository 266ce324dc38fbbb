//! `antctl`: asks a running agent what it enforces.
//!
//! `antctl get networkpolicies [--pod <namespace/name>] [--server <host:port>] [-o json]` prints
//! the NetworkPolicy rules the agent enforces on its Node (or applies to one Pod), the flows
//! behind each and their packet and byte counters. The server defaults to the agent API on this
//! host (`127.0.0.1:10350`). `antctl get metrics` prints the agent's metrics, `antctl get
//! readiness` whether it is ready (or, exit status 1, what it waits for). Exit status 1 with one
//! line on stderr when the agent cannot answer.

use std::process::ExitCode;

use agent::antctl::{get, policy_table};
use agent::controller::PolicyReport;
use clap::{Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "antctl",
    about = "Ask a running antrea-rs agent what it enforces"
)]
struct Cli {
    /// The agent API (`host:port`).
    #[arg(long, global = true, default_value = "127.0.0.1:10350")]
    server: String,
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
    // The NetworkPolicy report is JSON, shown as a table unless JSON is asked for; the other
    // documents are printed as they come.
    let (path, as_table) = match &what {
        Get::Networkpolicies { pod, output } => (
            match pod {
                Some(pod) => format!("/v1/networkpolicies?pod={pod}"),
                None => "/v1/networkpolicies".to_owned(),
            },
            *output == Output::Table,
        ),
        Get::Metrics => ("/metrics".to_owned(), false),
        Get::Readiness => ("/readyz".to_owned(), false),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(&format!("cannot start the async runtime: {error}")),
    };
    let body = match runtime.block_on(get(&cli.server, &path)) {
        Ok(body) => body,
        Err(error) => return fail(&error.to_string()),
    };
    if !as_table {
        print!("{body}");
        return ExitCode::SUCCESS;
    }
    match serde_json::from_str::<PolicyReport>(&body) {
        Ok(report) => {
            print!("{}", policy_table(&report));
            ExitCode::SUCCESS
        }
        Err(error) => fail(&format!("not a NetworkPolicy report: {error}")),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("antctl: {message}");
    ExitCode::FAILURE
}
