//! Windows named-pipe listeners (run under Wine in CI): round trips with many concurrent
//! clients, the DACL of every instance, exclusive names, busy-pipe retry and clear dial errors.
//! Wine 8 does not check pipe DACLs when a client opens a pipe, so a refused non-administrator
//! cannot be shown here; the DACL itself is read back instead.
#![cfg(windows)]

mod support;

use std::io;

use localipc::{Access, Endpoint, dial, listen};
use support::{echo_once, ping};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The DACL we ask for, and the same with GENERIC_ALL mapped to FILE_ALL_ACCESS, which is how
/// Windows stores generic rights once an object exists.
const EXPECTED_DACLS: [&str; 2] = ["D:P(A;;GA;;;SY)(A;;GA;;;BA)", "D:P(A;;FA;;;SY)(A;;FA;;;BA)"];

fn pipe(name: &str) -> Endpoint {
    Endpoint::NamedPipe(format!(
        r"\\.\pipe\localipc-test-{}-{name}",
        std::process::id()
    ))
}

fn pipe_name(ep: &Endpoint) -> &str {
    match ep {
        Endpoint::NamedPipe(name) => name,
        other => panic!("not a pipe: {other}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_concurrent_clients_round_trip() {
    const CLIENTS: usize = 32;
    let ep = pipe("many");
    let mut listener = listen(&ep, Access::Administrators).await.unwrap();
    let server = tokio::spawn(async move {
        let mut served = Vec::new();
        for _ in 0..CLIENTS {
            let mut stream = listener.accept().await.unwrap();
            served.push(tokio::spawn(async move {
                let mut buf = [0u8; 64];
                let n = stream.read(&mut buf).await.unwrap();
                stream.write_all(&buf[..n]).await.unwrap();
                stream.flush().await.unwrap();
            }));
        }
        for s in served {
            s.await.unwrap();
        }
    });
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let ep = ep.clone();
            tokio::spawn(async move {
                let msg = format!("client {i}");
                let mut stream = dial(&ep).await.unwrap();
                stream.write_all(msg.as_bytes()).await.unwrap();
                stream.flush().await.unwrap();
                let mut reply = vec![0; msg.len()];
                stream.read_exact(&mut reply).await.unwrap();
                assert_eq!(reply, msg.as_bytes());
            })
        })
        .collect();
    for c in clients {
        c.await.unwrap();
    }
    server.await.unwrap();
}

#[tokio::test]
async fn every_instance_carries_the_administrators_only_dacl() {
    let ep = pipe("dacl");
    let mut listener = listen(&ep, Access::Administrators).await.unwrap();
    let first = listener.pipe_dacl_sddl().unwrap();
    println!("first instance DACL: {first}");
    assert!(
        EXPECTED_DACLS.contains(&first.as_str()),
        "first instance: {first}"
    );
    let server = tokio::spawn(async move {
        echo_once(&mut listener).await;
        listener
    });
    assert_eq!(ping(&ep, b"dacl").await, b"dacl");
    // The instance created by accept for the next client.
    let next = server.await.unwrap().pipe_dacl_sddl().unwrap();
    assert!(
        EXPECTED_DACLS.contains(&next.as_str()),
        "next instance: {next}"
    );
}

#[tokio::test]
async fn second_listener_on_the_same_pipe_fails() {
    let ep = pipe("exclusive");
    let mut first = listen(&ep, Access::Administrators).await.unwrap();
    let err = listen(&ep, Access::Administrators).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    assert!(err.to_string().contains("already in use"), "{err}");
    // The first listener is untouched.
    let server = tokio::spawn(async move {
        echo_once(&mut first).await;
        first
    });
    assert_eq!(ping(&ep, b"still mine").await, b"still mine");
    let _first = server.await.unwrap();
}

#[tokio::test]
async fn a_pipe_whose_instances_are_all_busy_is_still_in_use() {
    let ep = pipe("exclusive-busy");
    let _listener = listen(&ep, Access::Administrators).await.unwrap();
    let _client = dial(&ep).await.unwrap();
    let err = listen(&ep, Access::Administrators).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AddrInUse, "{err}");
}

#[tokio::test]
async fn dial_to_a_missing_pipe_says_nothing_listens() {
    let ep = pipe("missing");
    let err = dial(&ep).await.err().expect("dial to a missing pipe");
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    let msg = err.to_string();
    assert!(
        msg.contains("nothing is listening") && msg.contains(pipe_name(&ep)),
        "{msg}"
    );
}

#[tokio::test]
async fn pipe_is_gone_after_the_listener_drops() {
    let ep = pipe("dropped");
    drop(listen(&ep, Access::Administrators).await.unwrap());
    let err = dial(&ep).await.err().expect("dial after drop");
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
}

/// With its only instance taken, the pipe is busy; a dial started then succeeds once accept
/// has created the next instance. (Current-thread runtime: the dial task makes its first,
/// busy attempt at `yield_now`, before accept runs.)
#[tokio::test]
async fn busy_pipe_is_retried_until_an_instance_is_free() {
    use tokio::net::windows::named_pipe::ClientOptions;
    use windows_sys::Win32::Foundation::ERROR_PIPE_BUSY;

    let ep = pipe("busy");
    let mut listener = listen(&ep, Access::Administrators).await.unwrap();
    let _first = dial(&ep).await.unwrap();
    let busy = ClientOptions::new().open(pipe_name(&ep)).unwrap_err();
    assert_eq!(busy.raw_os_error(), Some(ERROR_PIPE_BUSY as i32), "{busy}");

    let second = tokio::spawn({
        let ep = ep.clone();
        async move { dial(&ep).await.map(drop) }
    });
    tokio::task::yield_now().await;
    let _accepted_first = listener.accept().await.unwrap();
    second.await.unwrap().unwrap();
    let _accepted_second = listener.accept().await.unwrap();
}
