//! Test support: a plain blocking OpenFlow 1.5 socket to a bridge's management socket, enough to
//! send encoded messages and collect the switch's replies and errors up to a barrier.
#![cfg(target_os = "linux")]

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

const OFPT_HELLO: u8 = 0;
const OFPT_ERROR: u8 = 1;
const OFPT_ECHO_REQUEST: u8 = 2;
const OFPT_ECHO_REPLY: u8 = 3;
const OFPT_BARRIER_REQUEST: u8 = 20;
const OFPT_BARRIER_REPLY: u8 = 21;

/// A raw OpenFlow message: type, xid and the whole message bytes.
#[derive(Debug, Clone)]
pub struct RawMessage {
    pub msg_type: u8,
    pub xid: u32,
    pub bytes: Vec<u8>,
}

/// A blocking OpenFlow 1.5 connection.
#[derive(Debug)]
pub struct OfSocket {
    stream: UnixStream,
    next_xid: u32,
}

impl OfSocket {
    /// Connects and exchanges OpenFlow 1.5 hellos (with a version bitmap element).
    pub fn connect(path: &Path) -> OfSocket {
        let stream = UnixStream::connect(path).expect("connect to the bridge's management socket");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .expect("set read timeout");
        let mut s = OfSocket {
            stream,
            next_xid: 1,
        };
        // ofp_header + one OFPHET_VERSIONBITMAP element with bit 6 (OpenFlow 1.5).
        s.write(&[6, OFPT_HELLO, 0, 16, 0, 0, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0x40]);
        let hello = s.read_message();
        assert_eq!(hello.msg_type, OFPT_HELLO, "expected the switch's hello");
        assert_eq!(hello.bytes[0], 6, "switch did not offer OpenFlow 1.5");
        s
    }

    fn write(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write to the switch");
    }

    /// Reads one message, framing it by the header length.
    pub fn read_message(&mut self) -> RawMessage {
        let mut header = [0u8; 8];
        self.stream
            .read_exact(&mut header)
            .expect("read an OpenFlow header");
        let len = usize::from(u16::from_be_bytes([header[2], header[3]]));
        assert!(len >= 8, "bad length {len} from the switch");
        let mut bytes = header.to_vec();
        bytes.resize(len, 0);
        self.stream
            .read_exact(&mut bytes[8..])
            .expect("read an OpenFlow body");
        RawMessage {
            msg_type: header[1],
            xid: u32::from_be_bytes([header[4], header[5], header[6], header[7]]),
            bytes,
        }
    }

    /// A fresh transaction id.
    pub fn xid(&mut self) -> u32 {
        self.next_xid += 1;
        self.next_xid
    }

    /// Sends already-encoded messages, then a barrier; returns every message the switch sent
    /// before the barrier reply (replies and `OFPT_ERROR`s), answering echo requests.
    pub fn transact(&mut self, messages: &[Vec<u8>]) -> Vec<RawMessage> {
        for m in messages {
            self.write(m);
        }
        let barrier_xid = self.xid();
        let mut barrier = vec![6, OFPT_BARRIER_REQUEST, 0, 8];
        barrier.extend_from_slice(&barrier_xid.to_be_bytes());
        self.write(&barrier);
        let mut received = Vec::new();
        loop {
            let m = self.read_message();
            match m.msg_type {
                OFPT_BARRIER_REPLY if m.xid == barrier_xid => return received,
                OFPT_ECHO_REQUEST => {
                    let mut reply = m.bytes.clone();
                    reply[1] = OFPT_ECHO_REPLY;
                    self.write(&reply);
                }
                _ => received.push(m),
            }
        }
    }

    /// Like [`OfSocket::transact`] but fails the test on any `OFPT_ERROR`, naming the message.
    pub fn transact_ok(&mut self, messages: &[Vec<u8>]) -> Vec<RawMessage> {
        let received = self.transact(messages);
        let errors: Vec<String> = received
            .iter()
            .filter(|m| m.msg_type == OFPT_ERROR)
            .map(|m| {
                let code = m.bytes.get(8..12).map(|b| {
                    format!(
                        "type {} code {}",
                        u16::from_be_bytes([b[0], b[1]]),
                        u16::from_be_bytes([b[2], b[3]])
                    )
                });
                format!("xid {}: {}", m.xid, code.unwrap_or_default())
            })
            .collect();
        assert!(errors.is_empty(), "switch rejected messages: {errors:?}");
        received
    }
}

/// Removes the volatile statistics (`duration`, `n_packets`, `n_bytes`, `idle_age`,
/// `hard_age`) from a `dump-flows` line.
pub fn normalize_flow_line(line: &str) -> String {
    let mut out = line.trim().to_string();
    for key in [
        "duration=",
        "n_packets=",
        "n_bytes=",
        "idle_age=",
        "hard_age=",
    ] {
        while let Some(start) = out.find(key) {
            let end = out[start..]
                .find(", ")
                .map(|i| start + i + 2)
                .unwrap_or(out.len());
            out.replace_range(start..end, "");
        }
    }
    out
}

/// The flow lines of a `dump-flows` output, normalised and sorted.
pub fn normalized_dump(dump: &str) -> Vec<String> {
    let mut lines: Vec<String> = dump
        .lines()
        .filter(|l| l.contains("actions="))
        .map(normalize_flow_line)
        .collect();
    lines.sort();
    lines
}
