//! Running the probe matrix in the lab's namespaces: TCP probes are `antrea-lab probe-tcp`
//! executed in the source namespace, ICMP probes `ping -c1 -W2` there. Probes run in parallel
//! (bounded), each attempt with a bounded timeout. First a readiness wait: each probe is tried
//! until it passes, a bounded number of times (the first packet to a new peer may be lost while
//! ARP or the OVS tunnel neighbour resolves), and the probes that needed a retry are counted.
//! Then the matrix: every probe exactly once, and that attempt is its verdict. An attempt says
//! "failed" only when the probe ran and the network refused, stayed silent or answered wrong;
//! a missing namespace or command, or a local socket error, is "could not run".

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::probe::{Probe, Proto, endpoints, plan};
use super::report::{Attempt, Outcome, Readiness, Report};
use crate::error::{LabError, Result};
use crate::host::command::{describe, in_netns, run_with_timeout};
use crate::plan::SERVE_PORT;
use crate::serve::{BLOCKED_TAG, COULD_NOT_RUN_TAG, parse_answer};
use crate::state::State;

/// How long `ping` waits for the echo reply, in seconds.
const PING_WAIT_SECONDS: u32 = 2;

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
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions {
            readiness_attempts: 3,
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
    let readiness = if options.readiness_attempts == 0 {
        vec![None; probes.len()]
    } else {
        in_parallel(&probes, options.concurrency, |probe| {
            Some(wait_ready(&exe, probe, options))
        })
    };
    let attempts = in_parallel(&probes, options.concurrency, |probe| {
        attempt_once(&exe, probe, options)
    });
    let outcomes = probes
        .iter()
        .zip(readiness)
        .zip(attempts)
        .map(|((probe, readiness), attempt)| Outcome::new(probe.clone(), readiness, attempt))
        .collect();
    Ok(Report::new(
        state.topology.wiring,
        state.topology.encap,
        outcomes,
        started.elapsed().as_secs_f64(),
    ))
}

/// `work` for every probe, at most `concurrency` at once; the results in probe order.
fn in_parallel<T: Send + Clone>(
    probes: &[Probe],
    concurrency: usize,
    work: impl Fn(&Probe) -> T + Sync,
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new(vec![None; probes.len()]);
    thread::scope(|scope| {
        for _ in 0..concurrency.clamp(1, probes.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(probe) = probes.get(i) else { break };
                    let result = work(probe);
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
/// probe that could not run is not tried again (its matrix attempt says why).
fn wait_ready(exe: &std::path::Path, probe: &Probe, options: CheckOptions) -> Readiness {
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
            Attempt::CouldNotRun(detail) => {
                readiness.detail = detail;
                break;
            }
        }
    }
    readiness
}

/// One attempt of `probe`.
fn attempt_once(exe: &std::path::Path, probe: &Probe, options: CheckOptions) -> Attempt {
    let (mut cmd, timeout) = match probe.proto {
        Proto::Tcp => {
            let mut cmd = in_netns(&probe.from, exe);
            cmd.args([
                "probe-tcp",
                "--to",
                &format!("{}:{SERVE_PORT}", probe.to_ip),
                "--timeout-ms",
                &options.tcp_timeout.as_millis().to_string(),
            ]);
            (cmd, options.tcp_timeout * 2 + Duration::from_secs(5))
        }
        Proto::Icmp => {
            let mut cmd = in_netns(&probe.from, "ping");
            cmd.args([
                "-c1",
                &format!("-W{PING_WAIT_SECONDS}"),
                "-n",
                "-q",
                &probe.to_ip.to_string(),
            ]);
            (cmd, Duration::from_secs(u64::from(PING_WAIT_SECONDS) + 5))
        }
    };
    let out = match run_with_timeout(&mut cmd, b"", timeout) {
        Ok(out) => out,
        Err(e) => return Attempt::CouldNotRun(e.to_string()),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let attempt = match probe.proto {
        Proto::Tcp => tcp_attempt(probe, &stdout),
        Proto::Icmp => icmp_attempt(&stdout, &stderr),
    };
    attempt.unwrap_or_else(|| {
        Attempt::CouldNotRun(format!(
            "{} exited with {} and no probe result: {}",
            describe(&cmd),
            out.status,
            stderr.trim()
        ))
    })
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
        Err(wrong) => Attempt::Failed(wrong),
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
            path: crate::check::probe::PathKind::PodPodCrossNode,
            proto: Proto::Tcp,
            peer: PeerCheck::Unchanged("10.244.1.11".parse().unwrap()),
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
            Some(Attempt::Failed(why)) if why.contains("instead of lab-n2-p1")
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
}
