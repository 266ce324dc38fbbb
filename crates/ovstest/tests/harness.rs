//! The harness starts real daemons, isolates them, and leaves nothing behind.
#![cfg(target_os = "linux")]

use ovstest::{Daemons, Ovs};

#[test]
fn full_instance_runs_a_bridge_and_cleans_up() {
    let ovs = Ovs::start().expect("start OVS");
    ovs.add_bridge("br0").expect("add bridge");
    let flows = ovs
        .ofctl(&["-O", "OpenFlow15", "dump-flows", "{mgmt:br0}"])
        .expect("dump-flows");
    assert!(flows.contains("OFPST_FLOW reply"), "{flows}");
    let dir = ovs.dir().to_owned();
    let ns = ovs.netns().unwrap().to_owned();
    drop(ovs);
    assert!(!dir.exists(), "instance directory left behind");
    let list = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&list.stdout).contains(&ns),
        "netns left behind"
    );
}

#[test]
fn two_instances_run_side_by_side() {
    let a = Ovs::start().expect("start a");
    let b = Ovs::start().expect("start b");
    a.add_bridge("br0").unwrap();
    b.add_bridge("br0").unwrap();
    assert_ne!(a.db_socket(), b.db_socket());
}

#[test]
fn cleans_up_after_a_panicking_test() {
    let dir = std::panic::catch_unwind(|| {
        let ovs = Ovs::start_with(Daemons::DbOnly, None).unwrap();
        let dir = ovs.dir().to_owned();
        std::panic::panic_any(dir);
    })
    .unwrap_err();
    let dir = dir.downcast::<std::path::PathBuf>().unwrap();
    assert!(!dir.exists());
}

#[test]
fn vswitchd_restart_keeps_the_configuration() {
    let ovs = Ovs::start().unwrap();
    ovs.add_bridge("br0").unwrap();
    ovs.ofctl(&["add-flow", "{mgmt:br0}", "priority=5,actions=drop"])
        .unwrap();
    ovs.restart_vswitchd().unwrap();
    assert_eq!(ovs.vsctl(&["list-br"]).unwrap().trim(), "br0");
}

#[test]
fn tcp_remote_is_reachable() {
    let ovs = Ovs::start_db().unwrap();
    let port = ovs.add_tcp_remote().unwrap();
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
}
