//! [`Reachability`]: for every (source Pod, destination Pod, port) of the lab, allowed, denied,
//! or not decided by the view at hand; printed as one matrix per port, and compared cell by cell
//! so a failing test shows what differs.

use std::fmt;

use crate::model::{PORTS, Pod, Port, index, pods};

/// A reachability table of the lab (expected or observed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reachability {
    /// `(source × 9 + destination) × 4 + port` → allowed; `None` where not decided.
    cells: Vec<Option<bool>>,
}

fn port_index(port: Port) -> usize {
    PORTS.iter().position(|p| *p == port).unwrap_or_else(|| {
        panic!("{port} is not a lab port");
    })
}

fn cell(s: Pod, d: Pod, port: Port) -> usize {
    (index(s) * pods().len() + index(d)) * PORTS.len() + port_index(port)
}

impl Reachability {
    /// The table `decide` gives for every source, destination and port.
    pub fn from_fn(mut decide: impl FnMut(Pod, Pod, Port) -> Option<bool>) -> Reachability {
        let mut cells = Vec::new();
        for s in pods() {
            for d in pods() {
                for port in PORTS {
                    cells.push(decide(s, d, port));
                }
            }
        }
        Reachability { cells }
    }

    /// Whether `s` reaches `d` on `port`; `None` when not decided.
    pub fn get(&self, s: Pod, d: Pod, port: Port) -> Option<bool> {
        self.cells[cell(s, d, port)]
    }

    /// The cells where `got` differs from this (expected) table, one line each.
    pub fn mismatches(&self, got: &Reachability) -> Vec<String> {
        let word = |v: Option<bool>| match v {
            None => "undecided",
            Some(true) => "allowed",
            Some(false) => "denied",
        };
        let mut out = Vec::new();
        for s in pods() {
            for d in pods() {
                for port in PORTS {
                    let (want, have) = (self.get(s, d, port), got.get(s, d, port));
                    if want != have {
                        out.push(format!(
                            "{}/{} -> {}/{} {port}: expected {}, got {}",
                            s.0,
                            s.1,
                            d.0,
                            d.1,
                            word(want),
                            word(have)
                        ));
                    }
                }
            }
        }
        out
    }

    /// `Ok` when `got` equals this (expected) table; else the expected and observed matrices
    /// of every port that differs, and the differing cells.
    pub fn check(&self, got: &Reachability) -> Result<(), String> {
        let mismatches = self.mismatches(got);
        if mismatches.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        for port in PORTS {
            let differs = pods().into_iter().any(|s| {
                pods()
                    .into_iter()
                    .any(|d| self.get(s, d, port) != got.get(s, d, port))
            });
            if differs {
                text.push_str(&format!(
                    "{port} expected:\n{}{port} got:\n{}",
                    self.matrix(port),
                    got.matrix(port)
                ));
            }
        }
        text.push_str(&mismatches.join("\n"));
        Err(text)
    }

    /// The matrix of one port: a row per source, a column per destination; `.` allowed, `X`
    /// denied, `-` not decided.
    pub fn matrix(&self, port: Port) -> String {
        let mut out = String::from("    ");
        for d in pods() {
            out.push_str(&format!("{}/{} ", d.0, d.1));
        }
        out.push('\n');
        for s in pods() {
            out.push_str(&format!("{}/{} ", s.0, s.1));
            for d in pods() {
                out.push_str(match self.get(s, d, port) {
                    None => " -  ",
                    Some(true) => " .  ",
                    Some(false) => " X  ",
                });
            }
            out.push('\n');
        }
        out
    }
}

impl fmt::Display for Reachability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for port in PORTS {
            write!(f, "{port}:\n{}", self.matrix(port))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_differing_cell_is_named_and_its_port_printed() {
        let want = Reachability::from_fn(|_, _, _| Some(true));
        let got = Reachability::from_fn(|s, d, port| {
            Some(!(s == ("x", "a") && d == ("z", "c") && port == PORTS[2]))
        });
        assert_eq!(want.check(&want.clone()), Ok(()));
        let report = want.check(&got).unwrap_err();
        assert!(report.contains("x/a -> z/c UDP/80: expected allowed, got denied"));
        assert!(report.contains("UDP/80 expected:"));
        assert!(!report.contains("TCP/80 expected:"));
    }
}
