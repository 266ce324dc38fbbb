//! Probe outcomes and how they are shown: a source × target matrix for people, a JSON document
//! for machines, and the verdict. Each probe's verdict is its one attempt in the matrix: passed,
//! failed (the network refused, stayed silent or answered wrong), or could not run (its
//! namespace or command missing, a local socket error; never taken for "failed as the network
//! would"). The readiness wait before the matrix is counted apart; a probe whose readiness and
//! matrix results disagree is flaky. The check passes only with every probe passed, none that
//! could not run and none flaky.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;

use super::probe::{PeerCheck, Probe, Proto};
use crate::plan::{Encap, Wiring};

/// One attempt of a probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// It passed; for TCP, who answered and the source address it saw.
    Passed(Option<(String, String)>),
    /// The network refused, stayed silent, or the answer was wrong: why.
    Failed(String),
    /// The probe itself could not run: why.
    CouldNotRun(String),
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
            Attempt::Failed(detail) => {
                outcome.verdict = Verdict::Failed;
                outcome.detail = detail;
            }
            Attempt::CouldNotRun(detail) => {
                outcome.verdict = Verdict::CouldNotRun;
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
            ok: summary.failed == 0 && summary.could_not_run == 0 && summary.flaky == 0,
            wiring,
            encap,
            snat,
            summary,
            seconds,
            probes,
        }
    }

    /// The JSON document.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// The matrix: one row per source, one column per target, each cell `T` then `I` (TCP,
    /// ICMP) each followed by `+` passed, `X` failed, `?` could not run, `~` flaky; then every
    /// probe that did not pass and every readiness retry with its details, then the counts.
    pub fn to_text(&self) -> String {
        let mut sources: Vec<&str> = Vec::new();
        let mut targets: Vec<&str> = Vec::new();
        for o in &self.probes {
            push_unique(&mut sources, &o.probe.from);
        }
        // Targets in source order first, so the matrix reads like a square.
        for name in sources
            .iter()
            .copied()
            .chain(self.probes.iter().map(|o| o.probe.to.as_str()))
        {
            if self.probes.iter().any(|o| o.probe.to == name) {
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
                let cell = self.cell(s, t);
                let _ = write!(out, " {cell:>width$}");
            }
            out.push('\n');
        }
        out.push_str("(T=TCP to serve:8080, I=ICMP echo; + passed, X failed, ? could not run, ~ flaky, . not probed)\n");
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
            } else if let Some(r) = readiness.filter(|_| o.readiness_retried()) {
                format!("ready at readiness attempt {}: {}", r.attempts, r.detail)
            } else {
                continue;
            };
            let proto = match o.probe.proto {
                Proto::Tcp => "tcp",
                Proto::Icmp => "icmp",
            };
            notes.insert(format!(
                "  {} -> {} ({}) {proto}: {note}\n",
                o.probe.from, o.probe.to, o.probe.to_ip
            ));
        }
        out.extend(notes);
        let s = self.summary;
        let _ = writeln!(
            out,
            "{}: {} probes, {} passed, {} failed, {} could not run, {} flaky, {} needed a \
             readiness retry; wiring {}{}, SNAT {}; {:.1} s",
            if self.ok { "PASS" } else { "FAIL" },
            s.total,
            s.passed,
            s.failed,
            s.could_not_run,
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

    fn cell(&self, from: &str, to: &str) -> String {
        let mark = |proto| {
            self.probes
                .iter()
                .find(|o| o.probe.from == from && o.probe.to == to && o.probe.proto == proto)
                .map_or('.', |o| {
                    if o.flaky() {
                        '~'
                    } else {
                        match o.verdict {
                            Verdict::Passed => '+',
                            Verdict::Failed => 'X',
                            Verdict::CouldNotRun => '?',
                        }
                    }
                })
        };
        let (t, i) = (mark(Proto::Tcp), mark(Proto::Icmp));
        if t == '.' && i == '.' {
            ".".to_owned()
        } else {
            format!("T{t}I{i}")
        }
    }
}

fn push_unique<'a>(list: &mut Vec<&'a str>, name: &'a str) {
    if !list.contains(&name) {
        list.push(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::probe::{plan, tests::sample_endpoints};

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
}
