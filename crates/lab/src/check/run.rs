//! Running the probe matrix in the lab's namespaces: TCP probes are `antrea-lab probe-tcp`
//! executed in the source namespace, ICMP probes `ping -c1 -W2` there, DNS probes `getent
//! ahostsv4 NAME` there (glibc's resolver reading the Pod's resolv.conf; over TCP with
//! `RES_OPTIONS=use-vc`) followed by a TCP probe to the address found. Probes through a Service
//! run only once the Service's frontends are installed on the Nodes that load-balance them
//! ([`wait_programmed`]); the others are "not programmed", or "could not run" when the Node's
//! flows could not be read. Probes run in parallel (bounded), each attempt with a bounded
//! timeout. First a readiness wait: each probe is tried until it passes, a bounded number of
//! times (the first packet to a new peer may be lost while ARP or the OVS tunnel neighbour
//! resolves), and the probes that needed a retry are counted. Then the matrix: every probe
//! exactly once, and that attempt is its verdict. An attempt says "failed" only when the probe
//! ran and the network refused, stayed silent or answered wrong; a missing namespace or
//! command, or a local socket error, is "could not run".

use std::collections::BTreeSet;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::probe::{Frontend, Probe, Proto, endpoints, plan};
use super::programmed::{antctl_beside, wait_programmed};
use super::report::{Attempt, FrontendState, Outcome, Readiness, Report};
use super::service_probe::service_plan;
use crate::error::{LabError, Result};
use crate::host::command::{describe, in_netns, run_with_timeout};
use crate::layout::Layout;
use crate::serve::{BLOCKED_TAG, COULD_NOT_RUN_TAG, parse_answer};
use crate::state::State;

/// How long `ping` waits for the echo reply, in seconds.
const PING_WAIT_SECONDS: u32 = 2;
/// glibc's resolver options for a DNS probe: one try of 2 s per name it asks for.
const RESOLVER_OPTIONS: &str = "timeout:2 attempts:1";
/// How long one `getent` may take (the search list has three domains, each one try).
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(20);

/// How the check runs.
#[derive(Debug, Clone, Copy)]
pub struct CheckOptions {
    /// Attempts per probe in the readiness wait before the matrix (0: no wait).
    pub readiness_attempts: u32,
    /// Probes in flight at once (at least 1).
    pub concurrency: usize,
    /// TCP connect and read timeout of one attempt.
    pub tcp_timeout: Duration,
    /// Pause between readiness attempts.
    pub retry_pause: Duration,
    /// How long the Services' frontends may take to appear on their Nodes.
    pub programmed_timeout: Duration,
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions {
            readiness_attempts: 3,
            concurrency: 8,
            tcp_timeout: Duration::from_secs(2),
            retry_pause: Duration::from_millis(300),
            programmed_timeout: Duration::from_secs(30),
        }
    }
}

/// Runs every probe of the lab described by `state` (its files at `layout`).
pub fn check(layout: &Layout, state: &State, options: CheckOptions) -> Result<Report> {
    let exe = std::env::current_exe().map_err(|source| LabError::Spawn {
        program: "antrea-lab (own executable)".into(),
        source,
    })?;
    let mut probes = plan(&endpoints(state), state.topology.wiring);
    probes.extend(service_plan(state));
    let started = Instant::now();
    let frontends: Vec<Frontend> = probes
        .iter()
        .flat_map(|p| p.frontends.iter().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let programmed = match (&state.agent_bin, frontends.is_empty()) {
        (_, true) | (None, _) => Vec::new(),
        (Some(agent_bin), false) => wait_programmed(
            layout,
            &antctl_beside(agent_bin),
            &frontends,
            options.programmed_timeout,
        ),
    };
    // A probe through a frontend that was not seen is not run.
    let gated: Vec<(Probe, Option<Attempt>)> = probes
        .into_iter()
        .map(|probe| {
            let missing = probe.frontends.iter().find_map(|needed| {
                programmed
                    .iter()
                    .find(|s| &s.frontend == needed && s.state != FrontendState::Installed)
            });
            let gate = missing.map(|s| match s.state {
                FrontendState::Unreadable => Attempt::CouldNotRun(s.detail.clone()),
                _ => Attempt::NotProgrammed(format!("{}: {}", s.frontend.service, s.detail)),
            });
            (probe, gate)
        })
        .collect();
    let readiness = if options.readiness_attempts == 0 {
        vec![None; gated.len()]
    } else {
        in_parallel(&gated, options.concurrency, |(probe, gate)| {
            gate.is_none().then(|| wait_ready(&exe, probe, options))
        })
    };
    let attempts = in_parallel(&gated, options.concurrency, |(probe, gate)| match gate {
        Some(attempt) => attempt.clone(),
        None => attempt_once(&exe, probe, options),
    });
    let outcomes = gated
        .into_iter()
        .zip(readiness)
        .zip(attempts)
        .map(|(((probe, _), readiness), attempt)| Outcome::new(probe, readiness, attempt))
        .collect();
    let mut report = Report::new(
        state.topology.wiring,
        state.topology.encap,
        outcomes,
        started.elapsed().as_secs_f64(),
    );
    report.programmed = programmed;
    Ok(report)
}

/// `work` for every item, at most `concurrency` at once; the results in item order.
fn in_parallel<I: Sync, T: Send + Clone>(
    items: &[I],
    concurrency: usize,
    work: impl Fn(&I) -> T + Sync,
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new(vec![None; items.len()]);
    thread::scope(|scope| {
        for _ in 0..concurrency.clamp(1, items.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let result = work(item);
                    if let Ok(mut results) = results.lock() {
                        results[i] = Some(result);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect()
}

/// Tries `probe` until it passes, at most `readiness_attempts` times, `retry_pause` apart; a
/// probe that could not run, or that got a wrong answer, is not tried again (a retry may cover
/// a lost first packet, never a wrong result: the probe then stays not ready, and its matrix
/// attempt is either failed or flaky).
fn wait_ready(exe: &Path, probe: &Probe, options: CheckOptions) -> Readiness {
    let mut readiness = Readiness {
        attempts: 0,
        ready: false,
        detail: String::new(),
    };
    for attempt in 1..=options.readiness_attempts {
        readiness.attempts = attempt;
        if attempt > 1 {
            thread::sleep(options.retry_pause);
        }
        match attempt_once(exe, probe, options) {
            Attempt::Passed(_) => {
                readiness.ready = true;
                break;
            }
            Attempt::Failed(detail) => readiness.detail = detail,
            Attempt::CouldNotRun(detail)
            | Attempt::NotProgrammed(detail)
            | Attempt::WrongAnswer(detail) => {
                readiness.detail = detail;
                break;
            }
        }
    }
    readiness
}

/// One attempt of `probe`.
fn attempt_once(exe: &Path, probe: &Probe, options: CheckOptions) -> Attempt {
    match probe.proto {
        Proto::Tcp => tcp_once(exe, probe, probe.to_ip, options),
        Proto::Icmp => icmp_once(probe),
        Proto::DnsUdp | Proto::DnsTcp => match resolve_once(probe) {
            Ok(address) => tcp_once(exe, probe, address, options),
            Err(attempt) => attempt,
        },
    }
}

/// Runs `cmd` (a probe's command) with `timeout`; its stdout and stderr, or could not run.
fn probe_output(
    cmd: &mut Command,
    timeout: Duration,
) -> std::result::Result<std::process::Output, Attempt> {
    run_with_timeout(cmd, b"", timeout).map_err(|e| Attempt::CouldNotRun(e.to_string()))
}

/// The attempt for output that carried no probe result.
fn no_result(cmd: &Command, out: &std::process::Output) -> Attempt {
    Attempt::CouldNotRun(format!(
        "{} exited with {} and no probe result: {}",
        describe(cmd),
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}

/// `probe-tcp` from the probe's source to `address` at the probe's port, judged.
fn tcp_once(exe: &Path, probe: &Probe, address: Ipv4Addr, options: CheckOptions) -> Attempt {
    let to = SocketAddrV4::new(address, probe.to_port.unwrap_or_default());
    let mut cmd = in_netns(&probe.from, exe);
    cmd.args([
        "probe-tcp",
        "--to",
        &to.to_string(),
        "--timeout-ms",
        &options.tcp_timeout.as_millis().to_string(),
    ]);
    match probe_output(&mut cmd, options.tcp_timeout * 2 + Duration::from_secs(5)) {
        Ok(out) => tcp_attempt(probe, &String::from_utf8_lossy(&out.stdout))
            .unwrap_or_else(|| no_result(&cmd, &out)),
        Err(attempt) => attempt,
    }
}

/// `ping -c1` from the probe's source to its target, judged.
fn icmp_once(probe: &Probe) -> Attempt {
    let mut cmd = in_netns(&probe.from, "ping");
    cmd.args([
        "-c1",
        &format!("-W{PING_WAIT_SECONDS}"),
        "-n",
        "-q",
        &probe.to_ip.to_string(),
    ]);
    match probe_output(
        &mut cmd,
        Duration::from_secs(u64::from(PING_WAIT_SECONDS) + 5),
    ) {
        Ok(out) => icmp_attempt(
            &String::from_utf8_lossy(&out.stdout),
            &String::from_utf8_lossy(&out.stderr),
        )
        .unwrap_or_else(|| no_result(&cmd, &out)),
        Err(attempt) => attempt,
    }
}

/// Resolves the probe's name in its source namespace with glibc's resolver (over TCP for
/// [`Proto::DnsTcp`]); the address, which must be the probe's target, or the attempt's end.
fn resolve_once(probe: &Probe) -> std::result::Result<Ipv4Addr, Attempt> {
    let name = probe.resolve.as_deref().unwrap_or_default();
    let mut cmd = in_netns(&probe.from, "getent");
    cmd.args(["ahostsv4", name]).env(
        "RES_OPTIONS",
        match probe.proto {
            Proto::DnsTcp => format!("{RESOLVER_OPTIONS} use-vc"),
            _ => RESOLVER_OPTIONS.to_owned(),
        },
    );
    let out = probe_output(&mut cmd, RESOLVE_TIMEOUT)?;
    resolved(
        probe,
        out.status.code(),
        &String::from_utf8_lossy(&out.stdout),
    )
    .map_err(|attempt| attempt.unwrap_or_else(|| no_result(&cmd, &out)))
}

/// What `getent ahostsv4` said (exit code, stdout): the address it found if it is the
/// probe's target; failed when the name did not resolve (exit 2) or resolved elsewhere; `None`
/// when getent did not run (any other exit).
fn resolved(
    probe: &Probe,
    code: Option<i32>,
    stdout: &str,
) -> std::result::Result<Ipv4Addr, Option<Attempt>> {
    let name = probe.resolve.as_deref().unwrap_or_default();
    let over = match probe.proto {
        Proto::DnsTcp => "TCP",
        _ => "UDP",
    };
    match code {
        Some(0) => {
            let found: Option<Ipv4Addr> = stdout
                .split_whitespace()
                .next()
                .and_then(|w| w.parse().ok());
            match found {
                Some(ip) if ip == probe.to_ip => Ok(ip),
                Some(ip) => Err(Some(Attempt::WrongAnswer(format!(
                    "{name} resolved over {over} to {ip}, expected {}",
                    probe.to_ip
                )))),
                None => Err(Some(Attempt::WrongAnswer(format!(
                    "{name} resolved over {over} to no IPv4 address: {:?}",
                    stdout.trim()
                )))),
            }
        }
        Some(2) => Err(Some(Attempt::Failed(format!(
            "{name} did not resolve over {over} (no answer, or not found)"
        )))),
        _ => Err(None),
    }
}

/// What `probe-tcp` printed, judged; `None` when it printed no result (it did not run).
fn tcp_attempt(probe: &Probe, stdout: &str) -> Option<Attempt> {
    let line = stdout.trim();
    if let Some(why) = line.strip_prefix(BLOCKED_TAG) {
        return Some(Attempt::Failed(why.trim().to_owned()));
    }
    if let Some(why) = line.strip_prefix(COULD_NOT_RUN_TAG) {
        return Some(Attempt::CouldNotRun(why.trim().to_owned()));
    }
    let answer = parse_answer(line).ok()?;
    let seen = (answer.name.clone(), answer.peer.to_string());
    Some(match probe.judge(&answer) {
        Ok(()) => Attempt::Passed(Some(seen)),
        Err(wrong) => Attempt::WrongAnswer(wrong),
    })
}

/// What `ping -c1 -q` printed: passed with its one reply, failed without it or when the network
/// says unreachable; `None` when ping printed neither (it did not run, or failed locally).
fn icmp_attempt(stdout: &str, stderr: &str) -> Option<Attempt> {
    match ping_counts(stdout) {
        Some((sent, received)) if sent > 0 && received == sent => Some(Attempt::Passed(None)),
        Some((sent, received)) => Some(Attempt::Failed(format!(
            "{received} of {sent} echo replies within {PING_WAIT_SECONDS} s"
        ))),
        None if stderr.contains("unreachable") => Some(Attempt::Failed(stderr.trim().to_owned())),
        None => None,
    }
}

/// The (transmitted, received) counts of `ping`'s summary line ("N packets transmitted, M
/// received, …"), if it printed one.
pub fn ping_counts(stdout: &str) -> Option<(u64, u64)> {
    let line = stdout.lines().find(|l| l.contains("packets transmitted"))?;
    let mut parts = line.split(',');
    let mut first_number = || parts.next()?.split_whitespace().next()?.parse().ok();
    Some((first_number()?, first_number()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::probe::PeerCheck;

    #[test]
    fn ping_summaries_are_read_and_partial_replies_fail() {
        let all = "\n--- 10.0.0.1 ping statistics ---\n1 packets transmitted, 1 received, 0% packet loss, time 0ms\n";
        assert_eq!(ping_counts(all), Some((1, 1)));
        assert_eq!(icmp_attempt(all, ""), Some(Attempt::Passed(None)));
        let lost = "5 packets transmitted, 4 received, +1 errors, 20% packet loss, time 4005ms\n";
        assert_eq!(ping_counts(lost), Some((5, 4)));
        assert_eq!(
            icmp_attempt(lost, ""),
            Some(Attempt::Failed("4 of 5 echo replies within 2 s".into()))
        );
    }

    #[test]
    fn a_ping_that_did_not_run_is_not_a_lost_reply() {
        assert_eq!(
            icmp_attempt("", "exec of \"ping\" failed: No such file or directory\n"),
            None
        );
        assert_eq!(
            icmp_attempt(
                "",
                "Cannot open network namespace \"lab-x\": No such file\n"
            ),
            None
        );
        assert_eq!(
            icmp_attempt("", "ping: connect: Network is unreachable\n"),
            Some(Attempt::Failed(
                "ping: connect: Network is unreachable".into()
            ))
        );
    }

    #[test]
    fn probe_tcp_results_are_told_apart() {
        let probe = Probe {
            from: "lab-n1-p1".into(),
            to: "lab-n2-p1".into(),
            to_ip: "10.244.2.11".parse().unwrap(),
            to_port: Some(8080),
            path: crate::check::probe::PathKind::PodPodCrossNode,
            proto: Proto::Tcp,
            answerer: "lab-n2-p1".into(),
            peer: PeerCheck::Unchanged("10.244.1.11".parse().unwrap()),
            resolve: None,
            frontends: Vec::new(),
        };
        assert_eq!(
            tcp_attempt(
                &probe,
                "antrea-lab-serve name=lab-n2-p1 peer=10.244.1.11:4000\n"
            ),
            Some(Attempt::Passed(Some((
                "lab-n2-p1".into(),
                "10.244.1.11:4000".into()
            ))))
        );
        assert!(matches!(
            tcp_attempt(&probe, "antrea-lab-serve name=lab-n2 peer=10.244.1.11:4000\n"),
            Some(Attempt::WrongAnswer(why)) if why.contains("instead of lab-n2-p1")
        ));
        assert_eq!(
            tcp_attempt(&probe, "blocked: connect to 10.244.2.11:8080: timed out\n"),
            Some(Attempt::Failed(
                "connect to 10.244.2.11:8080: timed out".into()
            ))
        );
        assert_eq!(
            tcp_attempt(&probe, "could-not-run: connect: Too many open files\n"),
            Some(Attempt::CouldNotRun("connect: Too many open files".into()))
        );
        assert_eq!(tcp_attempt(&probe, ""), None);
    }

    #[test]
    fn getent_results_are_told_apart() {
        let probe = Probe {
            from: "lab-n1-p2".into(),
            to: "lab-local-n1".into(),
            to_ip: "10.96.1.1".parse().unwrap(),
            to_port: Some(80),
            path: crate::check::probe::PathKind::PodDns,
            proto: Proto::DnsTcp,
            answerer: "lab-n1-p1".into(),
            peer: PeerCheck::Unchanged("10.244.1.3".parse().unwrap()),
            resolve: Some("lab-local-n1".into()),
            frontends: Vec::new(),
        };
        let found = "10.96.1.1       STREAM lab-local-n1.default.svc.cluster.local\n10.96.1.1       DGRAM  \n";
        assert_eq!(
            resolved(&probe, Some(0), found),
            Ok("10.96.1.1".parse().unwrap())
        );
        assert_eq!(
            resolved(&probe, Some(0), "10.96.0.20      STREAM lab-local-n1\n"),
            Err(Some(Attempt::WrongAnswer(
                "lab-local-n1 resolved over TCP to 10.96.0.20, expected 10.96.1.1".into()
            )))
        );
        assert!(
            matches!(resolved(&probe, Some(2), ""), Err(Some(Attempt::Failed(why))) if why.contains("did not resolve over TCP"))
        );
        assert_eq!(resolved(&probe, Some(255), ""), Err(None));
        assert_eq!(resolved(&probe, None, ""), Err(None));
    }
}
