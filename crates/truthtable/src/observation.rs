//! [`Observation`]: what one probe of one cell saw, in three states, so that a probe that could
//! not run (its namespace or command missing, a local socket error) is never taken for traffic
//! the policy blocked.

use std::fmt;

use crate::model::{Pod, Port};

/// One cell of a table: source Pod, destination Pod, port.
pub type Cell = (Pod, Pod, Port);

/// The cell as people read it: `x/a -> y/b TCP/80`.
pub fn cell_name((s, d, port): Cell) -> String {
    format!("{}/{} -> {}/{} {port}", s.0, s.1, d.0, d.1)
}

/// What one probe of a cell saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// The connection got through: a TCP handshake completed, a UDP datagram came back, a
    /// traced packet left on the destination's port.
    Connected,
    /// The network answered no, as a policy does: refused, reset, timed out, dropped. Says how.
    Blocked(String),
    /// The probe itself did not run, so it says nothing about the network: its namespace or
    /// command is missing, or a socket call failed for a local reason (bind, socket creation).
    /// Says why.
    CouldNotRun(String),
}

impl Observation {
    /// The observation as a table cell: connected, blocked, or `None` when the probe did not
    /// run.
    pub fn reachable(&self) -> Option<bool> {
        match self {
            Observation::Connected => Some(true),
            Observation::Blocked(_) => Some(false),
            Observation::CouldNotRun(_) => None,
        }
    }
}

impl fmt::Display for Observation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Observation::Connected => f.write_str("connected"),
            Observation::Blocked(how) => write!(f, "blocked ({how})"),
            Observation::CouldNotRun(why) => write!(f, "could not run ({why})"),
        }
    }
}
