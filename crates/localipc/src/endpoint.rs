//! The endpoint address syntax and the Open vSwitch named-pipe naming rule.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// Where a local service listens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// A Unix domain socket path (`unix:/var/run/openvswitch/db.sock`).
    Unix(PathBuf),
    /// A TCP address (`tcp:127.0.0.1:6640`).
    Tcp(String),
    /// A Windows named pipe (`npipe:\\.\pipe\cnisock`).
    NamedPipe(String),
}

/// Why an endpoint string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid endpoint {input:?}: {reason}")]
pub struct EndpointParseError {
    /// The string that was parsed.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl FromStr for Endpoint {
    type Err = EndpointParseError;

    /// Parses `unix:PATH`, `tcp:HOST:PORT` or `npipe:\\.\pipe\NAME`. A bare `\\.\pipe\NAME` is
    /// accepted as a named pipe and a bare absolute path as a Unix socket, the forms Antrea's
    /// configuration uses.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason| EndpointParseError {
            input: s.to_owned(),
            reason,
        };
        if let Some(path) = s.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(err("empty socket path"));
            }
            return Ok(Endpoint::Unix(PathBuf::from(path)));
        }
        if let Some(addr) = s.strip_prefix("tcp:") {
            match addr.rsplit_once(':') {
                Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
                    return Ok(Endpoint::Tcp(addr.to_owned()));
                }
                _ => return Err(err("expected tcp:HOST:PORT")),
            }
        }
        let pipe = s.strip_prefix("npipe:").unwrap_or(s);
        if let Some(name) = pipe.strip_prefix(r"\\.\pipe\") {
            if name.is_empty() {
                return Err(err("empty pipe name"));
            }
            return Ok(Endpoint::NamedPipe(pipe.to_owned()));
        }
        if s.starts_with('/') {
            return Ok(Endpoint::Unix(PathBuf::from(s)));
        }
        Err(err(
            "expected unix:PATH, tcp:HOST:PORT or npipe:\\\\.\\pipe\\NAME",
        ))
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Unix(p) => write!(f, "unix:{}", p.display()),
            Endpoint::Tcp(a) => write!(f, "tcp:{a}"),
            Endpoint::NamedPipe(p) => write!(f, "npipe:{p}"),
        }
    }
}

/// The named pipe Open vSwitch on Windows serves for a socket file in its run directory: the
/// joined path with every backslash removed, after `\\.\pipe\` (the drive colon stays).
///
/// `ovs_pipe_name(r"C:\openvswitch\var\run\openvswitch", "db.sock")` is
/// `\\.\pipe\C:openvswitchvarrunopenvswitchdb.sock`.
pub fn ovs_pipe_name(run_dir: &str, file: &str) -> String {
    let joined = format!("{}\\{}", run_dir.trim_end_matches(['\\', '/']), file);
    let flat: String = joined.chars().filter(|&c| c != '\\' && c != '/').collect();
    format!(r"\\.\pipe\{flat}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_kind() {
        assert_eq!(
            "unix:/run/db.sock".parse(),
            Ok(Endpoint::Unix("/run/db.sock".into()))
        );
        assert_eq!(
            "/run/db.sock".parse(),
            Ok(Endpoint::Unix("/run/db.sock".into()))
        );
        assert_eq!(
            "tcp:127.0.0.1:6640".parse(),
            Ok(Endpoint::Tcp("127.0.0.1:6640".into()))
        );
        assert_eq!(
            r"npipe:\\.\pipe\cnisock".parse(),
            Ok(Endpoint::NamedPipe(r"\\.\pipe\cnisock".into()))
        );
        assert_eq!(
            r"\\.\pipe\cnisock".parse(),
            Ok(Endpoint::NamedPipe(r"\\.\pipe\cnisock".into()))
        );
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "",
            "unix:",
            "tcp:6640",
            "tcp:host:port",
            r"npipe:\\.\pipe\",
            "relative/path",
            "npipe:cnisock",
        ] {
            assert!(bad.parse::<Endpoint>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn tcp_edge_cases() {
        assert_eq!(
            "tcp:[::1]:6640".parse(),
            Ok(Endpoint::Tcp("[::1]:6640".into()))
        );
        assert_eq!(
            "tcp:localhost:0".parse(),
            Ok(Endpoint::Tcp("localhost:0".into()))
        );
        assert_eq!("tcp:h:65535".parse(), Ok(Endpoint::Tcp("h:65535".into())));
        for bad in [
            "tcp:",
            "tcp::6640",
            "tcp:h:",
            "tcp:h:65536",
            "tcp:h:-1",
            "tcp:h:66 40",
        ] {
            let err = bad.parse::<Endpoint>().unwrap_err();
            assert_eq!(err.input, bad);
            assert!(err.to_string().contains("tcp:HOST:PORT"), "{err}");
        }
    }

    #[test]
    fn unix_and_pipe_edge_cases() {
        // Everything after the prefix is the path or name, colons and spaces included.
        assert_eq!(
            "unix:/run/a b:c.sock".parse(),
            Ok(Endpoint::Unix("/run/a b:c.sock".into()))
        );
        assert_eq!(
            r"npipe:\\.\pipe\C:openvswitchvarrunopenvswitchdb.sock".parse(),
            Ok(Endpoint::NamedPipe(
                r"\\.\pipe\C:openvswitchvarrunopenvswitchdb.sock".into()
            ))
        );
        // Only local pipes (`\\.\`) are endpoints; a remote server's pipe is not.
        for bad in [
            r"\\server\pipe\x",
            r"npipe:\\server\pipe\x",
            r"\\.\pipe",
            "npipe:",
        ] {
            assert!(bad.parse::<Endpoint>().is_err(), "{bad:?} accepted");
        }
        let err = "unix:".parse::<Endpoint>().unwrap_err();
        assert_eq!(err.reason, "empty socket path");
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "unix:/run/db.sock",
            "tcp:[::1]:6640",
            r"npipe:\\.\pipe\cnisock",
        ] {
            assert_eq!(s.parse::<Endpoint>().unwrap().to_string(), s);
        }
    }

    #[test]
    fn ovs_pipe_names_follow_the_windows_rule() {
        let run = r"C:\openvswitch\var\run\openvswitch";
        assert_eq!(
            ovs_pipe_name(run, "db.sock"),
            r"\\.\pipe\C:openvswitchvarrunopenvswitchdb.sock"
        );
        assert_eq!(
            ovs_pipe_name(run, "br-int.mgmt"),
            r"\\.\pipe\C:openvswitchvarrunopenvswitchbr-int.mgmt"
        );
        assert_eq!(ovs_pipe_name(r"C:\ovs\run\", "x"), r"\\.\pipe\C:ovsrunx");
    }
}
