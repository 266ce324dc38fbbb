//! Traffic inside Pod network namespaces without spawning processes: a thread joins the Pod's
//! namespace (`setns` changes only the calling thread) and creates the sockets there, on a tokio
//! runtime the test owns; the sockets stay in that namespace wherever they are served. Servers
//! accept TCP and echo UDP; probes connect or wait for the echo, a dropped packet being a
//! timeout ([`PROBE_TIMEOUT`], a hang guard for what policy drops, not a performance bound).
//! A probe's [`Observation`] tells traffic the network blocked (refused, unreachable, timed
//! out) from a probe that could not run (the namespace missing, a local socket error), which is
//! never taken for blocked; a table's cells are probed from every source at once. The
//! `truthtable` lab's Pods are added to a Node through the real plugin here too.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use nix::sched::{CloneFlags, setns};
use tokio::net::{TcpListener, TcpStream, UdpSocket};
use tokio::runtime::Runtime;
use tokio::time::timeout;
use truthtable::model::{ip, pods_on};
use truthtable::{Cell, Observation, Pod, Protocol};

use super::{Lan, TestNode, run};

/// How long a probe waits for a connection or an echo before calling it dropped.
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(400);

/// Runs `work` on a thread that joined network namespace `netns` (a name under
/// `/var/run/netns`), and returns its result; panics when the namespace cannot be joined (for
/// setup, where that is a broken test).
pub fn in_netns<T: Send>(netns: &str, work: impl FnOnce() -> T + Send) -> T {
    try_in_netns(netns, work).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `work` on a thread that joined network namespace `netns`, or says why the namespace
/// could not be joined.
pub fn try_in_netns<T: Send>(netns: &str, work: impl FnOnce() -> T + Send) -> Result<T, String> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| join_netns(netns).map(|()| work()))
            .join()
            .unwrap_or_else(|_| panic!("work in {netns} panicked"))
    })
}

/// Moves the calling thread into network namespace `netns`.
pub fn join_netns(netns: &str) -> Result<(), String> {
    let path = format!("/var/run/netns/{netns}");
    let file = File::open(&path).map_err(|e| format!("open {path}: {e}"))?;
    setns(file, CloneFlags::CLONE_NEWNET).map_err(|e| format!("setns {path}: {e}"))
}

/// Serves `ports` in `netns` on `runtime` until the runtime is dropped: TCP accepts (and closes)
/// connections, UDP echoes each datagram to its sender.
pub fn serve(runtime: &Runtime, netns: &str, ports: &[(Protocol, u16)]) {
    for &(protocol, port) in ports {
        let addr = SocketAddr::from((Ipv4Addr::UNSPECIFIED, port));
        match protocol {
            Protocol::Tcp => {
                let listener = in_netns(netns, || runtime.block_on(TcpListener::bind(addr)))
                    .unwrap_or_else(|e| panic!("bind TCP {port} in {netns}: {e}"));
                runtime.spawn(async move {
                    while let Ok((stream, _)) = listener.accept().await {
                        drop(stream);
                    }
                });
            }
            Protocol::Udp => {
                let socket = in_netns(netns, || runtime.block_on(UdpSocket::bind(addr)))
                    .unwrap_or_else(|e| panic!("bind UDP {port} in {netns}: {e}"));
                runtime.spawn(async move {
                    let mut buf = [0u8; 64];
                    while let Ok((n, from)) = socket.recv_from(&mut buf).await {
                        let _ = socket.send_to(&buf[..n], from).await;
                    }
                });
            }
        }
    }
}

/// Whether a new connection to `to` gets through: a TCP handshake completes, or a UDP datagram
/// comes back echoed, within [`PROBE_TIMEOUT`]; blocked when the network refuses, is
/// unreachable or stays silent; could not run on a local socket error. Sockets are made in the
/// calling thread's namespace when the future is first polled, so poll it with `block_on` on a
/// thread that joined the source's namespace.
pub async fn probe(protocol: Protocol, to: SocketAddr) -> Observation {
    match protocol {
        Protocol::Tcp => match timeout(PROBE_TIMEOUT, TcpStream::connect(to)).await {
            Ok(Ok(_)) => Observation::Connected,
            Ok(Err(e)) => socket_error("connect", &e),
            Err(_) => Observation::Blocked(format!("no handshake within {PROBE_TIMEOUT:?}")),
        },
        Protocol::Udp => {
            let Some(port) = fresh_source_port() else {
                return Observation::CouldNotRun(format!(
                    "every UDP source port of {FRESH_SOURCE_PORTS:?} was used in this run"
                ));
            };
            let socket = match UdpSocket::bind((Ipv4Addr::UNSPECIFIED, port)).await {
                Ok(socket) => socket,
                Err(e) => return Observation::CouldNotRun(format!("bind a UDP socket: {e}")),
            };
            if let Err(e) = socket.send_to(b"probe", to).await {
                return socket_error("send", &e);
            }
            let mut buf = [0u8; 64];
            match timeout(PROBE_TIMEOUT, socket.recv_from(&mut buf)).await {
                Ok(Ok((n, from))) if from == to && &buf[..n] == b"probe" => Observation::Connected,
                Ok(Ok((n, from))) => Observation::Blocked(format!(
                    "{n} bytes from {from} instead of the echo of {to}"
                )),
                Ok(Err(e)) => socket_error("receive", &e),
                Err(_) => Observation::Blocked(format!("no echo within {PROBE_TIMEOUT:?}")),
            }
        }
    }
}

/// Probes `cells`: each source's from its own namespace (`netns` maps each Pod to its own), all
/// at once. A source whose namespace cannot be joined could not run any of its probes.
pub fn probe_cells(
    runtime: &Runtime,
    netns: &BTreeMap<Pod, String>,
    cells: &[Cell],
) -> Vec<(Cell, Observation)> {
    let mut by_source: BTreeMap<Pod, Vec<Cell>> = BTreeMap::new();
    for cell in cells {
        by_source.entry(cell.0).or_default().push(*cell);
    }
    std::thread::scope(|scope| {
        let sources: Vec<_> = by_source
            .into_iter()
            .map(|(s, cells)| {
                let ns = &netns[&s];
                scope.spawn(move || {
                    let probed = try_in_netns(ns, || {
                        let probes = cells.iter().map(|&(s, d, port)| async move {
                            let to = SocketAddr::from((ip(d), port.number));
                            ((s, d, port), probe(port.protocol, to).await)
                        });
                        runtime.block_on(futures_util::future::join_all(probes))
                    });
                    probed.unwrap_or_else(|why| {
                        let why = Observation::CouldNotRun(why);
                        cells.iter().map(|c| (*c, why.clone())).collect()
                    })
                })
            })
            .collect();
        sources
            .into_iter()
            .flat_map(|h| h.join().expect("probe thread"))
            .collect()
    })
}

/// The source ports UDP probes take, each once per test process: below the kernel's default
/// ephemeral range (32768-60999), so no socket the kernel numbered holds one.
const FRESH_SOURCE_PORTS: std::ops::Range<u16> = 1024..32768;

/// A UDP source port no probe of this process used before, or none once all are used. A
/// datagram the policy allowed leaves a conntrack entry (30 s, 120 s once a stream) that lets
/// the same 5-tuple through as established whatever the policy says later, as in Antrea; an
/// ephemeral port the kernel picks again within that window would make a denied cell connect.
/// A fresh port makes every probe the new connection the truth table is about.
fn fresh_source_port() -> Option<u16> {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(FRESH_SOURCE_PORTS.start);
    NEXT.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |p| {
        (p < FRESH_SOURCE_PORTS.end).then_some(p + 1)
    })
    .ok()
}

/// A socket call's error: blocked when it is the network's answer (refused, reset,
/// unreachable, timed out), could not run for anything local.
fn socket_error(call: &str, e: &io::Error) -> Observation {
    use io::ErrorKind::*;
    match e.kind() {
        ConnectionRefused | ConnectionReset | ConnectionAborted | HostUnreachable
        | NetworkUnreachable | TimedOut => Observation::Blocked(format!("{call}: {e}")),
        _ => Observation::CouldNotRun(format!("{call}: {e}")),
    }
}

/// Adds the lab Pods of `node` through the real `antrea` plugin, each in a new namespace of
/// `lan` with its loopback up (as the container runtime does: a Pod reaches itself there), in
/// lab order so each gets its lab address (checked); returns each Pod's namespace.
pub fn add_lab_pods(lan: &mut Lan, node: &TestNode) -> BTreeMap<Pod, String> {
    let mut netns = BTreeMap::new();
    for p in pods_on(&node.name) {
        let sandbox = lan.pod_netns(&format!("{}{}", p.0, p.1));
        run(&["ip", "-n", &sandbox, "link", "set", "lo", "up"]);
        let container = format!("c-{}-{}", p.0, p.1);
        let (ok, result) = node.cni_in(p.0, "ADD", &container, p.1, &sandbox, &node.netconf(None));
        assert!(ok, "ADD {}/{} failed: {result}", p.0, p.1);
        assert_eq!(result["ips"][0]["address"], format!("{}/24", ip(p)));
        netns.insert(p, sandbox);
    }
    netns
}
