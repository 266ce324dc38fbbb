//! Running the probe matrix in the lab's namespaces: TCP probes are `antrea-lab probe-tcp`
//! executed in the source namespace, ICMP probes `ping -c1 -W1` there. Probes run in parallel
//! (bounded), each with a bounded timeout and a bounded number of attempts, like a readiness
//! probe: the first packet to a new peer may be lost while ARP (or OVS tunnel ARP) resolves.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::probe::{Probe, Proto, endpoints, plan};
use super::report::{Outcome, Report};
use crate::error::{LabError, Result};
use crate::host::command::{in_netns, run_with_timeout};
use crate::plan::SERVE_PORT;
use crate::serve::parse_answer;
use crate::state::State;

/// How the check runs.
#[derive(Debug, Clone, Copy)]
pub struct CheckOptions {
    /// Attempts per probe (at least 1).
    pub attempts: u32,
    /// Probes in flight at once (at least 1).
    pub concurrency: usize,
    /// TCP connect and read timeout of one attempt.
    pub tcp_timeout: Duration,
    /// Pause between attempts.
    pub retry_pause: Duration,
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions {
            attempts: 3,
            concurrency: 8,
            tcp_timeout: Duration::from_secs(2),
            retry_pause: Duration::from_millis(300),
        }
    }
}

/// Runs every probe of the lab described by `state`.
pub fn check(state: &State, options: CheckOptions) -> Result<Report> {
    let exe = std::env::current_exe().map_err(|source| LabError::Spawn {
        program: "antrea-lab (own executable)".into(),
        source,
    })?;
    let probes = plan(&endpoints(state), state.topology.wiring);
    let started = Instant::now();
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; probes.len()]);
    thread::scope(|scope| {
        for _ in 0..options.concurrency.clamp(1, probes.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(probe) = probes.get(i) else { break };
                    let outcome = run_probe(&exe, probe, options);
                    if let Ok(mut results) = results.lock() {
                        results[i] = Some(outcome);
                    }
                }
            });
        }
    });
    let outcomes = results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect();
    Ok(Report::new(
        state.topology.wiring,
        state.topology.encap,
        outcomes,
        started.elapsed().as_secs_f64(),
    ))
}

fn run_probe(exe: &std::path::Path, probe: &Probe, options: CheckOptions) -> Outcome {
    let mut outcome = Outcome {
        probe: probe.clone(),
        ok: false,
        attempts: 0,
        answered_by: None,
        peer_seen: None,
        detail: String::new(),
    };
    for attempt in 1..=options.attempts.max(1) {
        outcome.attempts = attempt;
        if attempt > 1 {
            thread::sleep(options.retry_pause);
        }
        match attempt_once(exe, probe, options) {
            Ok(seen) => {
                if let Some((name, peer)) = seen {
                    outcome.answered_by = Some(name);
                    outcome.peer_seen = Some(peer);
                }
                outcome.ok = true;
                return outcome;
            }
            Err(detail) => outcome.detail = detail,
        }
    }
    outcome
}

/// One attempt; on TCP success, who answered and the peer it saw.
fn attempt_once(
    exe: &std::path::Path,
    probe: &Probe,
    options: CheckOptions,
) -> std::result::Result<Option<(String, String)>, String> {
    match probe.proto {
        Proto::Tcp => {
            let mut cmd = in_netns(&probe.from, exe);
            cmd.args([
                "probe-tcp",
                "--to",
                &format!("{}:{SERVE_PORT}", probe.to_ip),
                "--timeout-ms",
                &options.tcp_timeout.as_millis().to_string(),
            ]);
            let out = run_with_timeout(
                &mut cmd,
                b"",
                options.tcp_timeout * 2 + Duration::from_secs(5),
            )
            .map_err(|e| e.to_string())?;
            if !out.status.success() {
                return Err(String::from_utf8_lossy(&out.stderr).trim().to_owned());
            }
            let answer = parse_answer(&String::from_utf8_lossy(&out.stdout))?;
            let seen = (answer.name.clone(), answer.peer.to_string());
            probe.judge(&answer).map(|()| Some(seen))
        }
        Proto::Icmp => {
            let mut cmd = in_netns(&probe.from, "ping");
            cmd.args(["-c1", "-W1", "-n", "-q", &probe.to_ip.to_string()]);
            let out = run_with_timeout(&mut cmd, b"", Duration::from_secs(5))
                .map_err(|e| e.to_string())?;
            if out.status.success() {
                Ok(None)
            } else {
                Err("no echo reply within 1 s".to_owned())
            }
        }
    }
}
