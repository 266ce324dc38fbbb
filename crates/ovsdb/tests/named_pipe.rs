//! The Windows named-pipe transport: a client dials `npipe:\\.\pipe\…` (through
//! `localipc::dial`) and talks JSON-RPC with a peer serving the pipe. Runs on Windows (and under
//! Wine).

#![cfg(windows)]

use bytes::BytesMut;
use localipc::Endpoint;
use ovsdb::wire::FrameDecoder;
use ovsdb::{Client, ClientConfig};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::windows::named_pipe::ServerOptions;

#[tokio::test]
async fn client_talks_over_a_named_pipe() {
    let name = format!(r"\\.\pipe\ovsdb-test-{}", std::process::id());
    let mut server = ServerOptions::new()
        .first_pipe_instance(true)
        .create(&name)
        .unwrap();
    let peer = tokio::spawn(async move {
        server.connect().await.unwrap();
        let (mut decoder, mut buf) = (FrameDecoder::default(), BytesMut::new());
        for _ in 0..2 {
            let request = loop {
                if let Some(json) = decoder.decode(&mut buf).unwrap() {
                    break json;
                }
                assert!(
                    server.read_buf(&mut buf).await.unwrap() > 0,
                    "client closed"
                );
            };
            let result = match request["method"].as_str() {
                Some("list_dbs") => json!(["Open_vSwitch"]),
                Some("echo") => request["params"].clone(),
                other => panic!("unexpected {other:?}"),
            };
            server
                .write_all(
                    json!({"id": request["id"], "result": result, "error": null})
                        .to_string()
                        .as_bytes(),
                )
                .await
                .unwrap();
        }
    });
    let endpoint: Endpoint = format!("npipe:{name}").parse().unwrap();
    let client = Client::connect(
        endpoint,
        ClientConfig {
            inactivity_probe: None,
            ..ClientConfig::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(client.list_dbs().await.unwrap(), vec!["Open_vSwitch"]);
    assert_eq!(
        client.echo(vec![json!("over a pipe")]).await.unwrap(),
        vec![json!("over a pipe")]
    );
    peer.await.unwrap();
}

/// Through a pipe↔TCP relay to a real ovsdb-server on the Linux host (Winsock in Wine uses the
/// host's sockets). Run with `--ignored` and `OVSDB_TCP_ADDR=127.0.0.1:PORT` of an
/// `ovsdb-server --remote=ptcp:PORT:127.0.0.1` serving the Open_vSwitch database.
#[tokio::test]
#[ignore = "needs OVSDB_TCP_ADDR: a host ovsdb-server TCP remote"]
async fn client_reaches_a_real_ovsdb_server_through_a_pipe_relay() {
    use ovsdb::data::{Row, Value};
    use ovsdb::txn::{Mutation, Mutator, Transaction};

    let addr =
        std::env::var("OVSDB_TCP_ADDR").expect("OVSDB_TCP_ADDR must name the server's TCP remote");
    let name = format!(r"\\.\pipe\ovsdb-relay-{}", std::process::id());
    let mut pipe = ServerOptions::new()
        .first_pipe_instance(true)
        .create(&name)
        .unwrap();
    tokio::spawn(async move {
        pipe.connect().await.unwrap();
        let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let _ = tokio::io::copy_bidirectional(&mut pipe, &mut tcp).await;
    });
    let client = Client::connect(
        format!("npipe:{name}").parse().unwrap(),
        ClientConfig::default(),
    )
    .await
    .unwrap();
    assert!(
        client
            .list_dbs()
            .await
            .unwrap()
            .contains(&"Open_vSwitch".to_owned())
    );
    let bridge = format!("pipe{}", std::process::id() % 10000);
    let mut t = Transaction::new("Open_vSwitch");
    let (insert, br) = t.insert_named("Bridge", Row::new().with("name", bridge.as_str()));
    t.mutate(
        "Open_vSwitch",
        vec![],
        vec![Mutation::new(
            "bridges",
            Mutator::Insert,
            Value::Set(vec![br]),
        )],
    );
    let uuid = client.transact(&t).await.unwrap().inserted(insert).unwrap();
    let vs = ovsdb::vswitch::VswitchClient::new(client);
    assert_eq!(
        vs.get_bridge(&bridge).await.unwrap().map(|b| b.uuid),
        Some(uuid)
    );
    assert!(vs.delete_bridge(&bridge).await.unwrap());
}
