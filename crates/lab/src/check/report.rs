//! Probe outcomes and how they are shown: a source × target matrix for people, a JSON document
//! for machines, and the verdict. Each probe's verdict is its one attempt in the matrix: passed,
//! failed (the network refused, stayed silent or answered wrong), or could not run (its
//! namespace or command missing, a local socket error; never taken for "failed as the network
//! would"). A probe through a Service that was never installed on the Node that load-balances
//! it is not run: it is "not programmed", apart from both. The readiness wait before the matrix
//! is counted apart; a probe whose readiness and matrix results disagree is flaky. The check
//! passes only with every probe passed, none that could not run, none not programmed and none
//! flaky. The Services' probes get a matrix of their own, and the frontends waited for are
//! listed with the time each took to appear.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;

use super::probe::{Frontend, PeerCheck, Probe};
use crate::plan::{Encap, Wiring};

/// One attempt of a probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// It passed; for TCP, who answered and the source address it saw.
    Passed(Option<(String, String)>),
    /// The network refused or stayed silent: why.
    Failed(String),
    /// The wrong endpoint answered, or it saw the wrong source, or a name resolved to the wrong
    /// address: what was wrong. A verdict of failed; the readiness wait stops at it, since
    /// only a lost first packet may be retried, never a wrong answer.
    WrongAnswer(String),
    /// The probe itself could not run: why.
    CouldNotRun(String),
    /// Not run: a Service frontend it goes through was never installed (why).
    NotProgrammed(String),
}

/// A probe's verdict: its attempt in the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Passed.
    Passed,
    /// The network refused, stayed silent, or the answer was wrong.
    Failed,
    /// The probe could not run.
    CouldNotRun,
    /// Not run: a Service frontend it needs was never installed.
    NotProgrammed,
}

/// A probe's readiness wait before the matrix: attempts until the first pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Readiness {
    /// Attempts made (1 when the first passed).
    pub attempts: u32,
    /// Whether one passed.
    pub ready: bool,
    /// Why the attempts before the passing one failed (the last of them); empty when the
    /// first passed.
    pub detail: String,
}

/// The result of one probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The probe.
    #[serde(flatten)]
    pub probe: Probe,
    /// Whether it counts as passed: its matrix attempt passed and it is not flaky.
    pub ok: bool,
    /// Its matrix attempt.
    pub verdict: Verdict,
    /// Its readiness wait (none when the check ran without one).
    pub readiness: Option<Readiness>,
    /// Who answered (TCP).
    pub answered_by: Option<String>,
    /// The source address the target saw (TCP).
    pub peer_seen: Option<String>,
    /// Why the matrix attempt did not pass (empty when it passed).
    pub detail: String,
}

impl Outcome {
    /// The outcome of `probe` from its readiness wait and its matrix attempt.
    pub fn new(probe: Probe, readiness: Option<Readiness>, attempt: Attempt) -> Outcome {
        let mut outcome = Outcome {
            probe,
            ok: false,
            verdict: Verdict::Passed,
            readiness,
            answered_by: None,
            peer_seen: None,
            detail: String::new(),
        };
        match attempt {
            Attempt::Passed(seen) => {
                if let Some((name, peer)) = seen {
                    outcome.answered_by = Some(name);
                    outcome.peer_seen = Some(peer);
                }
            }
            Attempt::Failed(detail) | Attempt::WrongAnswer(detail) => {
                outcome.verdict = Verdict::Failed;
                outcome.detail = detail;
            }
            Attempt::CouldNotRun(detail) => {
                outcome.verdict = Verdict::CouldNotRun;
                outcome.detail = detail;
            }
            Attempt::NotProgrammed(detail) => {
                outcome.verdict = Verdict::NotProgrammed;
                outcome.detail = detail;
            }
        }
        outcome.ok = outcome.verdict == Verdict::Passed && !outcome.flaky();
        outcome
    }

    /// Its readiness wait and its matrix attempt disagree: it was ready and then failed, or
    /// never ready and then passed.
    pub fn flaky(&self) -> bool {
        self.readiness
            .as_ref()
            .is_some_and(|r| r.ready != (self.verdict == Verdict::Passed))
    }

    /// It became ready only after a failed attempt (the first packet to a new peer can be lost
    /// while ARP resolves).
    pub fn readiness_retried(&self) -> bool {
        self.readiness
            .as_ref()
            .is_some_and(|r| r.ready && r.attempts > 1)
    }
}

/// Counts over all outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Probes run.
    pub total: usize,
    /// Passed in the matrix.
    pub passed: usize,
    /// Failed in the matrix: the network refused, stayed silent, or answered wrong.
    pub failed: usize,
    /// Could not run in the matrix.
    pub could_not_run: usize,
    /// Not run: a Service frontend they need was never installed.
    pub not_programmed: usize,
    /// Readiness and matrix disagree (counted also as passed or failed).
    pub flaky: usize,
    /// Became ready only after a failed readiness attempt (not a failure).
    pub readiness_retries: usize,
}

/// The whole check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Every probe passed, none could not run, none is flaky.
    pub ok: bool,
    /// The lab's wiring.
    pub wiring: Wiring,
    /// The lab's encap mode.
    pub encap: Encap,
    /// Whether egress SNAT was verified (`verified`) or is not part of this wiring (`n/a`).
    pub snat: &'static str,
    /// Counts.
    pub summary: Summary,
    /// Wall time of the check.
    pub seconds: f64,
    /// Every outcome, in probe order.
    pub probes: Vec<Outcome>,
    /// The Service frontends waited for before the probes, in order.
    pub programmed: Vec<FrontendStatus>,
}

/// Whether a Service frontend was installed on its Node before the probes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FrontendStatus {
    /// The frontend.
    #[serde(flatten)]
    pub frontend: Frontend,
    /// What the wait found.
    pub state: FrontendState,
    /// Seconds from the start of the wait until it was seen; none if it never was.
    pub installed_after: Option<f64>,
    /// Why it was not seen: not installed, or its Node's flows could not be read.
    pub detail: String,
}

/// What the wait for a Service frontend found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FrontendState {
    /// Its flow was seen.
    Installed,
    /// Its Node's flows were read until the deadline and it was not among them.
    NotProgrammed,
    /// Its Node's flows could not be read (the agent's API or antctl failed), so nothing is
    /// known: the probes through it could not run.
    Unreadable,
}

impl Report {
    /// A report over `probes`.
    pub fn new(wiring: Wiring, encap: Encap, probes: Vec<Outcome>, seconds: f64) -> Report {
        let count = |verdict| probes.iter().filter(|o| o.verdict == verdict).count();
        let summary = Summary {
            total: probes.len(),
            passed: count(Verdict::Passed),
            failed: count(Verdict::Failed),
            could_not_run: count(Verdict::CouldNotRun),
            not_programmed: count(Verdict::NotProgrammed),
            flaky: probes.iter().filter(|o| o.flaky()).count(),
            readiness_retries: probes.iter().filter(|o| o.readiness_retried()).count(),
        };
        let snat = if probes
            .iter()
            .any(|o| matches!(o.probe.peer, PeerCheck::Snat(_)))
        {
            "verified"
        } else {
            "n/a"
        };
        Report {
            ok: summary.failed == 0
                && summary.could_not_run == 0
                && summary.not_programmed == 0
                && summary.flaky == 0,
            wiring,
            encap,
            snat,
            summary,
            seconds,
            probes,
            programmed: Vec::new(),
        }
    }

    /// The JSON document.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The matrices: the connectivity matrix, then the Services' matrix (when the lab has
    /// Services): one row per source, one column per target, each cell a letter per protocol
    /// (`T` TCP, `I` ICMP, `U` DNS over UDP then TCP, `V` DNS over TCP then TCP) followed by
    /// `+` passed, `X` failed, `?` could not run, `!` not programmed, `~` flaky; then the
    /// Service frontends that were not installed, every probe that did not pass and every
    /// readiness retry with its details, then the counts.
    pub fn to_text(&self) -> String {
        let (services, connectivity): (Vec<&Outcome>, Vec<&Outcome>) =
            self.probes.iter().partition(|o| o.probe.path.is_service());
        let mut out = matrix(&connectivity);
        out.push_str("(T=TCP to serve:8080, I=ICMP echo; + passed, X failed, ? could not run, ~ flaky, . not probed)\n");
        if !services.is_empty() {
            out.push_str("\nServices:\n");
            out.push_str(&matrix(&services));
            out.push_str(
                "(T=TCP through the Service, U=DNS over UDP then TCP, V=DNS over TCP then TCP; \
                 + passed, X failed, ? could not run, ! not programmed, ~ flaky, . not probed)\n",
            );
            let installed: Vec<f64> = self
                .programmed
                .iter()
                .filter_map(|f| f.installed_after)
                .collect();
            let _ = writeln!(
                out,
                "{} of {} Service frontends installed (the last after {:.1} s)",
                installed.len(),
                self.programmed.len(),
                installed.iter().copied().fold(0.0, f64::max)
            );
            for f in &self.programmed {
                let fe = &f.frontend;
                let state = match f.state {
                    FrontendState::Installed => continue,
                    FrontendState::NotProgrammed => "NOT PROGRAMMED",
                    FrontendState::Unreadable => "UNKNOWN",
                };
                let _ = writeln!(
                    out,
                    "  {} {} {}:{} ({}): {state}: {}",
                    fe.node,
                    fe.transport.as_str(),
                    fe.ip,
                    fe.port,
                    fe.service,
                    f.detail
                );
            }
        }
        let mut notes = BTreeSet::new();
        for o in &self.probes {
            let readiness = o.readiness.as_ref();
            let note = if o.flaky() {
                let r = readiness.map_or((0, ""), |r| (r.attempts, r.detail.as_str()));
                if o.verdict == Verdict::Passed {
                    format!(
                        "FLAKY: not ready after {} attempts ({}), then passed",
                        r.0, r.1
                    )
                } else {
                    format!(
                        "FLAKY: ready at readiness attempt {}, then {}: {}",
                        r.0,
                        if o.verdict == Verdict::Failed {
                            "failed"
                        } else {
                            "could not run"
                        },
                        o.detail
                    )
                }
            } else if o.verdict == Verdict::Failed {
                format!("FAILED: {}", o.detail)
            } else if o.verdict == Verdict::CouldNotRun {
                format!("COULD NOT RUN: {}", o.detail)
            } else if o.verdict == Verdict::NotProgrammed {
                format!("NOT PROGRAMMED: {}", o.detail)
            } else if let Some(r) = readiness.filter(|_| o.readiness_retried()) {
                format!("ready at readiness attempt {}: {}", r.attempts, r.detail)
            } else {
                continue;
            };
            notes.insert(format!(
                "  {} -> {} ({}) {}: {note}\n",
                o.probe.from,
                o.probe.to,
                o.probe.to_ip,
                o.probe.proto.as_str()
            ));
        }
        out.extend(notes);
        let s = self.summary;
        let _ = writeln!(
            out,
            "{}: {} probes, {} passed, {} failed, {} could not run, {}{} flaky, {} needed a \
             readiness retry; wiring {}{}, SNAT {}; {:.1} s",
            if self.ok { "PASS" } else { "FAIL" },
            s.total,
            s.passed,
            s.failed,
            s.could_not_run,
            if services.is_empty() {
                String::new()
            } else {
                format!("{} not programmed, ", s.not_programmed)
            },
            s.flaky,
            s.readiness_retries,
            self.wiring,
            match self.wiring {
                Wiring::Agent => format!(" ({})", self.encap),
                Wiring::Normal => String::new(),
            },
            self.snat,
            self.seconds
        );
        out
    }
}

/// One source × target matrix of `outcomes`.
fn matrix(outcomes: &[&Outcome]) -> String {
    let mut sources: Vec<&str> = Vec::new();
    let mut targets: Vec<&str> = Vec::new();
    for o in outcomes {
        push_unique(&mut sources, &o.probe.from);
    }
    // Targets in source order first, so the matrix reads like a square.
    for name in sources
        .iter()
        .copied()
        .chain(outcomes.iter().map(|o| o.probe.to.as_str()))
    {
        if outcomes.iter().any(|o| o.probe.to == name) {
            push_unique(&mut targets, name);
        }
    }
    let width = targets.iter().map(|t| t.len()).max().unwrap_or(0).max(4);
    let row_head = sources
        .iter()
        .map(|s| s.len())
        .max()
        .unwrap_or(0)
        .max("from \\ to".len());
    let mut out = String::new();
    let _ = write!(out, "{:<row_head$}", "from \\ to");
    for t in &targets {
        let _ = write!(out, " {t:>width$}");
    }
    out.push('\n');
    for s in &sources {
        let _ = write!(out, "{s:<row_head$}");
        for t in &targets {
            let cell = cell(outcomes, s, t);
            let _ = write!(out, " {cell:>width$}");
        }
        out.push('\n');
    }
    out
}

/// The cell of `from` → `to`: each protocol probed, in probe order, with its mark; `.` when
/// nothing was probed. The connectivity matrix always shows `T` and `I`.
fn cell(outcomes: &[&Outcome], from: &str, to: &str) -> String {
    let here: Vec<&&Outcome> = outcomes
        .iter()
        .filter(|o| o.probe.from == from && o.probe.to == to)
        .collect();
    if here.is_empty() {
        return ".".to_owned();
    }
    let mut cell = String::new();
    for o in here {
        let mark = if o.flaky() {
            '~'
        } else {
            match o.verdict {
                Verdict::Passed => '+',
                Verdict::Failed => 'X',
                Verdict::CouldNotRun => '?',
                Verdict::NotProgrammed => '!',
            }
        };
        cell.push(o.probe.proto.letter());
        cell.push(mark);
    }
    cell
}

fn push_unique<'a>(list: &mut Vec<&'a str>, name: &'a str) {
    if !list.contains(&name) {
        list.push(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::probe::{PathKind, Proto, plan, tests::sample_endpoints};

    fn ready(attempts: u32, detail: &str) -> Option<Readiness> {
        Some(Readiness {
            attempts,
            ready: true,
            detail: detail.into(),
        })
    }

    /// The 2 × 2 lab's probes: one failed, one that could not run, one flaky, one ready only
    /// at its second readiness attempt; the rest passed.
    fn outcomes() -> Vec<Outcome> {
        plan(&sample_endpoints(), Wiring::Agent)
            .into_iter()
            .map(|probe| {
                let is = |from: &str, to: &str, proto| {
                    probe.from == from && probe.to == to && probe.proto == proto
                };
                if is("lab-n1-p1", "lab-ext", Proto::Tcp) {
                    let detail =
                        "lab-ext saw source 10.244.1.11, expected the Node IP 10.10.0.11 (SNAT)";
                    Outcome::new(
                        probe,
                        Some(Readiness {
                            attempts: 3,
                            ready: false,
                            detail: detail.into(),
                        }),
                        Attempt::Failed(detail.into()),
                    )
                } else if is("lab-n1-p2", "lab-n1", Proto::Icmp) {
                    Outcome::new(
                        probe,
                        None,
                        Attempt::CouldNotRun("exec of \"ping\" failed".into()),
                    )
                } else if is("lab-n2-p2", "lab-n1-p1", Proto::Icmp) {
                    Outcome::new(
                        probe,
                        ready(1, ""),
                        Attempt::Failed("no echo reply within 2 s".into()),
                    )
                } else if is("lab-n2-p1", "lab-n1-p1", Proto::Icmp) {
                    Outcome::new(
                        probe,
                        ready(2, "no echo reply within 2 s"),
                        Attempt::Passed(None),
                    )
                } else {
                    Outcome::new(probe, ready(1, ""), Attempt::Passed(None))
                }
            })
            .collect()
    }

    #[test]
    fn verdict_and_counts() {
        let r = Report::new(Wiring::Agent, Encap::Geneve, outcomes(), 2.0);
        assert!(!r.ok);
        assert_eq!(
            r.summary,
            Summary {
                total: 64,
                passed: 61,
                failed: 2,
                could_not_run: 1,
                not_programmed: 0,
                flaky: 1,
                readiness_retries: 1,
            }
        );
        assert_eq!(r.snat, "verified");
        let all_ok: Vec<Outcome> = outcomes()
            .into_iter()
            .map(|o| Outcome::new(o.probe, ready(1, ""), Attempt::Passed(None)))
            .collect();
        let r = Report::new(Wiring::Normal, Encap::Geneve, all_ok, 1.0);
        assert!(r.ok);
        assert_eq!(r.summary.failed, 0);
    }

    #[test]
    fn a_probe_that_could_not_run_or_is_flaky_fails_the_check_alone() {
        let with = |odd: Attempt, readiness: Option<Readiness>| {
            let probes: Vec<Outcome> = outcomes()
                .into_iter()
                .enumerate()
                .map(|(i, o)| {
                    if i == 0 {
                        Outcome::new(o.probe, readiness.clone(), odd.clone())
                    } else {
                        Outcome::new(o.probe, ready(1, ""), Attempt::Passed(None))
                    }
                })
                .collect();
            Report::new(Wiring::Agent, Encap::Geneve, probes, 1.0)
        };
        let cannot = with(Attempt::CouldNotRun("no netns".into()), ready(1, ""));
        assert!(!cannot.ok);
        assert_eq!(
            (cannot.summary.failed, cannot.summary.could_not_run),
            (0, 1)
        );
        let late = with(
            Attempt::Passed(None),
            Some(Readiness {
                attempts: 3,
                ready: false,
                detail: "timeout".into(),
            }),
        );
        assert!(!late.ok);
        assert_eq!((late.summary.failed, late.summary.flaky), (0, 1));
        let retried = with(Attempt::Passed(None), ready(2, "timeout"));
        assert!(retried.ok, "a readiness retry alone is not a failure");
        assert_eq!(retried.summary.readiness_retries, 1);
    }

    #[test]
    fn matrix_marks_each_cell() {
        let text = Report::new(Wiring::Agent, Encap::Geneve, outcomes(), 2.0).to_text();
        let lines: Vec<&str> = text.lines().collect();
        let header: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(
            header,
            [
                "from",
                "\\",
                "to",
                "lab-n1-p1",
                "lab-n1-p2",
                "lab-n2-p1",
                "lab-n2-p2",
                "lab-n1",
                "lab-n2",
                "lab-ext"
            ]
        );
        let row = |name: &str| {
            lines
                .iter()
                .find(|l| l.starts_with(name))
                .unwrap()
                .split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            row("lab-n1-p1 "),
            [".", "T+I+", "T+I+", "T+I+", "T+I+", "T+I+", "TXI+"]
        );
        assert_eq!(
            row("lab-n1-p2 "),
            ["T+I+", ".", "T+I+", "T+I+", "T+I?", "T+I+", "T+I+"]
        );
        assert_eq!(
            row("lab-n2-p2 "),
            ["T+I~", "T+I+", "T+I+", ".", "T+I+", "T+I+", "T+I+"]
        );
        assert_eq!(
            row("lab-n1 "),
            ["T+I+", "T+I+", "T+I+", "T+I+", ".", ".", "."]
        );
        for note in [
            "  lab-n1-p1 -> lab-ext (10.10.0.100) tcp: FAILED: lab-ext saw source",
            "  lab-n1-p2 -> lab-n1 (10.10.0.11) icmp: COULD NOT RUN: exec of \"ping\" failed",
            "  lab-n2-p2 -> lab-n1-p1 (10.244.1.11) icmp: FLAKY: ready at readiness attempt 1, then failed: no echo reply within 2 s",
            "  lab-n2-p1 -> lab-n1-p1 (10.244.1.11) icmp: ready at readiness attempt 2: no echo reply within 2 s",
        ] {
            assert!(text.contains(note), "{note}\n{text}");
        }
        assert!(text.trim_end().ends_with(
            "FAIL: 64 probes, 61 passed, 2 failed, 1 could not run, 1 flaky, 1 needed a readiness \
             retry; wiring agent (geneve), SNAT verified; 2.0 s"
        ), "{text}");
    }

    #[test]
    fn json_carries_every_probe_flat() {
        let r = Report::new(Wiring::Normal, Encap::Vxlan, outcomes(), 2.0);
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(v["ok"], false);
        assert_eq!(v["wiring"], "normal");
        assert_eq!(v["snat"], "verified");
        assert_eq!(v["summary"]["total"], 64);
        assert_eq!(v["summary"]["could_not_run"], 1);
        let first = &v["probes"][0];
        assert_eq!(first["from"], "lab-n1-p1");
        assert_eq!(first["to"], "lab-n1-p2");
        assert_eq!(first["path"], "pod-pod-same-node");
        assert_eq!(first["proto"], "tcp");
        assert_eq!(
            first["peer"],
            serde_json::json!({"expect": "unchanged", "ip": "10.244.1.11"})
        );
        assert_eq!(first["ok"], true);
        assert_eq!(first["verdict"], "passed");
        assert_eq!(first["readiness"]["attempts"], 1);
        let cannot = v["probes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["verdict"] == "could-not-run")
            .unwrap();
        assert_eq!(cannot["ok"], false);
        assert_eq!(cannot["detail"], "exec of \"ping\" failed");
    }

    #[test]
    fn services_get_a_matrix_of_their_own_and_not_programmed_is_a_failure_of_its_own() {
        use crate::check::service_probe::service_plan;
        use crate::plan::{ClusterApi, Topology};
        use crate::state::{PodRecord, State};
        let mut state = State::building(
            Topology::new(2, 2, Encap::Geneve, Wiring::Agent).unwrap(),
            None,
            None,
        );
        state.api = ClusterApi::Fake;
        for p in state.topology.pods() {
            state.pods.push(PodRecord {
                name: p.name(),
                node: p.node().name(),
                ip: Some(p.normal_ip()),
            });
        }
        let mut all: Vec<Outcome> = outcomes()
            .into_iter()
            .map(|o| Outcome::new(o.probe, ready(1, ""), Attempt::Passed(None)))
            .collect();
        for probe in service_plan(&state) {
            let unprogrammed = probe.from == "lab-ext" && probe.to == "lab-lb";
            all.push(if unprogrammed {
                Outcome::new(
                    probe,
                    None,
                    Attempt::NotProgrammed("default/lab-lb: no ServiceLB flow".into()),
                )
            } else {
                Outcome::new(probe, ready(1, ""), Attempt::Passed(None))
            });
        }
        let r = Report::new(Wiring::Agent, Encap::Geneve, all, 3.0);
        assert!(!r.ok);
        assert_eq!(
            (
                r.summary.total,
                r.summary.failed,
                r.summary.could_not_run,
                r.summary.not_programmed
            ),
            (89, 0, 0, 1)
        );
        assert!(r.probes.iter().any(|o| o.probe.path == PathKind::PodDns));
        let text = r.to_text();
        let services = text.split("\nServices:\n").nth(1).unwrap();
        let lines: Vec<&str> = services.lines().collect();
        let header: Vec<&str> = lines[0].split_whitespace().collect();
        assert_eq!(
            header[3..],
            [
                "lab-local-n1",
                "lab-local-n2",
                "lab-nodeport@lab-n1",
                "lab-nodeport@lab-n2",
                "lab-etp-local@lab-n1",
                "lab-etp-local@lab-n2",
                "lab-lb"
            ]
        );
        let row = |name: &str| {
            lines
                .iter()
                .find(|l| l.starts_with(name))
                .unwrap()
                .split_whitespace()
                .skip(1)
                .collect::<Vec<_>>()
        };
        assert_eq!(row("lab-n1-p2 "), ["T+U+V+", "T+", ".", ".", ".", ".", "."]);
        assert_eq!(row("lab-n2 "), ["T+", "T+", ".", ".", ".", ".", "."]);
        assert_eq!(row("lab-ext "), [".", ".", "T+", "T+", "T+", "T+", "T!"]);
        assert!(
            text.contains("  lab-ext -> lab-lb (192.0.2.10) tcp: NOT PROGRAMMED: default/lab-lb"),
            "{text}"
        );
        assert!(
            text.trim_end().ends_with(
                "FAIL: 89 probes, 88 passed, 0 failed, 0 could not run, 1 not programmed, 0 flaky, \
                 0 needed a readiness retry; wiring agent (geneve), SNAT verified; 3.0 s"
            ),
            "{text}"
        );
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        let lb = v["probes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["to"] == "lab-lb")
            .unwrap();
        assert_eq!(lb["verdict"], "not-programmed");
        assert_eq!(lb["path"], "external-load-balancer");
        assert_eq!(lb["answerer"], "lab-n2-p1");
        assert_eq!(lb["frontends"][0]["transport"], "TCP");
        assert_eq!(v["summary"]["not_programmed"], 1);
    }
}
