//! Who may connect to a listening endpoint, and how that is expressed on each platform.

/// Who may connect to a [`Listener`](crate::Listener).
///
/// TCP listeners cannot restrict callers and are therefore bound to loopback addresses only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// The agent's own account and the machine's administrators, nobody else.
    ///
    /// * Unix: the socket file has mode `0600` and is owned by the running user (the agent runs
    ///   as root), so only that user (and root) can connect.
    /// * Windows: the pipe's DACL is `D:P(A;;GA;;;SY)(A;;GA;;;BA)`: full access for LocalSystem
    ///   and Builtin Administrators, no other entries, protected from inherited entries. The
    ///   server itself must run as SYSTEM or elevated: creating each further pipe instance is
    ///   checked against this DACL.
    Administrators,
}

impl Access {
    /// The permission bits of a Unix socket file serving this access.
    pub fn unix_mode(self) -> u32 {
        match self {
            Access::Administrators => 0o600,
        }
    }

    /// The security descriptor, in SDDL, of a named pipe serving this access.
    pub fn sddl(self) -> &'static str {
        match self {
            Access::Administrators => "D:P(A;;GA;;;SY)(A;;GA;;;BA)",
        }
    }
}
