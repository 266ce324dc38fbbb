//! [`Reachability`]: for every (source Pod, destination Pod, port) of the lab, allowed, denied,
//! or not decided by the view at hand; printed as one matrix per port (the comparison with what
//! probes see is [`crate::verdict`]'s).

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
    fn the_matrix_marks_each_cell() {
        let table = Reachability::from_fn(|s, d, port| {
            (s.0 == "x").then_some(!(d == ("z", "c") && port == PORTS[2]))
        });
        assert_eq!(table.get(("x", "a"), ("z", "c"), PORTS[2]), Some(false));
        let udp80 = table.matrix(PORTS[2]);
        let rows: Vec<&str> = udp80.lines().collect();
        assert_eq!(rows.len(), 10);
        assert!(rows[1].starts_with("x/a "));
        assert!(rows[1].trim_end().ends_with("X"), "{udp80}");
        assert!(rows[4].starts_with("y/a "));
        assert!(!rows[4].contains('.') && !rows[4].contains('X'), "{udp80}");
        assert!(!table.matrix(PORTS[0]).contains('X'));
    }
}
