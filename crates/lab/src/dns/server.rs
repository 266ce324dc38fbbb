//! The DNS answerer's sockets (`antrea-lab dns`, run in a Pod): UDP and TCP on one port of
//! every address, each query answered from the [`Zone`]. TCP messages carry the two-byte
//! length prefix (RFC 1035 §4.2.2); a connection may carry several queries and is closed after
//! [`TCP_IDLE`] without one. The ready file is written once both sockets are bound. Each query
//! is logged on stdout with its transport and the peer address the answerer saw
//! (`query over udp from 10.244.1.3:41000: lab-local-n1.default.svc.cluster.local type 1 class 1
//! -> rcode 0, 1 answers`), so a test can tell which path a lookup took.

use std::fs;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpListener, TcpStream, UdpSocket};
use std::path::Path;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::answer::Zone;
use super::message::Message;

/// Logs one query and what it got.
fn log_query(transport: &str, peer: SocketAddr, query: &[u8], response: Option<&[u8]>) {
    let question = Message::parse(query)
        .ok()
        .and_then(|m| m.questions.first().map(ToString::to_string))
        .unwrap_or_else(|| format!("{} unreadable bytes", query.len()));
    let outcome = match response.map(Message::parse) {
        Some(Ok(m)) => format!("rcode {}, {} answers", m.rcode(), m.answers.len()),
        _ => "no answer".to_owned(),
    };
    println!("query over {transport} from {peer}: {question} -> {outcome}");
}

/// How long a TCP connection may stay without a query.
pub const TCP_IDLE: Duration = Duration::from_secs(10);

/// Serves `zone` on UDP and TCP `port` until killed; writes `ready_file` once bound.
pub fn serve(zone: Zone, port: u16, ready_file: &Path) -> io::Result<()> {
    let address = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, port);
    let udp = UdpSocket::bind(address)?;
    let tcp = TcpListener::bind(address)?;
    fs::write(ready_file, format!("{}\n", std::process::id()))?;
    let zone = Arc::new(zone);
    let udp_zone = Arc::clone(&zone);
    thread::spawn(move || serve_udp(&udp, &udp_zone));
    for conn in tcp.incoming() {
        let Ok(conn) = conn else { continue };
        let zone = Arc::clone(&zone);
        thread::spawn(move || {
            let _ = serve_tcp(conn, &zone);
        });
    }
    Ok(())
}

fn serve_udp(socket: &UdpSocket, zone: &Zone) {
    let mut buffer = [0u8; 4096];
    loop {
        let Ok((len, peer)) = socket.recv_from(&mut buffer) else {
            continue;
        };
        let response = zone.answer(&buffer[..len]);
        log_query("udp", peer, &buffer[..len], response.as_deref());
        if let Some(response) = response {
            let _ = socket.send_to(&response, peer);
        }
    }
}

fn serve_tcp(mut conn: TcpStream, zone: &Zone) -> io::Result<()> {
    conn.set_read_timeout(Some(TCP_IDLE))?;
    conn.set_write_timeout(Some(TCP_IDLE))?;
    let peer = conn.peer_addr()?;
    loop {
        let mut prefix = [0u8; 2];
        conn.read_exact(&mut prefix)?;
        let mut query = vec![0u8; usize::from(u16::from_be_bytes(prefix))];
        conn.read_exact(&mut query)?;
        let response = zone.answer(&query);
        log_query("tcp", peer, &query, response.as_deref());
        let Some(response) = response else {
            return Ok(());
        };
        let len = u16::try_from(response.len()).map_err(io::Error::other)?;
        let mut framed = len.to_be_bytes().to_vec();
        framed.extend_from_slice(&response);
        conn.write_all(&framed)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dns::message::{CLASS_IN, FLAG_RECURSION_DESIRED, Message, Question, TYPE_A};

    fn query() -> Vec<u8> {
        Message {
            id: 5,
            flags: FLAG_RECURSION_DESIRED,
            questions: vec![Question {
                name: "lab-web.default.svc.cluster.local".into(),
                qtype: TYPE_A,
                qclass: CLASS_IN,
            }],
            answers: vec![],
        }
        .emit()
    }

    /// A port free for both UDP and TCP on every address (a port free for one may be taken for
    /// the other by a socket of a test running alongside).
    fn free_udp_and_tcp_port() -> u16 {
        loop {
            let udp = UdpSocket::bind("0.0.0.0:0").unwrap();
            let port = udp.local_addr().unwrap().port();
            if TcpListener::bind(("0.0.0.0", port)).is_ok() {
                return port;
            }
        }
    }

    #[test]
    fn udp_and_tcp_clients_get_the_record() {
        let dir = std::env::temp_dir().join(format!("antrea-lab-dns-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let ready = dir.join("ready");
        let port = free_udp_and_tcp_port();
        let zone = Zone::parse("lab-web.default.svc.cluster.local 10.96.0.20\n").unwrap();
        let ready_file = ready.clone();
        let answerer = thread::spawn(move || serve(zone, port, &ready_file));
        while !ready.exists() {
            if answerer.is_finished() {
                panic!("the answerer stopped: {:?}", answerer.join());
            }
            thread::sleep(Duration::from_millis(10));
        }
        let server = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);

        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        udp.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        udp.send_to(&query(), server).unwrap();
        let mut buffer = [0u8; 512];
        let len = udp.recv(&mut buffer).unwrap();
        let over_udp = Message::parse(&buffer[..len]).unwrap();
        assert_eq!(over_udp.answers[0].data, [10, 96, 0, 20]);

        let mut tcp = TcpStream::connect(server).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        for _ in 0..2 {
            let q = query();
            let mut framed = (q.len() as u16).to_be_bytes().to_vec();
            framed.extend_from_slice(&q);
            tcp.write_all(&framed).unwrap();
            let mut prefix = [0u8; 2];
            tcp.read_exact(&mut prefix).unwrap();
            let mut response = vec![0u8; usize::from(u16::from_be_bytes(prefix))];
            tcp.read_exact(&mut response).unwrap();
            assert_eq!(Message::parse(&response).unwrap(), over_udp);
        }
        fs::remove_dir_all(&dir).unwrap();
    }
}
