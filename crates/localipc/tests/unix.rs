//! Unix socket listeners: round trip, permissions, stale and live socket files, cleanup, and a
//! caller of another user being refused.
#![cfg(unix)]

mod support;

use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use localipc::{Access, Endpoint, dial, listen};
use support::{TempDir, echo_once, ping};

fn endpoint(path: &Path) -> Endpoint {
    Endpoint::Unix(path.to_owned())
}

fn socket_in(dir: &TempDir) -> PathBuf {
    dir.path().join("agent.sock")
}

#[tokio::test]
async fn listen_and_dial_round_trip() {
    let dir = TempDir::new("round-trip");
    let ep = endpoint(&socket_in(&dir));
    let mut listener = listen(&ep, Access::Administrators).await.unwrap();
    let server = tokio::spawn(async move { echo_once(&mut listener).await });
    assert_eq!(ping(&ep, b"hello over unix").await, b"hello over unix");
    server.await.unwrap();
}

#[tokio::test]
async fn socket_file_is_0600_and_owned_by_the_running_user() {
    let dir = TempDir::new("mode");
    let path = socket_in(&dir);
    let _listener = listen(&endpoint(&path), Access::Administrators)
        .await
        .unwrap();
    let meta = fs::symlink_metadata(&path).unwrap();
    assert_eq!(meta.permissions().mode() & 0o7777, 0o600);
    // A file we create now is owned by the running user: the socket must be too.
    let probe = dir.path().join("probe");
    fs::write(&probe, b"").unwrap();
    let me = fs::metadata(&probe).unwrap();
    assert_eq!((meta.uid(), meta.gid()), (me.uid(), me.gid()));
    // Only the socket (and our probe) are left: the private bind directory is gone.
    let mut names: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["agent.sock", "probe"]);
}

#[tokio::test]
async fn stale_socket_file_is_replaced() {
    let dir = TempDir::new("stale");
    let path = socket_in(&dir);
    // A listener that went away without removing its file (std never unlinks on drop).
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert!(path.exists());
    let ep = endpoint(&path);
    let mut listener = listen(&ep, Access::Administrators).await.unwrap();
    let server = tokio::spawn(async move { echo_once(&mut listener).await });
    assert_eq!(ping(&ep, b"after stale").await, b"after stale");
    server.await.unwrap();
}

#[tokio::test]
async fn live_socket_is_not_stolen() {
    let dir = TempDir::new("live");
    let ep = endpoint(&socket_in(&dir));
    let mut first = listen(&ep, Access::Administrators).await.unwrap();
    let err = listen(&ep, Access::Administrators).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::AddrInUse);
    let msg = err.to_string();
    assert!(
        msg.contains("already in use") && msg.contains("agent.sock"),
        "{msg}"
    );
    // The first listener still serves (after the second one's liveness probe).
    let _probe = first.accept().await.unwrap();
    let server = tokio::spawn(async move { echo_once(&mut first).await });
    assert_eq!(ping(&ep, b"still mine").await, b"still mine");
    server.await.unwrap();
}

#[tokio::test]
async fn a_path_that_is_not_a_socket_is_left_alone() {
    let dir = TempDir::new("not-socket");
    let path = socket_in(&dir);
    fs::write(&path, b"precious").unwrap();
    let err = listen(&endpoint(&path), Access::Administrators)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not a socket"), "{err}");
    assert_eq!(fs::read(&path).unwrap(), b"precious");
}

#[tokio::test]
async fn socket_file_is_removed_on_drop() {
    let dir = TempDir::new("drop");
    let path = socket_in(&dir);
    let listener = listen(&endpoint(&path), Access::Administrators)
        .await
        .unwrap();
    assert!(path.exists());
    drop(listener);
    assert!(!path.exists());
    let err = dial(&endpoint(&path)).await.err().expect("dial after drop");
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert!(err.to_string().contains("nothing is listening"), "{err}");
}

#[tokio::test]
async fn drop_leaves_a_socket_file_that_is_no_longer_ours() {
    let dir = TempDir::new("replaced");
    let path = socket_in(&dir);
    let listener = listen(&endpoint(&path), Access::Administrators)
        .await
        .unwrap();
    fs::remove_file(&path).unwrap();
    let _other = std::os::unix::net::UnixListener::bind(&path).unwrap();
    drop(listener);
    assert!(
        path.exists(),
        "dropping our listener removed another process's socket"
    );
}

#[tokio::test]
async fn missing_directory_is_reported_with_the_endpoint() {
    let dir = TempDir::new("missing-dir");
    let ep = endpoint(&dir.path().join("no-such-dir/agent.sock"));
    let err = listen(&ep, Access::Administrators).await.unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::NotFound);
    assert!(
        err.to_string().starts_with(&format!("listen on {ep}:")),
        "{err}"
    );
}

/// Root bypasses file permissions, so the refusal is shown from a thread running as `nobody`.
#[tokio::test]
async fn another_user_is_refused() {
    if !support::as_other_user::available() {
        testskip::skip(
            "another_user_is_refused",
            "not running as root, cannot switch user",
        );
        return;
    }
    let dir = TempDir::new("other-user");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let path = socket_in(&dir);
    let _listener = listen(&endpoint(&path), Access::Administrators)
        .await
        .unwrap();
    let as_nobody = {
        let path = path.clone();
        support::as_other_user::run(move || {
            std::os::unix::net::UnixStream::connect(&path).map(drop)
        })
    };
    let err = as_nobody.expect_err("nobody connected to a 0600 socket");
    assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
    // The same user can connect once the mode allows it: the refusal came from the mode.
    fs::set_permissions(&path, fs::Permissions::from_mode(0o666)).unwrap();
    support::as_other_user::run(move || std::os::unix::net::UnixStream::connect(&path).map(drop))
        .unwrap();
}
