//! [`judge`]: probing a table against what is expected, with the rules every truth-table test
//! follows. A cell expected denied that connects fails at once, whatever the round; a probe
//! that could not run fails, for allowed and denied cells alike, and is never re-probed; only a
//! cell expected allowed that was blocked is probed again, a bounded number of times, and each
//! such re-probe is counted so the test prints how many cells needed one.

use std::collections::BTreeMap;

use crate::model::{PORTS, pods};
use crate::observation::{Cell, Observation, cell_name};
use crate::reachability::Reachability;

/// What probing a table showed.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// Rounds of probes: the first probes every cell the expected table decides, each later one
    /// only the allowed cells still blocked.
    pub rounds: usize,
    /// Probes made over all rounds.
    pub probes: usize,
    /// Cells expected allowed that connected only when probed again, with the round they
    /// connected in.
    pub reprobed: Vec<(Cell, usize)>,
    /// One line per failed cell: what was expected, what was seen, in which round.
    pub failures: Vec<String>,
    expected: Reachability,
    /// Each cell's last observation (`None`: not probed, or the probe could not run).
    observed: Reachability,
}

impl Verdict {
    /// `Ok` when no cell failed; else every failed cell, then the expected and observed
    /// matrices of each port with a failed cell.
    pub fn result(&self) -> Result<(), String> {
        if self.failures.is_empty() {
            return Ok(());
        }
        let mut text = self.failures.join("\n");
        text.push('\n');
        for port in PORTS {
            let failed = pods().into_iter().any(|s| {
                pods()
                    .into_iter()
                    .any(|d| self.expected.get(s, d, port) != self.observed.get(s, d, port))
            });
            if failed {
                text.push_str(&format!(
                    "{port} expected:\n{}{port} observed (- not probed or could not run):\n{}",
                    self.expected.matrix(port),
                    self.observed.matrix(port)
                ));
            }
        }
        Err(text)
    }

    /// "N allowed cells needed a re-probe", naming each with the round it connected in.
    pub fn reprobe_summary(&self) -> String {
        let mut text = format!("{} allowed cells needed a re-probe", self.reprobed.len());
        for (cell, round) in &self.reprobed {
            text.push_str(&format!(
                "\n  {} connected in round {round}",
                cell_name(*cell)
            ));
        }
        text
    }
}

/// Probes every cell `expected` decides with `probe` (given the cells of a round, it returns an
/// observation for each), then re-probes the cells expected allowed that were blocked, at most
/// `reprobes` more rounds, and judges each cell by the rules of this module. A cell `probe`
/// gives no observation for counts as a probe that could not run.
pub fn judge(
    expected: &Reachability,
    reprobes: usize,
    mut probe: impl FnMut(&[Cell]) -> Vec<(Cell, Observation)>,
) -> Verdict {
    let mut pending: Vec<(Cell, bool)> = Vec::new();
    for s in pods() {
        for d in pods() {
            for port in PORTS {
                if let Some(allowed) = expected.get(s, d, port) {
                    pending.push(((s, d, port), allowed));
                }
            }
        }
    }
    let mut last: BTreeMap<Cell, Option<bool>> = BTreeMap::new();
    let mut verdict = Verdict {
        rounds: 0,
        probes: 0,
        reprobed: Vec::new(),
        failures: Vec::new(),
        expected: expected.clone(),
        observed: Reachability::from_fn(|_, _, _| None),
    };
    let mut round = 0;
    while !pending.is_empty() {
        round += 1;
        let cells: Vec<Cell> = pending.iter().map(|(cell, _)| *cell).collect();
        let seen: BTreeMap<Cell, Observation> = probe(&cells).into_iter().collect();
        verdict.probes += cells.len();
        let mut blocked_allowed = Vec::new();
        for (cell, allowed) in pending {
            let observation = seen.get(&cell).cloned().unwrap_or_else(|| {
                Observation::CouldNotRun("the probe gave no result for this cell".into())
            });
            last.insert(cell, observation.reachable());
            let name = cell_name(cell);
            let want = if allowed { "allowed" } else { "denied" };
            match observation {
                Observation::CouldNotRun(why) => verdict.failures.push(format!(
                    "{name}: expected {want}, the probe could not run in round {round}: {why}"
                )),
                Observation::Connected if !allowed => verdict.failures.push(format!(
                    "{name}: expected denied, connected in round {round}"
                )),
                Observation::Connected => {
                    if round > 1 {
                        verdict.reprobed.push((cell, round));
                    }
                }
                Observation::Blocked(_) if !allowed => {}
                Observation::Blocked(how) if round > reprobes => verdict.failures.push(format!(
                    "{name}: expected allowed, blocked in all {round} rounds (last: {how})"
                )),
                Observation::Blocked(_) => blocked_allowed.push((cell, allowed)),
            }
        }
        pending = blocked_allowed;
    }
    verdict.rounds = round;
    verdict.observed = Reachability::from_fn(|s, d, port| last.get(&(s, d, port)).copied()?);
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Pod;

    const XA: Pod = ("x", "a");
    const ZC: Pod = ("z", "c");

    /// Everything allowed except x/a -> z/c on every port.
    fn expected() -> Reachability {
        Reachability::from_fn(|s, d, _| Some(!(s == XA && d == ZC)))
    }

    fn answer(
        cells: &[Cell],
        mut see: impl FnMut(Cell) -> Observation,
    ) -> Vec<(Cell, Observation)> {
        cells.iter().map(|c| (*c, see(*c))).collect()
    }

    fn as_expected(c: Cell) -> Observation {
        if expected().get(c.0, c.1, c.2) == Some(true) {
            Observation::Connected
        } else {
            Observation::Blocked("timed out".into())
        }
    }

    #[test]
    fn a_table_as_expected_passes_in_one_round() {
        let verdict = judge(&expected(), 3, |cells| answer(cells, as_expected));
        assert_eq!(verdict.result(), Ok(()));
        assert_eq!((verdict.rounds, verdict.probes), (1, 9 * 9 * 4));
        assert_eq!(
            verdict.reprobe_summary(),
            "0 allowed cells needed a re-probe"
        );
    }

    #[test]
    fn a_denied_cell_that_connects_once_fails_naming_cell_and_round() {
        // The window: the denied cell connects the first time only; another cell needs a
        // re-probe, so there is a second round it could hide in.
        let leak = (XA, ZC, PORTS[1]);
        let late = (ZC, XA, PORTS[0]);
        let mut probed = BTreeMap::new();
        let verdict = judge(&expected(), 3, |cells| {
            answer(cells, |c| {
                let n = probed.entry(c).and_modify(|n| *n += 1).or_insert(1);
                match (c, *n) {
                    (c, 1) if c == leak => Observation::Connected,
                    (c, 1) if c == late => Observation::Blocked("timed out".into()),
                    _ => as_expected(c),
                }
            })
        });
        let report = verdict.result().unwrap_err();
        assert!(
            report.contains("x/a -> z/c TCP/81: expected denied, connected in round 1"),
            "{report}"
        );
        assert_eq!(verdict.failures.len(), 1, "{report}");
        assert!(report.contains("TCP/81 expected:"), "{report}");
        assert!(!report.contains("TCP/80 expected:"), "{report}");
        assert_eq!(verdict.rounds, 2);
        assert_eq!(probed[&leak], 1, "a denied cell is never re-probed");
    }

    #[test]
    fn only_blocked_allowed_cells_are_re_probed_and_they_are_counted() {
        let late = [(XA, ("y", "b"), PORTS[0]), (ZC, XA, PORTS[3])];
        let mut asked = Vec::new();
        let verdict = judge(&expected(), 3, |cells| {
            asked.push(cells.to_vec());
            let round = asked.len();
            answer(cells, |c| {
                if late.contains(&c) && (round < 2 || (c == late[1] && round < 3)) {
                    Observation::Blocked("timed out".into())
                } else {
                    as_expected(c)
                }
            })
        });
        assert_eq!(verdict.result(), Ok(()));
        assert_eq!(asked.len(), 3);
        assert_eq!(asked[1], late.to_vec());
        assert_eq!(asked[2], vec![late[1]]);
        assert_eq!(verdict.reprobed, vec![(late[0], 2), (late[1], 3)]);
        assert_eq!(verdict.probes, 9 * 9 * 4 + 2 + 1);
        assert_eq!(
            verdict.reprobe_summary(),
            "2 allowed cells needed a re-probe\n  x/a -> y/b TCP/80 connected in round 2\n  z/c -> x/a UDP/81 connected in round 3"
        );
    }

    #[test]
    fn an_allowed_cell_blocked_in_every_round_fails_after_the_bound() {
        let dead = (XA, XA, PORTS[2]);
        let mut rounds = 0;
        let verdict = judge(&expected(), 2, |cells| {
            rounds += 1;
            answer(cells, |c| {
                if c == dead {
                    Observation::Blocked("no echo".into())
                } else {
                    as_expected(c)
                }
            })
        });
        assert_eq!(rounds, 3);
        assert_eq!(
            verdict.failures,
            vec!["x/a -> x/a UDP/80: expected allowed, blocked in all 3 rounds (last: no echo)"]
        );
    }

    #[test]
    fn a_probe_that_could_not_run_fails_for_denied_and_allowed_cells_alike() {
        let verdict = judge(&expected(), 3, |cells| {
            answer(cells, |c| {
                if c.0 == XA {
                    Observation::CouldNotRun("open /var/run/netns/gone: no such file".into())
                } else {
                    as_expected(c)
                }
            })
        });
        assert_eq!(
            verdict.rounds, 1,
            "a probe that could not run is not re-probed"
        );
        assert_eq!(verdict.failures.len(), 9 * 4);
        assert!(verdict.failures.contains(&"x/a -> z/c UDP/80: expected denied, the probe could not run in round 1: open /var/run/netns/gone: no such file".to_string()));
        assert!(verdict.failures.contains(&"x/a -> y/a TCP/80: expected allowed, the probe could not run in round 1: open /var/run/netns/gone: no such file".to_string()));
    }

    #[test]
    fn undecided_cells_are_not_probed_and_a_missing_answer_could_not_run() {
        let only_x = Reachability::from_fn(|s, d, _| (s.0 == "x" && d.0 == "x").then_some(true));
        let verdict = judge(&only_x, 0, |cells| {
            assert!(cells.iter().all(|c| c.0.0 == "x" && c.1.0 == "x"));
            answer(&cells[1..], |_| Observation::Connected)
        });
        assert_eq!(verdict.probes, 3 * 3 * 4);
        assert_eq!(
            verdict.failures,
            vec![
                "x/a -> x/a TCP/80: expected allowed, the probe could not run in round 1: the probe gave no result for this cell"
            ]
        );
    }
}
