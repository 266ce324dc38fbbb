//! Probe outcomes and how they are shown: a source × target matrix for people, a JSON document
//! for machines, and the verdict (every probe passed).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;

use super::probe::{PeerCheck, Probe, Proto};
use crate::plan::{Encap, Wiring};

/// The result of one probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The probe.
    #[serde(flatten)]
    pub probe: Probe,
    /// Whether it passed (on any attempt).
    pub ok: bool,
    /// Attempts made (1 when the first passed).
    pub attempts: u32,
    /// Who answered (TCP).
    pub answered_by: Option<String>,
    /// The source address the target saw (TCP).
    pub peer_seen: Option<String>,
    /// Why the last failed attempt failed (empty when the first attempt passed).
    pub detail: String,
}

impl Outcome {
    /// Passed, but not at the first attempt.
    pub fn flaky(&self) -> bool {
        self.ok && self.attempts > 1
    }
}

/// Counts over all outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Probes run.
    pub total: usize,
    /// Passed.
    pub passed: usize,
    /// Failed after every attempt.
    pub failed: usize,
    /// Passed after a retry.
    pub flaky: usize,
}

/// The whole check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Every probe passed.
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
        let passed = probes.iter().filter(|o| o.ok).count();
        let summary = Summary {
            total: probes.len(),
            passed,
            failed: probes.len() - passed,
            flaky: probes.iter().filter(|o| o.flaky()).count(),
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
            ok: summary.failed == 0,
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
    /// ICMP) each followed by `+` passed, `~` passed after a retry, `X` failed; then the failed
    /// and flaky probes with their details, then the counts.
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
        out.push_str("(T=TCP to serve:8080, I=ICMP echo; + passed, ~ passed after retry, X failed, . not probed)\n");
        let mut notes = BTreeSet::new();
        for o in self.probes.iter().filter(|o| !o.ok || o.flaky()) {
            let verdict = if o.ok {
                format!("passed at attempt {}", o.attempts)
            } else {
                format!("FAILED after {} attempts", o.attempts)
            };
            let proto = match o.probe.proto {
                Proto::Tcp => "tcp",
                Proto::Icmp => "icmp",
            };
            notes.insert(format!(
                "  {} -> {} ({}) {proto}: {verdict}: {}\n",
                o.probe.from, o.probe.to, o.probe.to_ip, o.detail
            ));
        }
        out.extend(notes);
        let s = self.summary;
        let _ = writeln!(
            out,
            "{}: {} probes, {} passed, {} failed, {} flaky; wiring {}{}, SNAT {}; {:.1} s",
            if self.ok { "PASS" } else { "FAIL" },
            s.total,
            s.passed,
            s.failed,
            s.flaky,
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
                    if !o.ok {
                        'X'
                    } else if o.flaky() {
                        '~'
                    } else {
                        '+'
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

    fn outcomes() -> Vec<Outcome> {
        plan(&sample_endpoints(), Wiring::Agent)
            .into_iter()
            .map(|probe| {
                let failed =
                    probe.from == "lab-n1-p1" && probe.to == "lab-ext" && probe.proto == Proto::Tcp;
                let flaky = probe.from == "lab-n2-p2"
                    && probe.to == "lab-n1-p1"
                    && probe.proto == Proto::Icmp;
                Outcome {
                    ok: !failed,
                    attempts: if failed {
                        3
                    } else if flaky {
                        2
                    } else {
                        1
                    },
                    answered_by: None,
                    peer_seen: None,
                    detail: if failed {
                        "lab-ext saw source 10.244.1.11, expected the Node IP 10.10.0.11 (SNAT)"
                            .into()
                    } else if flaky {
                        "timeout".into()
                    } else {
                        String::new()
                    },
                    probe,
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
                passed: 63,
                failed: 1,
                flaky: 1
            }
        );
        assert_eq!(r.snat, "verified");
        let all_ok: Vec<Outcome> = outcomes()
            .into_iter()
            .map(|o| Outcome {
                ok: true,
                attempts: 1,
                ..o
            })
            .collect();
        let r = Report::new(Wiring::Normal, Encap::Geneve, all_ok, 1.0);
        assert!(r.ok);
        assert_eq!(r.summary.failed, 0);
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
            row("lab-n2-p2 "),
            ["T+I~", "T+I+", "T+I+", ".", "T+I+", "T+I+", "T+I+"]
        );
        assert_eq!(
            row("lab-n1 "),
            ["T+I+", "T+I+", "T+I+", "T+I+", ".", ".", "."]
        );
        assert!(text.contains(
            "  lab-n1-p1 -> lab-ext (10.10.0.100) tcp: FAILED after 3 attempts: lab-ext saw source"
        ));
        assert!(
            text.contains(
                "  lab-n2-p2 -> lab-n1-p1 (10.244.1.11) icmp: passed at attempt 2: timeout"
            )
        );
        assert!(text.trim_end().ends_with("FAIL: 64 probes, 63 passed, 1 failed, 1 flaky; wiring agent (geneve), SNAT verified; 2.0 s"));
    }

    #[test]
    fn json_carries_every_probe_flat() {
        let r = Report::new(Wiring::Normal, Encap::Vxlan, outcomes(), 2.0);
        let v: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        assert_eq!(v["ok"], false);
        assert_eq!(v["wiring"], "normal");
        assert_eq!(v["snat"], "verified");
        assert_eq!(v["summary"]["total"], 64);
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
    }
}
