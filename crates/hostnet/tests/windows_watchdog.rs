//! The takeover rollback watchdog: verdicts with scripted probes on tokio's paused clock, and
//! the real probes against listeners on 127.0.0.1.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::task::JoinHandle;

use hostnet::windows::watchdog::{
    ProbeError, Reachability, ScriptedProbe, TakeoverRollback, Target, TcpAnswer, TcpProbe,
    Watchdog, WatchdogConfig, WatchdogVerdict,
};

/// Counts rollbacks; fails them when `fail`.
#[derive(Default)]
struct Rollback {
    calls: AtomicUsize,
    fail: bool,
}

impl Rollback {
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl TakeoverRollback for Rollback {
    type Error = io::Error;

    async fn rollback(&self) -> Result<(), io::Error> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.fail {
            Err(io::Error::other("NIC configuration could not be restored"))
        } else {
            Ok(())
        }
    }
}

/// 30 s window, a round every 3 s: 11 rounds (0, 3, ..., 30 s).
fn config() -> WatchdogConfig {
    WatchdogConfig {
        window: Duration::from_secs(30),
        interval: Duration::from_secs(3),
        probe_timeout: Duration::from_secs(2),
    }
}

const ROUNDS: usize = 11;

/// Asserts that `verdict` is a confirmation by `target` in `round`.
fn assert_confirmed(verdict: &WatchdogVerdict, target: Target, round: u32) {
    match verdict {
        WatchdogVerdict::Confirmed {
            target: by,
            round: at,
            ..
        } => assert_eq!((*by, *at), (target, round)),
        other => panic!("expected confirmation by {target:?} in round {round}, got {other:?}"),
    }
}

/// A listener on 127.0.0.1 and the task that accepts one connection on it.
async fn one_connection_listener() -> (SocketAddr, JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    let acceptor = tokio::spawn(async move {
        listener.accept().await.expect("accept");
    });
    (address, acceptor)
}

/// A stop signal that never comes.
async fn never() {
    std::future::pending::<()>().await
}

#[tokio::test(start_paused = true)]
async fn both_lost_for_the_whole_window_rolls_back_once() {
    let gateway = ScriptedProbe::always("gateway", false);
    let api = ScriptedProbe::always("api", false);
    let rollback = Rollback::default();
    let start = tokio::time::Instant::now();
    let verdict = Watchdog::new(gateway.clone(), api.clone(), config())
        .watch(&rollback, never())
        .await;
    assert!(
        matches!(
            verdict,
            WatchdogVerdict::RolledBack {
                rounds: 11,
                result: Ok(())
            }
        ),
        "{verdict:?}"
    );
    assert_eq!(rollback.calls(), 1);
    assert_eq!(gateway.probes(), ROUNDS);
    assert_eq!(api.probes(), ROUNDS);
    // Decided right after the last round of the window, not a round later.
    assert_eq!(start.elapsed(), Duration::from_secs(30));
}

#[tokio::test(start_paused = true)]
async fn failed_rollback_is_reported() {
    let rollback = Rollback {
        fail: true,
        ..Rollback::default()
    };
    let watchdog = Watchdog::new(
        ScriptedProbe::always("gateway", false),
        ScriptedProbe::always("api", false),
        config(),
    );
    match watchdog.watch(&rollback, never()).await {
        WatchdogVerdict::RolledBack {
            result: Err(error), ..
        } => {
            assert!(error.to_string().contains("could not be restored"));
        }
        other => panic!("expected a failed rollback, got {other:?}"),
    }
    assert_eq!(rollback.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn one_target_lost_is_no_rollback() {
    for (gateway_up, api_up, answered) in [
        (false, true, Target::ApiServer),
        (true, false, Target::Gateway),
    ] {
        let rollback = Rollback::default();
        let watchdog = Watchdog::new(
            ScriptedProbe::always("gateway", gateway_up),
            ScriptedProbe::always("api", api_up),
            config(),
        );
        assert_confirmed(&watchdog.watch(&rollback, never()).await, answered, 1);
        assert_eq!(rollback.calls(), 0);
    }
}

#[tokio::test(start_paused = true)]
async fn recovery_in_the_last_round_of_the_window_is_no_rollback() {
    let mut answers = vec![false; ROUNDS - 1];
    answers.push(true);
    let gateway = ScriptedProbe::new("gateway", answers);
    let rollback = Rollback::default();
    let verdict = Watchdog::new(gateway, ScriptedProbe::always("api", false), config())
        .watch(&rollback, never())
        .await;
    assert_confirmed(&verdict, Target::Gateway, 11);
    assert!(
        matches!(verdict, WatchdogVerdict::Confirmed { after, .. } if after == Duration::from_secs(30))
    );
    assert_eq!(rollback.calls(), 0);
}

#[tokio::test(start_paused = true)]
async fn recovery_mid_window_is_no_rollback() {
    let api = ScriptedProbe::new("api", [false, false, false, true]);
    let rollback = Rollback::default();
    let verdict = Watchdog::new(ScriptedProbe::always("gateway", false), api, config())
        .watch(&rollback, never())
        .await;
    assert_confirmed(&verdict, Target::ApiServer, 4);
    assert_eq!(rollback.calls(), 0);
}

#[tokio::test(start_paused = true)]
async fn stop_before_the_window_ends_is_no_rollback() {
    let gateway = ScriptedProbe::always("gateway", false);
    let rollback = Rollback::default();
    let watchdog = Watchdog::new(
        gateway.clone(),
        ScriptedProbe::always("api", false),
        config(),
    );
    let verdict = watchdog
        .watch(&rollback, tokio::time::sleep(Duration::from_secs(29)))
        .await;
    // Rounds at 0, 3, ..., 27 s ran; the one at 30 s did not.
    assert!(
        matches!(verdict, WatchdogVerdict::Stopped { rounds: 10 }),
        "{verdict:?}"
    );
    assert_eq!(gateway.probes(), 10);
    assert_eq!(rollback.calls(), 0);
}

/// A probe that never answers: the watchdog's own timeout ends it.
struct Silent;

impl Reachability for Silent {
    fn target(&self) -> String {
        "silent".into()
    }

    async fn probe(&self, _timeout: Duration) -> Result<(), ProbeError> {
        std::future::pending().await
    }
}

#[tokio::test(start_paused = true)]
async fn probes_that_hang_count_as_lost() {
    let rollback = Rollback::default();
    let verdict = Watchdog::new(Silent, Silent, config())
        .watch(&rollback, never())
        .await;
    assert!(
        matches!(verdict, WatchdogVerdict::RolledBack { rounds: 11, .. }),
        "{verdict:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_hanging_probe_delays_the_verdict_by_its_timeout_only() {
    // Each round waits the full 3 s timeout for the silent API server: rounds still start
    // every 3 s, and the verdict comes when the last round's timeout ends.
    let config = WatchdogConfig {
        probe_timeout: Duration::from_secs(3),
        ..config()
    };
    let gateway = ScriptedProbe::always("gateway", false);
    let rollback = Rollback::default();
    let start = tokio::time::Instant::now();
    let verdict = Watchdog::new(gateway.clone(), Silent, config)
        .watch(&rollback, never())
        .await;
    assert!(
        matches!(verdict, WatchdogVerdict::RolledBack { rounds: 11, .. }),
        "{verdict:?}"
    );
    assert_eq!(gateway.probes(), ROUNDS);
    assert_eq!(start.elapsed(), Duration::from_secs(33));
}

/// A TCP port on 127.0.0.1 with nothing listening: bound, then closed.
async fn closed_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("address").port();
    drop(listener);
    port
}

#[tokio::test]
async fn tcp_probe_reaches_a_listener() {
    let (address, acceptor) = one_connection_listener().await;
    TcpProbe::new(address.to_string(), TcpAnswer::Accepted)
        .probe(Duration::from_secs(5))
        .await
        .expect("reachable");
    acceptor
        .await
        .expect("the listener accepted the probe's connection");
}

#[tokio::test]
async fn tcp_probe_of_a_closed_port_is_lost_unless_a_refusal_counts() {
    let target = format!("127.0.0.1:{}", closed_port().await);
    let strict = TcpProbe::new(target.clone(), TcpAnswer::Accepted);
    match strict.probe(Duration::from_secs(5)).await {
        Err(ProbeError::Io { source, .. }) => {
            assert_eq!(source.kind(), io::ErrorKind::ConnectionRefused)
        }
        other => panic!("expected a refused connection, got {other:?}"),
    }
    // The host answered with a reset: reachable for a router check.
    let any = TcpProbe::new(target, TcpAnswer::AcceptedOrRefused);
    any.probe(Duration::from_secs(5))
        .await
        .expect("a refusal is an answer");
}

#[tokio::test]
async fn tcp_probe_resolves_names() {
    let (address, acceptor) = one_connection_listener().await;
    TcpProbe::new(format!("localhost:{}", address.port()), TcpAnswer::Accepted)
        .probe(Duration::from_secs(5))
        .await
        .expect("localhost reachable");
    acceptor.await.expect("accepted");
}

#[tokio::test]
async fn tcp_probe_of_an_unparsable_target_is_an_error() {
    let probe = TcpProbe::new("no port here", TcpAnswer::Accepted);
    assert!(matches!(
        probe.probe(Duration::from_secs(5)).await,
        Err(ProbeError::Io { .. })
    ));
}

#[tokio::test]
async fn watchdog_with_real_probes_confirms_a_local_api_server() {
    let (address, acceptor) = one_connection_listener().await;
    let gateway = TcpProbe::new(
        format!("127.0.0.1:{}", closed_port().await),
        TcpAnswer::Accepted,
    );
    let api = TcpProbe::new(address.to_string(), TcpAnswer::Accepted);
    let rollback = Rollback::default();
    let verdict = Watchdog::new(gateway, api, config())
        .watch(&rollback, never())
        .await;
    assert_confirmed(&verdict, Target::ApiServer, 1);
    acceptor.await.expect("accepted");
    assert_eq!(rollback.calls(), 0);
}

#[cfg(windows)]
#[tokio::test]
async fn icmp_echo_reaches_the_loopback_address() {
    use hostnet::windows::watchdog::IcmpEchoProbe;
    let probe = IcmpEchoProbe::new(std::net::Ipv4Addr::LOCALHOST);
    assert_eq!(probe.target(), "icmp 127.0.0.1");
    probe
        .probe(Duration::from_secs(2))
        .await
        .expect("127.0.0.1 answers ICMP echo");
}
