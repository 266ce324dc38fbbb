//! `antctl`: asks a running agent what it enforces.
//!
//! - `antctl get networkpolicies [--pod <namespace/name>] [-o json]`: the NetworkPolicy rules
//!   the agent enforces on its Node (or applies to one Pod), the flows behind each and their
//!   packet and byte counters.
//! - `antctl get pipeline [-o json]`: the bridge's tables as the switch holds them: id, name,
//!   stage and the number of flows in each.
//! - `antctl get podinterface [-o json]` (or `podinterfaces`): each Pod's container, host
//!   interface (the OVS port), OpenFlow port, addresses and MAC, as the CNI server recorded them.
//! - `antctl get ovsflows [--pod <namespace/name>] [--table NAME] [-o json]`: the bridge's flows
//!   as the switch holds them now, each after its table's name; only one table's, only those
//!   matching one Pod's OpenFlow port, address or MAC.
//! - `antctl trace-packet --pod <namespace/name> --destination IP[:port] [--protocol
//!   tcp|udp|icmp] [-o json]`: a new connection's first packet from the Pod through
//!   `ofproto/trace`, table by table, and its verdict (output port, or drop).
//! - `antctl supportbundle [--output FILE]`: one tar.gz of the agent's log, configuration,
//!   OVSDB, flows, groups (and HNS state on Windows).
//! - `antctl get featuregates [-o json]`, `antctl version`, `antctl get metrics`, `antctl get
//!   readiness`.
//!
//! The server defaults to the agent API on this host (`127.0.0.1:10350`). Bad input (an
//! unknown Pod or table, a bad address) and an agent that cannot answer give exit status 1 with
//! one line on stderr.
//!
//! The API is HTTPS with a bearer token: `--token` (or `ANTCTL_TOKEN`) or `--token-file`, else
//! the agent's loopback token in `--local-access-dir`, else the Pod's ServiceAccount token; the
//! agent's certificate is checked against `--ca-file`, else the `ca.crt` the agent wrote there.

use std::path::PathBuf;
use std::process::ExitCode;

use agent::antctl::{
    CredentialSources, Credentials, feature_gate_table, flow_lines, get_bytes, pipeline_table,
    pod_interface_table, policy_table, trace_text,
};
use agent::apiserver::query::escape;
use agent::apiserver::{TraceDestination, VersionReport};
use agent::config::Platform;
use clap::{Parser, Subcommand, ValueEnum};
use serde::de::DeserializeOwned;

#[derive(Debug, Parser)]
#[command(
    name = "antctl",
    version = buildinfo::version(),
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
    /// Trace a packet from a Pod through the bridge (`ofproto/trace`), table by table.
    TracePacket {
        /// The Pod the packet leaves (`namespace/name`).
        #[arg(long)]
        pod: String,
        /// Where it goes: `IP` or `IP:port`.
        #[arg(long)]
        destination: String,
        /// The protocol (default: TCP with a port, ICMP echo without).
        #[arg(long, value_enum)]
        protocol: Option<Protocol>,
        /// Output format.
        #[arg(short, long, value_enum, default_value_t = Output::Table)]
        output: Output,
    },
    /// Save the agent's support bundle (tar.gz).
    Supportbundle {
        /// Where to write it.
        #[arg(long, default_value = "antrea-agent-supportbundle.tar.gz")]
        output: PathBuf,
    },
    /// antctl's version and the agent's.
    Version,
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
    /// Each Pod's interface: container, host interface, OpenFlow port, addresses, MAC.
    #[command(alias = "podinterfaces")]
    Podinterface {
        /// Output format.
        #[arg(short, long, value_enum, default_value_t = Output::Table)]
        output: Output,
    },
    /// The bridge's flows, each after its table's name.
    Ovsflows {
        /// Only the flows of this Pod (`namespace/name`).
        #[arg(long)]
        pod: Option<String>,
        /// Only the flows of this table (its name, as `get pipeline` shows it).
        #[arg(long)]
        table: Option<String>,
        /// Output format.
        #[arg(short, long, value_enum, default_value_t = Output::Table)]
        output: Output,
    },
    /// The agent's feature gates, with their defaults.
    Featuregates {
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Protocol {
    Tcp,
    Udp,
    Icmp,
}

/// How an answer is shown.
enum Shown {
    /// As it comes.
    Raw,
    Policy,
    Pipeline,
    PodInterfaces,
    Flows,
    FeatureGates,
    Trace,
    /// The agent's version after antctl's.
    Version,
    /// Saved to this file.
    Saved(PathBuf),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (path, shown) = match request(cli.command) {
        Ok(request) => request,
        Err(message) => return fail(&message),
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
    if let Shown::Version = shown {
        println!("antctl: {}", VersionReport::this_build());
    }
    let body = match runtime.block_on(get_bytes(&cli.server, &path, &credentials)) {
        Ok(body) => body,
        Err(error) => return fail(&error.to_string()),
    };
    let text = || String::from_utf8_lossy(&body).into_owned();
    match shown {
        Shown::Raw => {
            print!("{}", text());
            ExitCode::SUCCESS
        }
        Shown::Policy => print_as(&text(), "NetworkPolicy report", policy_table),
        Shown::Pipeline => print_as(&text(), "pipeline report", pipeline_table),
        Shown::PodInterfaces => print_as(&text(), "Pod interface list", |v: &Vec<_>| {
            pod_interface_table(v)
        }),
        Shown::Flows => print_as(&text(), "flow report", flow_lines),
        Shown::FeatureGates => print_as(&text(), "feature gate list", |v: &Vec<_>| {
            feature_gate_table(v)
        }),
        Shown::Trace => print_as(&text(), "packet trace", trace_text),
        Shown::Version => print_as(&text(), "version", |v: &VersionReport| {
            format!("agent: {v}\n")
        }),
        Shown::Saved(file) => match std::fs::write(&file, &body) {
            Ok(()) => {
                println!(
                    "support bundle saved to {} ({} bytes)",
                    file.display(),
                    body.len()
                );
                ExitCode::SUCCESS
            }
            Err(error) => fail(&format!("writing {}: {error}", file.display())),
        },
    }
}

/// The API path `command` asks for and how its answer is shown, or why the input is bad.
fn request(command: Command) -> Result<(String, Shown), String> {
    let shown_as = |output: Output, shown: Shown| match output {
        Output::Table => shown,
        Output::Json => Shown::Raw,
    };
    Ok(match command {
        Command::Get { what } => match what {
            Get::Networkpolicies { pod, output } => (
                with_query("/v1/networkpolicies", &[("pod", pod_key(pod)?)]),
                shown_as(output, Shown::Policy),
            ),
            Get::Pipeline { output } => {
                ("/v1/pipeline".to_owned(), shown_as(output, Shown::Pipeline))
            }
            Get::Podinterface { output } => (
                "/v1/podinterfaces".to_owned(),
                shown_as(output, Shown::PodInterfaces),
            ),
            Get::Ovsflows { pod, table, output } => (
                with_query("/v1/ovsflows", &[("pod", pod_key(pod)?), ("table", table)]),
                shown_as(output, Shown::Flows),
            ),
            Get::Featuregates { output } => (
                "/v1/featuregates".to_owned(),
                shown_as(output, Shown::FeatureGates),
            ),
            Get::Metrics => ("/metrics".to_owned(), Shown::Raw),
            Get::Readiness => ("/readyz".to_owned(), Shown::Raw),
        },
        Command::TracePacket {
            pod,
            destination,
            protocol,
            output,
        } => {
            TraceDestination::parse(&destination)?;
            let protocol = protocol.map(|p| {
                match p {
                    Protocol::Tcp => "tcp",
                    Protocol::Udp => "udp",
                    Protocol::Icmp => "icmp",
                }
                .to_owned()
            });
            (
                with_query(
                    "/v1/tracepacket",
                    &[
                        ("pod", pod_key(Some(pod))?),
                        ("destination", Some(destination)),
                        ("protocol", protocol),
                    ],
                ),
                shown_as(output, Shown::Trace),
            )
        }
        Command::Supportbundle { output } => ("/v1/supportbundle".to_owned(), Shown::Saved(output)),
        Command::Version => ("/v1/version".to_owned(), Shown::Version),
    })
}

/// `pod`, checked to be `namespace/name`.
fn pod_key(pod: Option<String>) -> Result<Option<String>, String> {
    match pod {
        Some(pod) => match pod.split_once('/') {
            Some((namespace, name))
                if !namespace.is_empty() && !name.is_empty() && !name.contains('/') =>
            {
                Ok(Some(pod))
            }
            _ => Err(format!("--pod {pod}: expected namespace/name")),
        },
        None => Ok(None),
    }
}

/// `path` with the parameters that have a value, escaped.
fn with_query(path: &str, parameters: &[(&str, Option<String>)]) -> String {
    let pairs: Vec<String> = parameters
        .iter()
        .filter_map(|(name, value)| value.as_ref().map(|v| format!("{name}={}", escape(v))))
        .collect();
    if pairs.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", pairs.join("&"))
    }
}

/// Prints `body`, a JSON `what`, as `show` formats it.
fn print_as<T: DeserializeOwned>(body: &str, what: &str, show: impl Fn(&T) -> String) -> ExitCode {
    match serde_json::from_str::<T>(body) {
        Ok(report) => {
            print!("{}", show(&report));
            ExitCode::SUCCESS
        }
        Err(error) => fail(&format!("not a {what}: {error}")),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("antctl: {message}");
    ExitCode::FAILURE
}
