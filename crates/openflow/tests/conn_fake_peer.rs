//! The connection against a scripted fake switch on a local TCP socket: malformed input
//! (truncated message, length below the header, huge length, unknown type, garbage after hello),
//! negotiation failures, silence, error routing and multipart collection. Every failure must be
//! a typed error that closes the connection — no panic, no hang. Timeouts here only detect hangs.

use std::future::Future;
use std::time::Duration;

use localipc::Endpoint;
use openflow::conn::frame::FrameReader;
use openflow::conn::{
    ConnError, ConnEvent, ConnOptions, FrameError, OfConnection, PacketInMessage,
};
use openflow::header::msg_type;
use openflow::msg::barrier::BarrierReply;
use openflow::msg::echo::{EchoReply, EchoRequest};
use openflow::msg::error::{ErrorKind, ErrorMsg, error_type};
use openflow::msg::features::FeaturesReply;
use openflow::msg::hello::{Hello, HelloElement};
use openflow::msg::multipart;
use openflow::msg::packet_in::PacketIn;
use openflow::msg::port::{Port, PortDescReply};
use openflow::oxm::Match;
use openflow::{DecodeError, Header, Message};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

const DATAPATH_ID: u64 = 0x42;

async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .unwrap_or_else(|_| panic!("{what} hung"))
}

/// The switch side of one connection.
struct Peer {
    frames: FrameReader<OwnedReadHalf>,
    out: OwnedWriteHalf,
}

impl Peer {
    async fn accept(listener: &TcpListener) -> Peer {
        let (stream, _) = listener.accept().await.unwrap();
        let (r, w) = stream.into_split();
        Peer {
            frames: FrameReader::new(r, 65535),
            out: w,
        }
    }

    /// The next message from the client as (header, whole bytes); `None` at end of stream.
    async fn recv(&mut self) -> Option<(Header, Vec<u8>)> {
        let frame = self.frames.next().await.unwrap()?;
        Some((Header::parse(&frame).unwrap(), frame))
    }

    async fn expect(&mut self, msg_type: u8) -> (Header, Vec<u8>) {
        let (h, frame) = self.recv().await.expect("client closed");
        assert_eq!(h.msg_type, msg_type, "unexpected message {frame:?}");
        (h, frame)
    }

    async fn send(&mut self, bytes: &[u8]) {
        self.out.write_all(bytes).await.unwrap();
    }

    /// Plays a switch's part of the handshake: hello, features reply, then set-config and its
    /// barrier.
    async fn handshake(listener: &TcpListener) -> Peer {
        let mut peer = Peer::accept(listener).await;
        peer.expect(msg_type::HELLO).await;
        peer.send(
            &Hello {
                elements: vec![HelloElement::VersionBitmap(vec![0x52])],
            }
            .to_bytes(1)
            .unwrap(),
        )
        .await;
        let (h, _) = peer.expect(msg_type::FEATURES_REQUEST).await;
        let features = FeaturesReply {
            datapath_id: DATAPATH_ID,
            n_buffers: 0,
            n_tables: 254,
            auxiliary_id: 0,
            capabilities: 0,
        };
        peer.send(&features.to_bytes(h.xid).unwrap()).await;
        peer.expect(msg_type::SET_CONFIG).await;
        let (h, _) = peer.expect(msg_type::BARRIER_REQUEST).await;
        peer.send(&BarrierReply.to_bytes(h.xid).unwrap()).await;
        peer
    }
}

async fn listen() -> (TcpListener, Endpoint) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = Endpoint::Tcp(listener.local_addr().unwrap().to_string());
    (listener, endpoint)
}

/// Connects to a fake switch that completes the handshake; returns both ends.
async fn connected(options: ConnOptions) -> (OfConnection, Peer, TcpListener) {
    let (listener, endpoint) = listen().await;
    let (conn, peer) = within("handshake", async {
        tokio::join!(
            OfConnection::connect(endpoint, options),
            Peer::handshake(&listener)
        )
    })
    .await;
    (conn.unwrap(), peer, listener)
}

/// Sends a barrier; the peer answers it with `reply`, then closes if `close` is set. Returns
/// the barrier's error.
async fn barrier_answered_with(
    conn: &OfConnection,
    peer: &mut Peer,
    reply: &[u8],
    close: bool,
) -> ConnError {
    let barrier = conn.barrier();
    let answer = async {
        peer.expect(msg_type::BARRIER_REQUEST).await;
        peer.send(reply).await;
        if close {
            peer.out.shutdown().await.unwrap();
        }
    };
    let (result, ()) = within("barrier", async { tokio::join!(barrier, answer) }).await;
    result.unwrap_err()
}

fn disconnect_reason(err: &ConnError) -> &ConnError {
    match err {
        ConnError::Disconnected(reason) => reason,
        other => panic!("expected Disconnected, got {other}"),
    }
}

#[tokio::test]
async fn handshake_reads_features() {
    let (conn, _peer, _l) = connected(ConnOptions::default()).await;
    assert_eq!(conn.features().await.unwrap().datapath_id, DATAPATH_ID);
}

#[tokio::test]
async fn length_below_the_header_closes_and_reconnects() {
    let (conn, mut peer, listener) = connected(ConnOptions::default()).await;
    let mut events = conn.events();
    let err = barrier_answered_with(&conn, &mut peer, &[6, 21, 0, 4, 0, 0, 0, 1], false).await;
    assert!(
        matches!(
            disconnect_reason(&err),
            ConnError::Frame(FrameError::TooShort { len: 4 })
        ),
        "{err}"
    );
    let ConnEvent::Disconnected { reason } = within("event", events.recv()).await.unwrap() else {
        panic!("expected disconnect")
    };
    assert!(matches!(
        &*reason,
        ConnError::Frame(FrameError::TooShort { len: 4 })
    ));
    // The old connection is closed from our side…
    assert!(within("close", peer.recv()).await.is_none());
    // …and a new one is made.
    let _second = within("reconnect", Peer::handshake(&listener)).await;
    loop {
        if let ConnEvent::Connected { datapath_id } = within("event", events.recv()).await.unwrap()
        {
            assert_eq!(datapath_id, DATAPATH_ID);
            break;
        }
    }
    assert_eq!(conn.features().await.unwrap().datapath_id, DATAPATH_ID);
}

#[tokio::test]
async fn huge_length_closes() {
    let options = ConnOptions {
        max_message_len: 1024,
        ..ConnOptions::default()
    };
    let (conn, mut peer, _l) = connected(options).await;
    let err =
        barrier_answered_with(&conn, &mut peer, &[6, 21, 0xff, 0xff, 0, 0, 0, 1], false).await;
    assert!(
        matches!(
            disconnect_reason(&err),
            ConnError::Frame(FrameError::TooLong {
                len: 65535,
                max: 1024
            })
        ),
        "{err}"
    );
}

#[tokio::test]
async fn truncated_message_closes() {
    let (conn, mut peer, _l) = connected(ConnOptions::default()).await;
    let err =
        barrier_answered_with(&conn, &mut peer, &[6, 21, 0, 100, 0, 0, 0, 1, 0, 0], true).await;
    assert!(
        matches!(
            disconnect_reason(&err),
            ConnError::Frame(FrameError::Truncated {
                have: 10,
                need: 100
            })
        ),
        "{err}"
    );
}

#[tokio::test]
async fn truncated_body_closes() {
    // A features reply whose length leaves no room for its fields.
    let (conn, mut peer, _l) = connected(ConnOptions::default()).await;
    let err = barrier_answered_with(
        &conn,
        &mut peer,
        &[6, 6, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0],
        false,
    )
    .await;
    assert!(
        matches!(
            disconnect_reason(&err),
            ConnError::Decode(DecodeError::Truncated {
                what: "features reply",
                ..
            })
        ),
        "{err}"
    );
}

#[tokio::test]
async fn unknown_type_closes() {
    let (conn, mut peer, _l) = connected(ConnOptions::default()).await;
    let err = barrier_answered_with(&conn, &mut peer, &[6, 200, 0, 8, 0, 0, 0, 1], false).await;
    assert!(
        matches!(
            disconnect_reason(&err),
            ConnError::Decode(DecodeError::Unsupported {
                what: "message type",
                value: 200
            })
        ),
        "{err}"
    );
}

#[tokio::test]
async fn garbage_after_hello_fails_the_connect() {
    let (listener, endpoint) = listen().await;
    let peer = async {
        let mut peer = Peer::accept(&listener).await;
        peer.expect(msg_type::HELLO).await;
        let mut bytes = Hello::of15().to_bytes(1).unwrap();
        bytes.extend_from_slice(b"\xde\xad\x00\x02garbage");
        peer.send(&bytes).await;
        peer
    };
    let (result, _peer) = within("connect", async {
        tokio::join!(
            OfConnection::connect(endpoint, ConnOptions::default()),
            peer
        )
    })
    .await;
    let err = result.unwrap_err();
    assert!(
        matches!(
            disconnect_reason(&err),
            ConnError::Frame(FrameError::TooShort { len: 2 })
        ),
        "{err}"
    );
}

#[tokio::test]
async fn non_hello_first_fails_the_connect() {
    let (listener, endpoint) = listen().await;
    let peer = async {
        let mut peer = Peer::accept(&listener).await;
        peer.expect(msg_type::HELLO).await;
        peer.send(&EchoRequest::default().to_bytes(1).unwrap())
            .await;
        peer
    };
    let (result, _peer) = within("connect", async {
        tokio::join!(
            OfConnection::connect(endpoint, ConnOptions::default()),
            peer
        )
    })
    .await;
    assert!(
        matches!(
            result,
            Err(ConnError::Handshake {
                expected: "hello",
                got: msg_type::ECHO_REQUEST
            })
        ),
        "{result:?}"
    );
}

#[tokio::test]
async fn of13_only_peer_is_refused_with_the_versions_it_offered() {
    let (listener, endpoint) = listen().await;
    let peer = async {
        let mut peer = Peer::accept(&listener).await;
        peer.expect(msg_type::HELLO).await;
        let mut hello = Hello::default().to_bytes(1).unwrap();
        hello[0] = openflow::OFP_VERSION_1_3;
        peer.send(&hello).await;
        let (_, refusal) = peer.expect(msg_type::ERROR).await;
        ErrorMsg::parse(&refusal).unwrap().0
    };
    let (result, refusal) = within("connect", async {
        tokio::join!(
            OfConnection::connect(endpoint, ConnOptions::default()),
            peer
        )
    })
    .await;
    let err = result.unwrap_err();
    let ConnError::Negotiation(negotiation) = &err else {
        panic!("expected a negotiation error, got {err}")
    };
    assert_eq!(negotiation.offered, [1, 2, 3, 4]);
    assert!(
        err.to_string()
            .contains("offers OpenFlow 1.0, 1.1, 1.2, 1.3 but this agent requires OpenFlow 1.5"),
        "{err}"
    );
    assert_eq!(refusal.name(), Some("OFPHFC_INCOMPATIBLE"));
}

#[tokio::test]
async fn silent_peer_gets_an_echo_then_is_declared_dead() {
    let options = ConnOptions {
        echo_interval: Duration::from_millis(50),
        inactivity_timeout: Duration::from_millis(300),
        ..ConnOptions::default()
    };
    let (conn, mut peer, _l) = connected(options).await;
    let mut events = conn.events();
    let pending = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request_raw(&EchoReply::default()).await }
    });
    // The request, then our keepalive echo, which the peer leaves unanswered.
    peer.expect(msg_type::ECHO_REPLY).await;
    within("echo", peer.expect(msg_type::ECHO_REQUEST)).await;
    let ConnEvent::Disconnected { reason } = within("event", events.recv()).await.unwrap() else {
        panic!("expected disconnect")
    };
    assert!(matches!(&*reason, ConnError::Inactive(_)), "{reason}");
    let result = within("pending", pending).await.unwrap();
    assert!(
        matches!(&result, Err(ConnError::Disconnected(r)) if matches!(**r, ConnError::Inactive(_))),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_request_made_while_the_switch_stays_unreachable_fails() {
    let options = ConnOptions {
        echo_interval: Duration::from_millis(50),
        inactivity_timeout: Duration::from_millis(300),
        ..ConnOptions::default()
    };
    let (conn, peer, listener) = connected(options).await;
    let mut events = conn.events();
    drop(peer);
    let ConnEvent::Disconnected { .. } = within("event", events.recv()).await.unwrap() else {
        panic!("expected disconnect")
    };
    // The reconnect is accepted but the switch never says hello (a frozen ovs-vswitchd).
    let (_frozen, _) = within("reconnect", listener.accept()).await.unwrap();
    let result = within(
        "request while reconnecting",
        conn.send(&EchoRequest {
            payload: b"user".to_vec(),
        }),
    )
    .await;
    assert!(
        matches!(&result, Err(ConnError::NotConnected(waited)) if *waited == Duration::from_millis(300)),
        "{result:?}"
    );
}

#[tokio::test]
async fn echo_requests_are_answered() {
    let (_conn, mut peer, _l) = connected(ConnOptions::default()).await;
    peer.send(
        &EchoRequest {
            payload: b"ping".to_vec(),
        }
        .to_bytes(77)
        .unwrap(),
    )
    .await;
    let (h, reply) = within("echo reply", peer.expect(msg_type::ECHO_REPLY)).await;
    assert_eq!(h.xid, 77);
    assert_eq!(EchoReply::parse(&reply).unwrap().0.payload, b"ping");
}

#[tokio::test]
async fn switch_errors_are_routed_to_the_request() {
    let (conn, mut peer, _l) = connected(ConnOptions::default()).await;
    let barrier = conn.barrier();
    let answer = async {
        let (h, request) = peer.expect(msg_type::BARRIER_REQUEST).await;
        // An unrelated reply first, with another xid: it must not satisfy the barrier.
        peer.send(&BarrierReply.to_bytes(h.xid.wrapping_add(1000)).unwrap())
            .await;
        let error = ErrorMsg {
            kind: ErrorKind::Standard {
                err_type: error_type::BAD_REQUEST,
                code: 1,
            },
            data: request,
        };
        peer.send(&error.to_bytes(h.xid).unwrap()).await;
    };
    let (result, ()) = within("barrier", async { tokio::join!(barrier, answer) }).await;
    let err = result.unwrap_err();
    assert!(
        matches!(&err, ConnError::Rejected(e) if e.name() == Some("OFPBRC_BAD_TYPE")),
        "{err}"
    );
    assert_eq!(err.error_names(), ["OFPBRC_BAD_TYPE"]);
    // The connection stays usable after an error reply.
    let barrier = conn.barrier();
    let answer = async {
        let (h, _) = peer.expect(msg_type::BARRIER_REQUEST).await;
        peer.send(&BarrierReply.to_bytes(h.xid).unwrap()).await;
    };
    let (result, ()) = within("barrier", async { tokio::join!(barrier, answer) }).await;
    result.unwrap();
}

#[tokio::test]
async fn multipart_parts_are_collected_until_more_is_clear() {
    let (conn, mut peer, _l) = connected(ConnOptions::default()).await;
    let port = |port_no: u32, name: &str| Port {
        port_no,
        hw_addr: [2, 0, 0, 0, 0, port_no as u8],
        name: name.into(),
        config: 0,
        state: 0,
        properties: vec![],
    };
    let desc = conn.port_desc();
    let answer = async {
        let (h, _) = peer.expect(msg_type::MULTIPART_REQUEST).await;
        peer.send(
            &PortDescReply {
                flags: multipart::MORE,
                ports: vec![port(1, "a")],
            }
            .to_bytes(h.xid)
            .unwrap(),
        )
        .await;
        peer.send(
            &PortDescReply {
                flags: multipart::MORE,
                ports: vec![port(2, "b"), port(3, "c")],
            }
            .to_bytes(h.xid)
            .unwrap(),
        )
        .await;
        peer.send(
            &PortDescReply {
                flags: 0,
                ports: vec![port(4, "d")],
            }
            .to_bytes(h.xid)
            .unwrap(),
        )
        .await;
    };
    let (result, ()) = within("port desc", async { tokio::join!(desc, answer) }).await;
    let names: Vec<_> = result.unwrap().into_iter().map(|p| p.name).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
}

#[tokio::test]
async fn request_fails_when_the_peer_closes() {
    let (conn, mut peer, _l) = connected(ConnOptions::default()).await;
    let barrier = conn.barrier();
    let close = async {
        peer.expect(msg_type::BARRIER_REQUEST).await;
        peer.out.shutdown().await.unwrap();
    };
    let (result, ()) = within("barrier", async { tokio::join!(barrier, close) }).await;
    let err = result.unwrap_err();
    assert!(
        matches!(disconnect_reason(&err), ConnError::Closed),
        "{err}"
    );
}

#[tokio::test]
async fn unsolicited_messages_reach_subscribers() {
    let (conn, mut peer, _l) = connected(ConnOptions::default()).await;
    let mut unsolicited = conn.async_messages();
    let mut packet_ins = conn.packet_ins();
    // A flow removed (type 11) with xid 0: delivered raw.
    peer.send(&[6, 11, 0, 12, 0, 0, 0, 0, 1, 2, 3, 4]).await;
    let raw = within("flow removed", unsolicited.recv()).await.unwrap();
    assert_eq!(
        (raw.header.msg_type, &raw.body[..]),
        (msg_type::FLOW_REMOVED, &[1, 2, 3, 4][..])
    );
    // A packet-in: delivered decoded to the packet-in subscribers, not as a raw message.
    let packet_in = PacketIn {
        buffer_id: u32::MAX,
        total_len: 2,
        reason: 1,
        table_id: 3,
        cookie: 9,
        flow_match: Match::new(),
        data: vec![7, 8],
    };
    peer.send(&packet_in.to_bytes(0).unwrap()).await;
    let received = within("packet-in", packet_ins.recv()).await.unwrap();
    assert_eq!(received, PacketInMessage::Standard(packet_in));
    // One whose body does not decode is still delivered, raw.
    peer.send(&[6, 10, 0, 12, 0, 0, 0, 0, 1, 2, 3, 4]).await;
    let raw = within("undecodable packet-in", unsolicited.recv())
        .await
        .unwrap();
    assert_eq!(
        (raw.header.msg_type, &raw.body[..]),
        (msg_type::PACKET_IN, &[1, 2, 3, 4][..])
    );
    assert!(packet_ins.try_recv().is_err());
}

#[tokio::test]
async fn a_cancelled_request_leaves_no_waiter_behind() {
    let (conn, mut peer, _l) = connected(ConnOptions::default()).await;
    let mut unsolicited = conn.async_messages();
    let barrier = conn.barrier();
    let xid = {
        tokio::pin!(barrier);
        let (h, _) = tokio::select! {
            _ = &mut barrier => panic!("the barrier cannot complete unanswered"),
            seen = peer.expect(msg_type::BARRIER_REQUEST) => seen,
        };
        h.xid
    };
    // The barrier future is dropped: its late reply is now unsolicited.
    peer.send(&BarrierReply.to_bytes(xid).unwrap()).await;
    let raw = within("late reply", unsolicited.recv()).await.unwrap();
    assert_eq!(
        (raw.header.msg_type, raw.header.xid),
        (msg_type::BARRIER_REPLY, xid)
    );
}

#[tokio::test]
async fn a_failing_hook_fails_the_connect() {
    let (listener, endpoint) = listen().await;
    let options = ConnOptions::default().on_connect(|_conn| async { Err(ConnError::Shutdown) });
    let (result, _peer) = within("connect", async {
        tokio::join!(
            OfConnection::connect(endpoint, options),
            Peer::handshake(&listener)
        )
    })
    .await;
    assert!(
        matches!(&result, Err(ConnError::Hook(inner)) if matches!(**inner, ConnError::Shutdown)),
        "{result:?}"
    );
}

#[tokio::test]
async fn requests_wait_for_the_hook_after_a_reconnect() {
    let (listener, endpoint) = listen().await;
    let options = ConnOptions::default().on_connect(|conn| async move {
        // The hook's own traffic: a barrier round trip, then a marker.
        conn.barrier().await?;
        conn.send(&EchoRequest {
            payload: b"hook".to_vec(),
        })
        .await
        .map(drop)
    });
    let connect = OfConnection::connect(endpoint, options);
    let first = async {
        let mut peer = Peer::handshake(&listener).await;
        let (h, _) = peer.expect(msg_type::BARRIER_REQUEST).await;
        peer.send(&BarrierReply.to_bytes(h.xid).unwrap()).await;
        peer.expect(msg_type::ECHO_REQUEST).await;
        peer
    };
    let (conn, peer) = within("connect", async { tokio::join!(connect, first) }).await;
    let conn = conn.unwrap();
    let mut events = conn.events();
    drop(peer);
    let ConnEvent::Disconnected { .. } = within("event", events.recv()).await.unwrap() else {
        panic!("expected disconnect")
    };
    // Issued while disconnected: must reach the switch only after the hook's traffic.
    let user = tokio::spawn({
        let conn = conn.clone();
        async move {
            conn.send(&EchoRequest {
                payload: b"user".to_vec(),
            })
            .await
        }
    });
    let mut second = within("reconnect", Peer::handshake(&listener)).await;
    let (h, _) = within("hook barrier", second.expect(msg_type::BARRIER_REQUEST)).await;
    second.send(&BarrierReply.to_bytes(h.xid).unwrap()).await;
    let mut payloads = Vec::new();
    for _ in 0..2 {
        let (_, echo) = within("echo", second.expect(msg_type::ECHO_REQUEST)).await;
        payloads.push(EchoRequest::parse(&echo).unwrap().0.payload);
    }
    assert_eq!(payloads, [b"hook".to_vec(), b"user".to_vec()]);
    within("user send", user).await.unwrap().unwrap();
}

#[tokio::test]
async fn a_dump_with_an_action_we_lack_fails_alone() {
    use openflow::msg::flow_stats::{FlowDescReply, FlowDescRequest, FlowStats};
    let (conn, mut peer, _l) = connected(ConnOptions::default()).await;
    let fm: openflow::msg::flow_mod::FlowMod = "priority=5,ip actions=output:1".parse().unwrap();
    let flow = FlowStats::of_flow_mod(&fm);
    let request = FlowDescRequest::default();
    let dump = conn.dump_flows(&request);
    let answer = async {
        let (h, _) = peer.expect(msg_type::MULTIPART_REQUEST).await;
        peer.send(
            &FlowDescReply {
                more: true,
                flows: vec![flow.clone()],
            }
            .to_bytes(h.xid)
            .unwrap(),
        )
        .await;
        // Another controller's flow with an action type this codec does not know (0x63).
        let mut part = FlowDescReply {
            more: false,
            flows: vec![flow.clone()],
        }
        .to_bytes(h.xid)
        .unwrap();
        let output = part
            .windows(8)
            .position(|w| w == [0, 0, 0, 16, 0, 0, 0, 1])
            .unwrap();
        part[output + 1] = 0x63;
        peer.send(&part).await;
    };
    let (result, ()) = within("dump", async { tokio::join!(dump, answer) }).await;
    let err = result.unwrap_err();
    assert!(
        matches!(err, ConnError::Decode(DecodeError::Unsupported { .. })),
        "{err}"
    );
    // The connection stays up: the switch did nothing wrong.
    let barrier = conn.barrier();
    let answer = async {
        let (h, _) = peer.expect(msg_type::BARRIER_REQUEST).await;
        peer.send(&BarrierReply.to_bytes(h.xid).unwrap()).await;
    };
    let (result, ()) = within("barrier", async { tokio::join!(barrier, answer) }).await;
    result.unwrap();
}
