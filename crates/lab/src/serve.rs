//! The lab's TCP answerer and its client. `serve` runs in every Pod, Node and the external
//! namespace and answers each connection with one line naming itself and the peer address it
//! saw, so a probe proves both which endpoint it reached and whether the source was translated
//! (SNAT). [`parse_answer`] is a decode entry point: any text gives an answer or an error.

use std::fs;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

/// The first word of every answer.
pub const ANSWER_TAG: &str = "antrea-lab-serve";
/// The first word `probe-tcp` prints when the network gave no answer: refused, unreachable,
/// silent, or a wrong answer.
pub const BLOCKED_TAG: &str = "blocked:";
/// The first word `probe-tcp` prints when the probe could not run (a local socket error).
pub const COULD_NOT_RUN_TAG: &str = "could-not-run:";
/// Answers are one short line; anything longer is not ours.
const MAX_ANSWER: u64 = 512;

/// What a `serve` answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The answerer's name (its namespace).
    pub name: String,
    /// The peer address it saw.
    pub peer: SocketAddr,
}

/// A probe that got no valid answer.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// Connecting failed or timed out.
    #[error("connect to {addr}: {source}")]
    Connect {
        /// The target.
        addr: SocketAddrV4,
        /// The OS error.
        source: io::Error,
    },
    /// Reading the answer failed or timed out.
    #[error("read from {addr}: {source}")]
    Read {
        /// The target.
        addr: SocketAddrV4,
        /// The OS error.
        source: io::Error,
    },
    /// The answer is not a `serve` answer.
    #[error("answer from {addr}: {message}")]
    Answer {
        /// The target.
        addr: SocketAddrV4,
        /// What is wrong.
        message: String,
    },
}

impl ProbeError {
    /// Whether the probe itself could not run: a socket call failed for a local reason, not
    /// because the network refused, was unreachable or stayed silent.
    pub fn could_not_run(&self) -> bool {
        use io::ErrorKind::*;
        let network = |e: &io::Error| {
            matches!(
                e.kind(),
                ConnectionRefused
                    | ConnectionReset
                    | ConnectionAborted
                    | HostUnreachable
                    | NetworkUnreachable
                    | TimedOut
                    | WouldBlock
                    | UnexpectedEof
            )
        };
        // A connect whose poll saw the socket hang up without an error code (std reports it as
        // "no error set after POLLHUP") also ended on the network's answer.
        let hung_up =
            |e: &io::Error| e.raw_os_error().is_none() && e.to_string().contains("POLLHUP");
        match self {
            ProbeError::Connect { source, .. } => !network(source) && !hung_up(source),
            ProbeError::Read { source, .. } => !network(source),
            ProbeError::Answer { .. } => false,
        }
    }

    /// The line `probe-tcp` prints for this error: [`BLOCKED_TAG`] or [`COULD_NOT_RUN_TAG`],
    /// then the error.
    pub fn report_line(&self) -> String {
        let tag = if self.could_not_run() {
            COULD_NOT_RUN_TAG
        } else {
            BLOCKED_TAG
        };
        format!("{tag} {self}\n")
    }
}

/// The answer line for `name` and `peer`.
pub fn format_answer(name: &str, peer: SocketAddr) -> String {
    format!("{ANSWER_TAG} name={name} peer={peer}\n")
}

/// Parses an answer line.
pub fn parse_answer(text: &str) -> Result<Answer, String> {
    let mut words = text.trim_end_matches(['\r', '\n']).split(' ');
    if words.next() != Some(ANSWER_TAG) {
        return Err(format!("not an {ANSWER_TAG} answer: {:?}", truncate(text)));
    }
    let mut name = None;
    let mut peer = None;
    for word in words {
        match word.split_once('=') {
            Some(("name", v)) if !v.is_empty() => name = Some(v.to_owned()),
            Some(("peer", v)) => {
                peer = Some(
                    v.parse::<SocketAddr>()
                        .map_err(|_| format!("peer {v:?} is not an address"))?,
                )
            }
            _ => return Err(format!("unexpected word {:?}", truncate(word))),
        }
    }
    match (name, peer) {
        (Some(name), Some(peer)) => Ok(Answer { name, peer }),
        _ => Err(format!("answer lacks name or peer: {:?}", truncate(text))),
    }
}

fn truncate(text: &str) -> String {
    text.chars().take(80).collect()
}

/// Listens on `0.0.0.0:port`, writes `ready_file` once bound, and answers every connection
/// until killed. Each connection is answered on its own thread.
pub fn serve(name: &str, port: u16, ready_file: &Path) -> io::Result<()> {
    let listener = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port))?;
    fs::write(ready_file, format!("{}\n", std::process::id()))?;
    for conn in listener.incoming() {
        let Ok(mut conn) = conn else { continue };
        let name = name.to_owned();
        std::thread::spawn(move || {
            let _ = conn.set_write_timeout(Some(Duration::from_secs(2)));
            if let Ok(peer) = conn.peer_addr() {
                let _ = conn.write_all(format_answer(&name, peer).as_bytes());
            }
        });
    }
    Ok(())
}

/// Connects to a `serve` at `addr` and reads its answer, each step bounded by `timeout`.
pub fn probe_tcp(addr: SocketAddrV4, timeout: Duration) -> Result<Answer, ProbeError> {
    let conn = TcpStream::connect_timeout(&SocketAddr::V4(addr), timeout)
        .map_err(|source| ProbeError::Connect { addr, source })?;
    conn.set_read_timeout(Some(timeout))
        .map_err(|source| ProbeError::Read { addr, source })?;
    let mut text = String::new();
    conn.take(MAX_ANSWER)
        .read_to_string(&mut text)
        .map_err(|source| ProbeError::Read { addr, source })?;
    parse_answer(&text).map_err(|message| ProbeError::Answer { addr, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_round_trips() {
        let peer: SocketAddr = "10.244.1.11:40000".parse().unwrap();
        let line = format_answer("lab-n2-p1", peer);
        assert_eq!(
            line,
            "antrea-lab-serve name=lab-n2-p1 peer=10.244.1.11:40000\n"
        );
        assert_eq!(
            parse_answer(&line),
            Ok(Answer {
                name: "lab-n2-p1".into(),
                peer
            })
        );
    }

    #[test]
    fn foreign_or_broken_answers_are_refused() {
        for bad in [
            "",
            "HTTP/1.1 200 OK\r\n",
            "antrea-lab-serve name=x\n",
            "antrea-lab-serve peer=1.2.3.4:5\n",
            "antrea-lab-serve name=x peer=nope\n",
            "antrea-lab-serve name= peer=1.2.3.4:5\n",
            "antrea-lab-serve name=x peer=1.2.3.4:5 extra\n",
        ] {
            assert!(parse_answer(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn serve_and_probe_over_loopback() {
        let dir =
            std::env::temp_dir().join(format!("antrea-lab-serve-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let ready = dir.join("ready");
        // Port 0 is not useful for a probe; find a free port first.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let ready_file = ready.clone();
        std::thread::spawn(move || serve("tester", port, &ready_file));
        for _ in 0..200 {
            if ready.exists() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let answer = probe_tcp(
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, port),
            Duration::from_secs(2),
        )
        .unwrap();
        assert_eq!(answer.name, "tester");
        assert_eq!(answer.peer.ip(), Ipv4Addr::LOCALHOST);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn probe_to_a_closed_port_is_a_connect_error() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let err = probe_tcp(
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, port),
            Duration::from_secs(1),
        )
        .unwrap_err();
        assert!(matches!(err, ProbeError::Connect { .. }), "{err}");
        assert!(!err.could_not_run());
        assert!(
            err.report_line()
                .starts_with("blocked: connect to 127.0.0.1:")
        );
    }

    #[test]
    fn a_connect_that_hung_up_without_an_error_code_was_blocked() {
        let hung_up = ProbeError::Connect {
            addr: SocketAddrV4::new(Ipv4Addr::new(10, 10, 0, 100), 8080),
            source: io::Error::other("no error set after POLLHUP"),
        };
        assert!(!hung_up.could_not_run());
        assert!(
            hung_up
                .report_line()
                .starts_with("blocked: connect to 10.10.0.100:8080")
        );
    }

    #[test]
    fn a_local_socket_error_could_not_run() {
        let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 1);
        let local = ProbeError::Connect {
            addr,
            source: io::Error::from_raw_os_error(24), // EMFILE
        };
        assert!(local.could_not_run());
        assert!(
            local
                .report_line()
                .starts_with("could-not-run: connect to 127.0.0.1:1")
        );
        let wrong = ProbeError::Answer {
            addr,
            message: "not ours".into(),
        };
        assert!(!wrong.could_not_run());
    }
}
