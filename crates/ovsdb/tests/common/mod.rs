//! Helpers shared by the integration tests: a private ovsdb-server, clients with short
//! reconnect backoff, blocking oracle calls, and killing/restarting the server.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use localipc::Endpoint;
use ovsdb::monitor::MonitorEvent;
use ovsdb::{Client, ClientConfig, Monitor};
use ovstest::Ovs;

/// Guard against hangs: no single step of a test should take this long.
pub const STEP: Duration = Duration::from_secs(30);

pub fn start_db() -> Ovs {
    Ovs::start_db().expect("start ovsdb-server")
}

pub fn config() -> ClientConfig {
    ClientConfig {
        backoff: Duration::from_millis(100),
        ..ClientConfig::default()
    }
}

pub async fn connect(ovs: &Ovs) -> Client {
    Client::connect(Endpoint::Unix(ovs.db_socket()), config())
        .await
        .expect("connect to ovsdb-server")
}

/// `ovs-vsctl args` against the instance (blocking the worker thread, not the runtime).
pub fn vsctl(ovs: &Ovs, args: &[&str]) -> String {
    tokio::task::block_in_place(|| ovs.vsctl(args))
        .unwrap_or_else(|e| panic!("ovs-vsctl {args:?}: {e}"))
}

/// `ovs-vsctl --no-wait args` (for instances without ovs-vswitchd).
pub fn vsctl_nowait(ovs: &Ovs, args: &[&str]) -> String {
    let mut all = vec!["--no-wait"];
    all.extend_from_slice(args);
    vsctl(ovs, &all)
}

/// Runs `ovsdb-client args… unix:<db.sock>` style commands; `{db}` is replaced by the socket.
pub fn ovsdb_client(ovs: &Ovs, args: &[&str]) -> String {
    let db = format!("unix:{}", ovs.db_socket().display());
    let args: Vec<String> = args.iter().map(|a| a.replace("{db}", &db)).collect();
    let out = tokio::task::block_in_place(|| Command::new("ovsdb-client").args(&args).output())
        .expect("run ovsdb-client");
    assert!(
        out.status.success(),
        "ovsdb-client {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits for the next monitor event.
pub async fn next_event(monitor: &mut Monitor) -> MonitorEvent {
    tokio::time::timeout(STEP, monitor.next())
        .await
        .expect("monitor event in time")
        .expect("monitor stream open")
}

/// Kills the instance's ovsdb-server (SIGKILL, by its pidfile) and waits until it is gone.
pub fn kill_ovsdb(ovs: &Ovs) {
    let pidfile = ovs.dir().join("ovsdb-server.pid");
    let pid = std::fs::read_to_string(&pidfile)
        .expect("ovsdb-server pidfile")
        .trim()
        .to_owned();
    let status = Command::new("kill")
        .args(["-KILL", &pid])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill {pid}");
    let deadline = Instant::now() + STEP;
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < deadline, "ovsdb-server {pid} did not exit");
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = std::fs::remove_file(&pidfile);
    let _ = std::fs::remove_file(ovs.db_socket());
}

/// Starts ovsdb-server again on the instance's database, socket and pidfile.
pub fn start_ovsdb(ovs: &Ovs) {
    let d = ovs.dir().display();
    let status = Command::new("ovsdb-server")
        .arg(ovs.dir().join("conf.db"))
        .args([
            &format!("--remote=punix:{d}/db.sock"),
            &format!("--pidfile={d}/ovsdb-server.pid"),
            &format!("--unixctl={d}/ovsdb-server.ctl"),
            &format!("--log-file={d}/ovsdb-server.log"),
            "-vconsole:off",
            "--detach",
        ])
        .status()
        .expect("run ovsdb-server");
    assert!(status.success(), "ovsdb-server restart failed");
    let deadline = Instant::now() + STEP;
    while !ovs.db_socket().exists() {
        assert!(
            Instant::now() < deadline,
            "ovsdb-server socket did not reappear"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
