//! The client against a scripted peer on an in-memory pipe: the server's echo requests are
//! answered, and malformed input (truncated, invalid JSON, wrong shapes, unknown ids, oversize
//! messages, silence) gives typed errors — never a panic, never a hang.

use std::time::Duration;

use bytes::BytesMut;
use ovsdb::monitor::{MonitorEvent, MonitorRequest};
use ovsdb::wire::{FrameDecoder, FrameError, WireError};
use ovsdb::{Client, ClientConfig, ConnectionState, DisconnectReason, Error};
use serde_json::{Value as Json, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// Guard against hangs.
const STEP: Duration = Duration::from_secs(20);

struct Peer {
    io: DuplexStream,
    decoder: FrameDecoder,
    buf: BytesMut,
}

impl Peer {
    async fn read(&mut self) -> Json {
        loop {
            if let Some(json) = self
                .decoder
                .decode(&mut self.buf)
                .expect("client sends valid JSON")
            {
                return json;
            }
            let n = tokio::time::timeout(STEP, self.io.read_buf(&mut self.buf))
                .await
                .expect("client message in time")
                .unwrap();
            assert!(n > 0, "client closed the connection");
        }
    }

    async fn write(&mut self, bytes: &[u8]) {
        self.io.write_all(bytes).await.unwrap();
    }
}

async fn pair(config: ClientConfig) -> (Client, Peer) {
    let (a, b) = tokio::io::duplex(1 << 20);
    let client = Client::over_stream(Box::pin(a), "fake peer", config).await;
    (
        client,
        Peer {
            io: b,
            decoder: FrameDecoder::default(),
            buf: BytesMut::new(),
        },
    )
}

fn quiet() -> ClientConfig {
    ClientConfig {
        inactivity_probe: None,
        ..ClientConfig::default()
    }
}

async fn closed_reason(client: &Client) -> DisconnectReason {
    let mut state = client.connection_state();
    let s = tokio::time::timeout(
        STEP,
        state.wait_for(|s| matches!(s, ConnectionState::Closed(_))),
    )
    .await
    .expect("closed in time")
    .unwrap();
    match &*s {
        ConnectionState::Closed(r) => r.clone(),
        _ => unreachable!("waited for Closed"),
    }
}

/// Starts `list_dbs`, lets the peer read the request, returns the pending call and the id.
async fn pending_list_dbs(
    client: &Client,
    peer: &mut Peer,
) -> (tokio::task::JoinHandle<Result<Vec<String>, Error>>, Json) {
    let c = client.clone();
    let call = tokio::spawn(async move { c.list_dbs().await });
    let req = peer.read().await;
    assert_eq!(req["method"], "list_dbs");
    (call, req["id"].clone())
}

async fn finish<T>(call: tokio::task::JoinHandle<T>) -> T {
    tokio::time::timeout(STEP, call)
        .await
        .expect("call finished, not hung")
        .unwrap()
}

#[tokio::test]
async fn answers_the_servers_echo() {
    let (_client, mut peer) = pair(quiet()).await;
    peer.write(br#"{"method":"echo","params":["x",1],"id":"echo"}"#)
        .await;
    assert_eq!(
        peer.read().await,
        json!({"result":["x",1],"error":null,"id":"echo"})
    );
}

#[tokio::test]
async fn refuses_unknown_server_methods() {
    let (client, mut peer) = pair(quiet()).await;
    peer.write(br#"{"method":"frobnicate","params":[],"id":5}"#)
        .await;
    let reply = peer.read().await;
    assert_eq!(
        (reply["id"].clone(), reply["error"]["error"].clone()),
        (json!(5), json!("unknown method"))
    );
    // The connection stays usable.
    let (call, id) = pending_list_dbs(&client, &mut peer).await;
    peer.write(
        json!({"id": id, "result": ["db"], "error": null})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert_eq!(finish(call).await.unwrap(), vec!["db"]);
}

#[tokio::test]
async fn reply_split_into_single_bytes_is_reassembled() {
    let (client, mut peer) = pair(quiet()).await;
    let (call, id) = pending_list_dbs(&client, &mut peer).await;
    for b in json!({"id": id, "result": ["a{b", "c\"}"], "error": null})
        .to_string()
        .bytes()
    {
        peer.write(&[b]).await;
    }
    assert_eq!(finish(call).await.unwrap(), vec!["a{b", "c\"}"]);
}

#[tokio::test]
async fn server_error_objects_become_rpc_errors() {
    let (client, mut peer) = pair(quiet()).await;
    let (call, id) = pending_list_dbs(&client, &mut peer).await;
    peer.write(
        json!({"id": id, "result": null, "error": {"error": "nope", "details": "why"}})
            .to_string()
            .as_bytes(),
    )
    .await;
    match finish(call).await {
        Err(Error::Rpc {
            method,
            error,
            details,
        }) => assert_eq!(
            (method.as_str(), error.as_str(), details.as_deref()),
            ("list_dbs", "nope", Some("why"))
        ),
        other => panic!("expected Rpc, got {other:?}"),
    }
}

#[tokio::test]
async fn truncated_message_fails_the_pending_call() {
    let (client, mut peer) = pair(quiet()).await;
    let (call, id) = pending_list_dbs(&client, &mut peer).await;
    peer.write(format!(r#"{{"id":{id},"result":["trunc"#).as_bytes())
        .await;
    drop(peer);
    match finish(call).await {
        Err(Error::Disconnected {
            reason: DisconnectReason::Malformed(e),
            ..
        }) => {
            assert!(
                matches!(*e, WireError::Frame(FrameError::Truncated { .. })),
                "{e}"
            )
        }
        other => panic!("expected a truncation error, got {other:?}"),
    }
    assert!(matches!(
        closed_reason(&client).await,
        DisconnectReason::Malformed(_)
    ));
    assert!(matches!(
        client.list_dbs().await,
        Err(Error::NotConnected { .. })
    ));
}

#[tokio::test]
async fn invalid_json_closes_the_connection() {
    let (client, mut peer) = pair(quiet()).await;
    let (call, _) = pending_list_dbs(&client, &mut peer).await;
    peer.write(br#"{"id":0,"result":[1 2]}"#).await;
    match finish(call).await {
        Err(Error::Disconnected {
            reason: DisconnectReason::Malformed(e),
            ..
        }) => {
            assert!(
                matches!(*e, WireError::Frame(FrameError::InvalidJson { .. })),
                "{e}"
            )
        }
        other => panic!("expected invalid JSON, got {other:?}"),
    }
}

#[tokio::test]
async fn non_object_and_non_message_input_are_errors() {
    for (input, is_frame_error) in [
        (&br#"[1,2]"#[..], true),
        (&br#"{"neither":"request nor response"}"#[..], false),
    ] {
        let (client, mut peer) = pair(quiet()).await;
        peer.write(input).await;
        match closed_reason(&client).await {
            DisconnectReason::Malformed(e) => {
                assert_eq!(matches!(*e, WireError::Frame(_)), is_frame_error, "{e}")
            }
            other => panic!("expected malformed input, got {other}"),
        }
    }
}

#[tokio::test]
async fn response_to_an_unknown_id_is_a_protocol_error() {
    let (client, mut peer) = pair(quiet()).await;
    let (call, _) = pending_list_dbs(&client, &mut peer).await;
    peer.write(br#"{"id":999,"result":[],"error":null}"#).await;
    assert!(matches!(
        finish(call).await,
        Err(Error::Disconnected {
            reason: DisconnectReason::Protocol(_),
            ..
        })
    ));
    let (client, mut peer) = pair(quiet()).await;
    peer.write(br#"{"id":"not-ours","result":[],"error":null}"#)
        .await;
    assert!(
        matches!(closed_reason(&client).await, DisconnectReason::Protocol(m) if m.contains("not-ours"))
    );
}

#[tokio::test]
async fn oversize_message_is_rejected_before_it_ends() {
    let (client, mut peer) = pair(ClientConfig {
        max_message_size: 1024,
        ..quiet()
    })
    .await;
    let (call, id) = pending_list_dbs(&client, &mut peer).await;
    // Never finished: the client must give up on its own.
    peer.write(format!(r#"{{"id":{id},"result":["{}"#, "a".repeat(4096)).as_bytes())
        .await;
    match finish(call).await {
        Err(Error::Disconnected {
            reason: DisconnectReason::Malformed(e),
            ..
        }) => {
            assert!(
                matches!(*e, WireError::Frame(FrameError::TooLarge { limit: 1024 })),
                "{e}"
            )
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
}

#[tokio::test]
async fn wrong_result_shapes_are_typed_errors_and_keep_the_connection() {
    let (client, mut peer) = pair(quiet()).await;
    let (call, id) = pending_list_dbs(&client, &mut peer).await;
    peer.write(
        json!({"id": id, "result": {"a": 1}, "error": null})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert!(
        matches!(finish(call).await, Err(Error::BadReply { method, .. }) if method == "list_dbs")
    );

    let mut t = ovsdb::txn::Transaction::new("db");
    t.insert("T", ovsdb::data::Row::new());
    let c = client.clone();
    let call = tokio::spawn(async move { c.transact(&t).await });
    let req = peer.read().await;
    peer.write(
        json!({"id": req["id"], "result": [{"uuid": "not-a-uuid"}], "error": null})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert!(
        matches!(finish(call).await, Err(Error::BadReply { method, .. }) if method == "transact")
    );

    let c = client.clone();
    let call = tokio::spawn(async move { c.lock("l").await });
    let req = peer.read().await;
    peer.write(
        json!({"id": req["id"], "result": {"locked": "yes"}, "error": null})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert!(matches!(finish(call).await, Err(Error::BadReply { .. })));

    let c = client.clone();
    let call = tokio::spawn(async move { c.get_schema("db").await });
    let req = peer.read().await;
    peer.write(
        json!({"id": req["id"], "result": {"name": "db", "tables": []}, "error": null})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert!(matches!(finish(call).await, Err(Error::Schema(_))));

    let (call, id) = pending_list_dbs(&client, &mut peer).await;
    peer.write(
        json!({"id": id, "result": ["still", "fine"], "error": null})
            .to_string()
            .as_bytes(),
    )
    .await;
    assert_eq!(finish(call).await.unwrap(), vec!["still", "fine"]);
}

#[tokio::test]
async fn malformed_update_notification_ends_the_monitor() {
    let (client, mut peer) = pair(quiet()).await;
    let c = client.clone();
    let start =
        tokio::spawn(async move { c.monitor("db", [("T", MonitorRequest::default())]).await });
    let req = peer.read().await;
    assert_eq!(req["method"], "monitor");
    let monitor_id = req["params"][1].clone();
    peer.write(
        json!({"id": req["id"], "result": {}, "error": null})
            .to_string()
            .as_bytes(),
    )
    .await;
    let mut monitor = finish(start).await.unwrap();
    assert!(matches!(monitor.next().await, Some(MonitorEvent::Snapshot(u)) if u.is_empty()));

    peer.write(json!({"method": "update", "params": [monitor_id, {"T": {"bad-uuid": {"new": {}}}}], "id": null}).to_string().as_bytes()).await;
    assert!(matches!(
        closed_reason(&client).await,
        DisconnectReason::Protocol(_)
    ));
    assert_eq!(
        tokio::time::timeout(STEP, monitor.next())
            .await
            .expect("stream ends"),
        None
    );
}

#[tokio::test]
async fn silent_peer_is_declared_dead_after_an_unanswered_echo() {
    let (client, mut peer) = pair(ClientConfig {
        inactivity_probe: Some(Duration::from_millis(50)),
        ..ClientConfig::default()
    })
    .await;
    let (call, _) = pending_list_dbs(&client, &mut peer).await;
    let probe = peer.read().await;
    assert_eq!(
        (probe["method"].clone(), probe["params"].clone()),
        (json!("echo"), json!([]))
    );
    assert!(matches!(
        finish(call).await,
        Err(Error::Disconnected {
            reason: DisconnectReason::Inactive(_),
            ..
        })
    ));
}

#[tokio::test]
async fn answered_probe_keeps_the_connection() {
    let (client, mut peer) = pair(ClientConfig {
        inactivity_probe: Some(Duration::from_millis(50)),
        ..ClientConfig::default()
    })
    .await;
    for _ in 0..3 {
        let probe = peer.read().await;
        assert_eq!(probe["method"], "echo");
        peer.write(
            json!({"id": probe["id"], "result": [], "error": null})
                .to_string()
                .as_bytes(),
        )
        .await;
    }
    assert!(matches!(
        *client.connection_state().borrow(),
        ConnectionState::Connected { .. }
    ));
}

#[tokio::test]
async fn peer_closing_fails_every_pending_call() {
    let (client, mut peer) = pair(quiet()).await;
    let (first, _) = pending_list_dbs(&client, &mut peer).await;
    let (second, _) = pending_list_dbs(&client, &mut peer).await;
    drop(peer);
    for call in [first, second] {
        assert!(matches!(
            finish(call).await,
            Err(Error::Disconnected {
                reason: DisconnectReason::PeerClosed,
                ..
            })
        ));
    }
}

#[tokio::test]
async fn dropping_the_client_ends_monitor_streams() {
    let (client, mut peer) = pair(quiet()).await;
    let c = client.clone();
    let start = tokio::spawn(async move {
        c.monitor_cond("db", [("T", MonitorRequest::default())])
            .await
    });
    let req = peer.read().await;
    assert_eq!(req["method"], "monitor_cond");
    peer.write(
        json!({"id": req["id"], "result": {}, "error": null})
            .to_string()
            .as_bytes(),
    )
    .await;
    let mut monitor = finish(start).await.unwrap();
    assert!(matches!(
        monitor.next().await,
        Some(MonitorEvent::Snapshot(_))
    ));
    drop(client);
    assert_eq!(
        tokio::time::timeout(STEP, monitor.next())
            .await
            .expect("stream ends"),
        None
    );
}
