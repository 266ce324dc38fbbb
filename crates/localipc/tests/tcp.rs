//! TCP listeners: loopback round trip, the bound port, and non-loopback addresses refused.

mod support;

use std::io;

use localipc::{Access, Endpoint, listen};
use support::{echo_once, ping};

#[tokio::test]
async fn loopback_round_trip_on_a_picked_port() {
    let mut listener = listen(&"tcp:127.0.0.1:0".parse().unwrap(), Access::Administrators)
        .await
        .unwrap();
    let ep = listener.endpoint().clone();
    let Endpoint::Tcp(addr) = &ep else {
        panic!("not tcp: {ep}")
    };
    assert!(
        addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"),
        "{addr}"
    );
    let server = tokio::spawn(async move { echo_once(&mut listener).await });
    assert_eq!(ping(&ep, b"hello over tcp").await, b"hello over tcp");
    server.await.unwrap();
}

#[tokio::test]
async fn localhost_resolves_to_loopback_and_is_accepted() {
    let listener = listen(&"tcp:localhost:0".parse().unwrap(), Access::Administrators)
        .await
        .unwrap();
    assert!(listener.endpoint().to_string().starts_with("tcp:"));
}

#[tokio::test]
async fn non_loopback_addresses_are_refused() {
    for addr in ["tcp:0.0.0.0:0", "tcp:[::]:0"] {
        let err = listen(&addr.parse().unwrap(), Access::Administrators)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{addr}");
        assert!(err.to_string().contains("loopback-only"), "{err}");
    }
}
