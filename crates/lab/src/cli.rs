//! The `antrea-lab` command line.

use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};

use crate::check::run::{CheckOptions, check};
use crate::dns::{self, Zone};
use crate::error::{LabError, Result};
use crate::iperf;
use crate::layout::{DEFAULT_STATE_DIR, Layout};
use crate::lifecycle::down::down;
use crate::lifecycle::node;
use crate::lifecycle::status::status;
use crate::lifecycle::up::{UpOptions, up};
use crate::plan::{ClusterApi, Encap, Runtime, Topology, Wiring};
use crate::serve;
use crate::state::State;
use crate::wiring::agent::AgentBinaries;

mod kubectl;

/// An emulated multi-Node cluster on one Linux machine: network namespaces, a private Open
/// vSwitch per Node, Pods wired by antrea-agent through the antrea CNI plugin (or, as a
/// baseline, by a plain OVS NORMAL bridge), and a connectivity check.
#[derive(Debug, Parser)]
#[command(name = "antrea-lab", version)]
pub struct Cli {
    /// Where the lab keeps its state, OVS directories, logs and pidfiles.
    #[arg(long, global = true, default_value = DEFAULT_STATE_DIR)]
    pub state_dir: PathBuf,
    /// What to do.
    #[command(subcommand)]
    pub command: Cmd,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Build the lab.
    Up {
        /// Number of Nodes.
        #[arg(long, default_value_t = 2)]
        nodes: u8,
        /// Pods on each Node.
        #[arg(long, default_value_t = 2)]
        pods_per_node: u8,
        /// Cross-Node traffic mode (agent wiring).
        #[arg(long, value_enum, default_value_t = Encap::Geneve)]
        encap: Encap,
        /// Who wires the Nodes: antrea-agent + CNI plugin, or a plain NORMAL bridge.
        #[arg(long, value_enum, default_value_t = Wiring::Agent)]
        wiring: Wiring,
        /// Where the agents read Nodes and Pods: the cluster directory, or a fake Kubernetes API
        /// server (namespace lab-api, 10.10.0.2:6443) the lab creates them in, with the lab's
        /// Services and DNS [default: fake with --wiring agent, directory with --wiring normal].
        #[arg(long, value_enum)]
        api: Option<ClusterApi>,
        /// Who creates the Pods (agent wiring): the lab itself, running the CNI plugin, or one
        /// containerd per Node through CRI RunPodSandbox, which runs the plugin.
        #[arg(long, value_enum, default_value_t = Runtime::Direct)]
        runtime: Runtime,
        /// The fake API server binary for --api fake [default: antrea-fake-apiserver next to
        /// antrea-lab].
        #[arg(long)]
        apiserver_bin: Option<PathBuf>,
        /// Run antrea-controller on its own lab host (namespace lab-ctl, 10.10.0.3), and have the
        /// agents take their NetworkPolicy from it (needs --api fake, the default with agent
        /// wiring).
        #[arg(long)]
        controller: bool,
        /// The antrea-controller binary for --controller [default: next to antrea-lab].
        #[arg(long)]
        controller_bin: Option<PathBuf>,
        /// The antrea-agent binary [default: next to antrea-lab].
        #[arg(long)]
        agent_bin: Option<PathBuf>,
        /// The antrea CNI plugin binary [default: next to antrea-lab].
        #[arg(long)]
        cni_bin: Option<PathBuf>,
        /// Seconds an agent may take to create its CNI socket.
        #[arg(long, default_value_t = 60.0)]
        agent_ready_timeout: f64,
        /// Leave a half-built lab in place if up fails (remove it with down).
        #[arg(long)]
        keep_on_failure: bool,
    },
    /// Probe connectivity: Pod<->Pod, Node->Pod, Pod->Node, Pod->external (SNAT); TCP and ICMP;
    /// with the fake API server also through the lab's Services and its DNS.
    Check {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Attempts per probe in the readiness wait before the matrix (0: no wait).
        #[arg(long, default_value_t = 3)]
        readiness_attempts: u32,
        /// Probes in flight at once.
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
        /// Seconds the lab's Services may take to appear in each Node's flows before the
        /// probes through them are reported as not programmed.
        #[arg(long, default_value_t = 30.0)]
        programmed_timeout: f64,
    },
    /// Show what exists: Nodes, Pods, namespaces, processes.
    Status,
    /// Run kubectl against the lab's fake API server (`up --api fake`, the default with agent
    /// wiring) with the lab's kubeconfig, e.g. `antrea-lab kubectl get pods -A -o wide`.
    Kubectl {
        /// The kubectl binary.
        #[arg(long, default_value = "kubectl")]
        kubectl_bin: PathBuf,
        /// kubectl's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Remove every process, namespace and file of the lab.
    Down,
    /// Measure TCP throughput between two endpoints with iperf3.
    Iperf {
        /// Source endpoint (a Pod, a Node or lab-ext).
        #[arg(long)]
        from: String,
        /// Target endpoint.
        #[arg(long)]
        to: String,
        /// Seconds to measure.
        #[arg(long, default_value_t = 5)]
        seconds: u32,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop or start one Node's antrea-agent (restart experiments; the datapath stays).
    Agent {
        /// stop or start.
        #[command(subcommand)]
        action: AgentAction,
    },
    /// Kill one Node's ovs-vswitchd, start it again, and time until br-int has all its flows back.
    OvsRestart {
        /// The Node, e.g. lab-n1.
        #[arg(long)]
        node: String,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Kill one Node's ovsdb-server (SIGKILL), start it again, and check that no flow or port
    /// was lost once ovs-vswitchd has reconnected.
    OvsdbRestart {
        /// The Node, e.g. lab-n1.
        #[arg(long)]
        node: String,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// (internal) Answer TCP connections with our name and the peer address.
    #[command(hide = true)]
    Serve {
        /// Name to answer with.
        #[arg(long)]
        name: String,
        /// Port to listen on (all addresses).
        #[arg(long)]
        port: u16,
        /// File written once listening.
        #[arg(long)]
        ready_file: PathBuf,
    },
    /// (internal) Answer DNS queries (UDP and TCP) with the A records of a records file.
    #[command(hide = true)]
    Dns {
        /// Port to listen on (all addresses).
        #[arg(long)]
        port: u16,
        /// The records: one `name address` line each.
        #[arg(long)]
        records: PathBuf,
        /// File written once listening.
        #[arg(long)]
        ready_file: PathBuf,
    },
    /// (internal) Connect to a serve answerer and print its answer, or `blocked: …` or
    /// `could-not-run: …`.
    #[command(hide = true)]
    ProbeTcp {
        /// Address and port.
        #[arg(long)]
        to: SocketAddrV4,
        /// Connect and read timeout.
        #[arg(long, default_value_t = 2000)]
        timeout_ms: u64,
    },
}

/// What `agent` does.
#[derive(Debug, Subcommand)]
pub enum AgentAction {
    /// SIGTERM the agent and wait until it has exited.
    Stop {
        /// The Node, e.g. lab-n1.
        #[arg(long)]
        node: String,
    },
    /// Start the agent as `up` did and wait until its CNI socket appears.
    Start {
        /// The Node, e.g. lab-n1.
        #[arg(long)]
        node: String,
        /// Seconds the agent may take to create its CNI socket.
        #[arg(long, default_value_t = 60.0)]
        ready_timeout: f64,
    },
}

/// Parses the command line and runs it.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("antrea-lab: {e}");
            ExitCode::FAILURE
        }
    }
}

fn absolute(dir: &Path) -> PathBuf {
    if dir.is_absolute() {
        dir.to_owned()
    } else {
        std::env::current_dir().unwrap_or_default().join(dir)
    }
}

fn beside_self(name: &str) -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join(name)))
        .unwrap_or_else(|| PathBuf::from(name))
}

fn load(layout: &Layout) -> Result<State> {
    State::load(&layout.state_file())?.ok_or_else(|| LabError::NotUp(layout.state_file()))
}

fn run(cli: Cli) -> Result<ExitCode> {
    let layout = Layout::new(absolute(&cli.state_dir));
    match cli.command {
        Cmd::Up {
            nodes,
            pods_per_node,
            encap,
            wiring,
            api,
            runtime,
            apiserver_bin,
            controller,
            controller_bin,
            agent_bin,
            cni_bin,
            agent_ready_timeout,
            keep_on_failure,
        } => {
            let topology = Topology::new(nodes, pods_per_node, encap, wiring)?;
            let api = ClusterApi::for_up(api, wiring);
            let agent = (wiring == Wiring::Agent).then(|| AgentBinaries {
                agent: agent_bin.unwrap_or_else(|| beside_self("antrea-agent")),
                cni: cni_bin.unwrap_or_else(|| beside_self("antrea")),
                ready_timeout: Duration::from_secs_f64(agent_ready_timeout.max(0.0)),
            });
            let state = up(
                &layout,
                &UpOptions {
                    topology,
                    agent,
                    api,
                    apiserver_bin: (api == ClusterApi::Fake).then(|| {
                        apiserver_bin.unwrap_or_else(|| beside_self("antrea-fake-apiserver"))
                    }),
                    controller_bin: controller.then(|| {
                        controller_bin.unwrap_or_else(|| beside_self("antrea-controller"))
                    }),
                    runtime,
                    keep_on_failure,
                },
            )?;
            println!(
                "lab up in {:.1} s: {} Nodes x {} Pods, wiring {}{}; state {}",
                state.up_seconds.unwrap_or_default(),
                nodes,
                pods_per_node,
                wiring,
                if wiring == Wiring::Agent {
                    format!(
                        " ({encap}, api {api}, runtime {runtime}{})",
                        if controller {
                            ", policy from antrea-controller"
                        } else {
                            ""
                        }
                    )
                } else {
                    String::new()
                },
                layout.root().display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Check {
            json,
            readiness_attempts,
            concurrency,
            programmed_timeout,
        } => {
            let state = load(&layout)?;
            let report = check(
                &layout,
                &state,
                CheckOptions {
                    readiness_attempts,
                    concurrency,
                    programmed_timeout: Duration::from_secs_f64(programmed_timeout.max(0.0)),
                    ..CheckOptions::default()
                },
            )?;
            print!(
                "{}",
                if json {
                    report.to_json() + "\n"
                } else {
                    report.to_text()
                }
            );
            Ok(if report.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Cmd::Status => {
            let s = status(&layout)?;
            print!("{}", s.to_text(&layout));
            Ok(if s.healthy() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Cmd::Kubectl { kubectl_bin, args } => {
            let state = load(&layout)?;
            kubectl::run(kubectl::command(
                &layout,
                state.api,
                kubectl_bin.as_os_str(),
                &args,
            )?)
        }
        Cmd::Down => {
            let report = down(&layout)?;
            for p in &report.stopped {
                println!("stopped {p}");
            }
            for s in &report.sandboxes {
                println!("removed Pod sandbox {s} through CRI");
            }
            for c in &report.forced_containers {
                println!("deleted container {c} with runc");
            }
            for n in &report.notes {
                println!("note: {n}");
            }
            for w in &report.warnings {
                eprintln!("warning: {w}");
            }
            println!(
                "down in {:.1} s: {} processes stopped, {} namespaces deleted, {} mounts removed, state directory {}",
                report.seconds,
                report.stopped.len(),
                report.namespaces.len(),
                report.unmounted,
                if report.removed_state_dir {
                    "removed"
                } else {
                    "was absent"
                }
            );
            Ok(if report.warnings.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Cmd::Iperf {
            from,
            to,
            seconds,
            json,
        } => {
            let state = load(&layout)?;
            let started = Instant::now();
            let t = iperf::measure(&layout, &state, &from, &to, seconds)?;
            if json {
                println!("{}", serde_json::to_string(&t).unwrap_or_default());
            } else {
                println!(
                    "{} -> {}: {:.3} Gbit/s over {} s, {} retransmits ({:.1} s wall)",
                    t.from,
                    t.to,
                    t.gbits(),
                    t.seconds,
                    t.retransmits,
                    started.elapsed().as_secs_f64()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Agent {
            action: AgentAction::Stop { node },
        } => {
            let state = load(&layout)?;
            let pid = node::stop_agent(&layout, &state, &node)?;
            println!("stopped the antrea-agent of {node} (pid {pid})");
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Agent {
            action:
                AgentAction::Start {
                    node,
                    ready_timeout,
                },
        } => {
            let state = load(&layout)?;
            let ready = node::start_agent(
                &layout,
                &state,
                &node,
                Duration::from_secs_f64(ready_timeout.max(0.0)),
            )?;
            println!(
                "started the antrea-agent of {node}: ready (CNI socket) in {:.3} s",
                ready.as_secs_f64()
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::OvsRestart { node, json } => {
            let state = load(&layout)?;
            let r = node::restart_ovs(&layout, &state, &node)?;
            if json {
                println!("{}", serde_json::to_string(&r).unwrap_or_default());
            } else {
                println!(
                    "{}: ovs-vswitchd restarted (control socket after {:.3} s); all {} flows back {:.3} s after its start",
                    r.node, r.vswitchd_start_seconds, r.flows, r.flows_back_seconds
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::OvsdbRestart { node, json } => {
            let state = load(&layout)?;
            let r = node::restart_ovsdb(&layout, &state, &node)?;
            if json {
                println!("{}", serde_json::to_string(&r).unwrap_or_default());
            } else {
                println!(
                    "{}: ovsdb-server killed and started again; ovs-vswitchd synced {:.3} s after its start; all {} flows and {} interfaces unchanged",
                    r.node, r.vswitchd_synced_seconds, r.flows, r.interfaces
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Serve {
            name,
            port,
            ready_file,
        } => {
            serve::serve(&name, port, &ready_file).map_err(|source| LabError::File {
                what: "serve",
                path: ready_file,
                source,
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Dns {
            port,
            records,
            ready_file,
        } => {
            let text = std::fs::read_to_string(&records).map_err(|source| LabError::File {
                what: "DNS records",
                path: records.clone(),
                source,
            })?;
            let zone = Zone::parse(&text).map_err(|message| LabError::Output {
                tool: "antrea-lab dns",
                message: format!("{}: {message}", records.display()),
            })?;
            dns::server::serve(zone, port, &ready_file).map_err(|source| LabError::File {
                what: "dns",
                path: ready_file,
                source,
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::ProbeTcp { to, timeout_ms } => {
            match serve::probe_tcp(to, Duration::from_millis(timeout_ms)) {
                Ok(answer) => {
                    print!("{}", serve::format_answer(&answer.name, answer.peer));
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    print!("{}", e.report_line());
                    Ok(ExitCode::FAILURE)
                }
            }
        }
    }
}
