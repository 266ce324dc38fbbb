//! The Open_vSwitch helpers against a real ovsdb-server (and ovs-vswitchd where an OpenFlow
//! port must be assigned), cross-checked with ovs-vsctl.

#![cfg(target_os = "linux")]

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use ovsdb::Error;
use ovsdb::vswitch::{BridgeSpec, FailMode, PortSpec, VswitchClient};

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

async fn vswitch(ovs: &ovstest::Ovs) -> VswitchClient {
    VswitchClient::new(connect(ovs).await)
}

fn full_bridge(name: &str) -> BridgeSpec {
    BridgeSpec {
        datapath_type: Some("netdev".into()),
        protocols: vec![
            "OpenFlow10".into(),
            "OpenFlow13".into(),
            "OpenFlow15".into(),
        ],
        fail_mode: Some(FailMode::Secure),
        datapath_id: Some(0x1234),
        other_config: map(&[("disable-in-band", "true")]),
        external_ids: map(&[("owner", "antrea")]),
        ..BridgeSpec::new(name)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_bridge_sets_every_column_and_is_idempotent() {
    let ovs = start_db();
    let vs = vswitch(&ovs).await;
    let uuid = vs.create_bridge(&full_bridge("br-int")).await.unwrap();
    let get = |col: &str| {
        vsctl_nowait(&ovs, &["get", "Bridge", "br-int", col])
            .trim()
            .to_owned()
    };
    assert_eq!(get("_uuid"), uuid.to_string());
    assert_eq!(get("datapath_type"), "netdev");
    assert_eq!(get("protocols"), "[OpenFlow10, OpenFlow13, OpenFlow15]");
    assert_eq!(get("fail_mode"), "secure");
    assert_eq!(get("other_config:datapath-id"), r#""0000000000001234""#);
    assert_eq!(get("other_config:disable-in-band"), r#""true""#);
    assert_eq!(get("external_ids:owner"), "antrea");
    // Like add-br: a local internal port named after the bridge, not listed as a port.
    assert_eq!(vsctl_nowait(&ovs, &["list-ports", "br-int"]).trim(), "");
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Interface", "br-int", "type"]).trim(),
        "internal"
    );
    let local_iface = vsctl_nowait(&ovs, &["get", "Interface", "br-int", "_uuid"]);
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Port", "br-int", "interfaces"]).trim(),
        format!("[{}]", local_iface.trim())
    );
    assert_eq!(
        get("ports"),
        format!(
            "[{}]",
            vsctl_nowait(&ovs, &["get", "Port", "br-int", "_uuid"]).trim()
        )
    );

    assert_eq!(
        vs.create_bridge(&full_bridge("br-int")).await.unwrap(),
        uuid
    );
    assert_eq!(vsctl_nowait(&ovs, &["list-br"]).trim(), "br-int");

    let row = vs.get_bridge("br-int").await.unwrap().unwrap();
    assert_eq!(row.uuid, uuid);
    assert_eq!(
        row.protocols,
        vec!["OpenFlow10", "OpenFlow13", "OpenFlow15"]
    );
    assert_eq!(row.fail_mode.as_deref(), Some("secure"));
    assert_eq!(row.ports.len(), 1);
    assert_eq!(row.external_ids, map(&[("owner", "antrea")]));
    assert!(vs.get_bridge("nope").await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_bridge_removes_it_and_its_ports() {
    let ovs = start_db();
    let vs = vswitch(&ovs).await;
    vs.create_bridge(&BridgeSpec::new("br0")).await.unwrap();
    vs.create_ports("br0", &[PortSpec::internal("p1")])
        .await
        .unwrap();
    assert!(vs.delete_bridge("br0").await.unwrap());
    assert_eq!(vsctl_nowait(&ovs, &["list-br"]).trim(), "");
    assert_eq!(
        vsctl_nowait(&ovs, &["--columns=name", "list", "Port"]).trim(),
        "",
        "ports garbage-collected"
    );
    assert_eq!(
        vsctl_nowait(&ovs, &["--columns=name", "list", "Interface"]).trim(),
        ""
    );
    assert!(!vs.delete_bridge("br0").await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_many_ports_in_one_transaction() {
    let ovs = start_db();
    let vs = vswitch(&ovs).await;
    vs.create_bridge(&BridgeSpec::new("br0")).await.unwrap();
    let specs: Vec<PortSpec> = (0..100)
        .map(|i| PortSpec {
            interface_type: Some(if i % 2 == 0 { "internal" } else { "geneve" }.into()),
            options: if i % 2 == 0 {
                BTreeMap::new()
            } else {
                map(&[("remote_ip", "flow"), ("key", "flow")])
            },
            ofport_request: Some(100 + i),
            mtu_request: Some(1450),
            interface_external_ids: map(&[("attached-mac", "aa:bb:cc:dd:ee:ff")]),
            port_external_ids: map(&[("antrea-type", "container"), ("index", &i.to_string())]),
            ..PortSpec::new(&format!("p{i}"))
        })
        .collect();
    let created = vs.create_ports("br0", &specs).await.unwrap();
    assert_eq!(created.len(), 100);
    let listed = vsctl_nowait(&ovs, &["list-ports", "br0"]);
    let mut want: Vec<String> = (0..100).map(|i| format!("p{i}")).collect();
    want.sort();
    assert_eq!(listed.lines().collect::<Vec<_>>(), want);

    let iget = |name: &str, col: &str| {
        vsctl_nowait(&ovs, &["get", "Interface", name, col])
            .trim()
            .to_owned()
    };
    assert_eq!(iget("p1", "_uuid"), created[1].interface.to_string());
    assert_eq!(iget("p1", "type"), "geneve");
    assert_eq!(iget("p1", "options"), r#"{key=flow, remote_ip=flow}"#);
    assert_eq!(iget("p0", "type"), "internal");
    assert_eq!(iget("p7", "ofport_request"), "107");
    assert_eq!(iget("p7", "mtu_request"), "1450");
    assert_eq!(
        iget("p7", "external_ids:attached-mac"),
        r#""aa:bb:cc:dd:ee:ff""#
    );
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Port", "p7", "_uuid"]).trim(),
        created[7].port.to_string()
    );
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Port", "p7", "external_ids:index"]).trim(),
        r#""7""#
    );

    let iface = vs.get_interface("p7").await.unwrap().unwrap();
    assert_eq!(
        (
            iface.interface_type.as_str(),
            iface.ofport_request,
            iface.mtu_request
        ),
        ("geneve", Some(107), Some(1450))
    );
    assert_eq!(
        iface.options,
        map(&[("key", "flow"), ("remote_ip", "flow")])
    );
    let port = vs.get_port("p7").await.unwrap().unwrap();
    assert_eq!(port.interfaces, vec![iface.uuid]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_ports_reports_missing_bridge_and_duplicates() {
    let ovs = start_db();
    let vs = vswitch(&ovs).await;
    match vs.create_ports("nobridge", &[PortSpec::new("x")]).await {
        Err(Error::BridgeNotFound(b)) => assert_eq!(b, "nobridge"),
        other => panic!("expected BridgeNotFound, got {other:?}"),
    }
    vs.create_bridge(&BridgeSpec::new("br0")).await.unwrap();
    vs.create_port("br0", &PortSpec::new("dup")).await.unwrap();
    match vs
        .create_ports("br0", &[PortSpec::new("other"), PortSpec::new("dup")])
        .await
    {
        Err(Error::Transaction(e)) => assert_eq!(e.error, "constraint violation"),
        other => panic!("expected a constraint violation, got {other:?}"),
    }
    assert_eq!(
        vsctl_nowait(&ovs, &["list-ports", "br0"]).trim(),
        "dup",
        "nothing of the failed transaction remains"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ports_in_one_transaction() {
    let ovs = start_db();
    let vs = vswitch(&ovs).await;
    vs.create_bridge(&BridgeSpec::new("br0")).await.unwrap();
    vs.create_ports(
        "br0",
        &[PortSpec::new("a"), PortSpec::new("b"), PortSpec::new("c")],
    )
    .await
    .unwrap();
    assert_eq!(
        vs.delete_ports("br0", &["a", "c", "missing"])
            .await
            .unwrap(),
        2
    );
    assert_eq!(vsctl_nowait(&ovs, &["list-ports", "br0"]).trim(), "b");
    assert!(vs.delete_port("br0", "b").await.unwrap());
    assert!(!vs.delete_port("br0", "b").await.unwrap());
    assert_eq!(
        vsctl_nowait(&ovs, &["--columns=name", "list", "Interface"])
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count(),
        1,
        "only the local port's interface remains"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_interface_type_options_and_external_ids() {
    let ovs = start_db();
    let vs = vswitch(&ovs).await;
    vs.create_bridge(&BridgeSpec::new("br0")).await.unwrap();
    vs.create_port("br0", &PortSpec::new("tun0")).await.unwrap();
    vs.set_interface_type("tun0", "vxlan").await.unwrap();
    vs.set_interface_options("tun0", &map(&[("remote_ip", "flow"), ("dst_port", "4789")]))
        .await
        .unwrap();
    vs.set_interface_external_ids("tun0", &map(&[("k", "v")]))
        .await
        .unwrap();
    vs.set_port_external_ids("tun0", &map(&[("antrea-type", "tunnel")]))
        .await
        .unwrap();
    let get = |col: &str| {
        vsctl_nowait(&ovs, &["get", "Interface", "tun0", col])
            .trim()
            .to_owned()
    };
    assert_eq!(get("type"), "vxlan");
    assert_eq!(get("options"), "{dst_port=\"4789\", remote_ip=flow}");
    assert_eq!(get("external_ids"), "{k=v}");
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Port", "tun0", "external_ids"]).trim(),
        "{antrea-type=tunnel}"
    );
    assert!(
        matches!(vs.set_interface_type("ghost", "internal").await, Err(Error::InterfaceNotFound(n)) if n == "ghost")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ports_with_external_id_finds_ports_made_by_anyone() {
    let ovs = start_db();
    let vs = vswitch(&ovs).await;
    vs.create_bridge(&BridgeSpec::new("br0")).await.unwrap();
    let container = |n: &str| PortSpec {
        port_external_ids: map(&[("antrea-type", "container")]),
        ..PortSpec::new(n)
    };
    vs.create_ports(
        "br0",
        &[container("c1"), container("c2"), PortSpec::new("plain")],
    )
    .await
    .unwrap();
    vsctl_nowait(
        &ovs,
        &[
            "add-port",
            "br0",
            "c3",
            "--",
            "set",
            "Port",
            "c3",
            "external_ids:antrea-type=container",
        ],
    );
    vsctl_nowait(
        &ovs,
        &[
            "add-port",
            "br0",
            "gw",
            "--",
            "set",
            "Port",
            "gw",
            "external_ids:antrea-type=gateway",
        ],
    );
    let mut names: Vec<String> = vs
        .ports_with_external_id("antrea-type", "container")
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    names.sort();
    assert_eq!(names, vec!["c1", "c2", "c3"]);
    let gw = vs
        .ports_with_external_id("antrea-type", "gateway")
        .await
        .unwrap();
    assert_eq!(gw.len(), 1);
    assert_eq!(
        gw[0].uuid.to_string(),
        vsctl_nowait(&ovs, &["get", "Port", "gw", "_uuid"]).trim()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_ofport_times_out_without_vswitchd() {
    let ovs = start_db();
    let vs = vswitch(&ovs).await;
    vs.create_bridge(&BridgeSpec::new("br0")).await.unwrap();
    vs.create_port("br0", &PortSpec::internal("p"))
        .await
        .unwrap();
    assert_eq!(vs.ofport("p").await.unwrap(), None);
    match vs.wait_for_ofport("p", Duration::from_millis(300)).await {
        Err(Error::Timeout { what, .. }) => assert!(what.contains("\"p\"")),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(matches!(
        vs.ofport("ghost").await,
        Err(Error::InterfaceNotFound(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_ofport_with_vswitchd() {
    let ovs = tokio::task::block_in_place(ovstest::Ovs::start).expect("start ovs");
    let vs = vswitch(&ovs).await;
    vs.create_bridge(&full_bridge("br0")).await.unwrap();
    let wait_started = vs.clone();
    let waiter = tokio::spawn(async move { wait_started.wait_for_ofport("p1", STEP).await });
    vs.create_ports(
        "br0",
        &[
            PortSpec {
                ofport_request: Some(7),
                ..PortSpec::internal("p1")
            },
            PortSpec::internal("p2"),
        ],
    )
    .await
    .unwrap();
    let ofport = waiter.await.unwrap().unwrap();
    assert_eq!(ofport, 7);
    assert_eq!(
        vsctl(&ovs, &["get", "Interface", "p1", "ofport"]).trim(),
        "7"
    );
    let p2 = vs.wait_for_ofport("p2", STEP).await.unwrap();
    assert_eq!(
        vsctl(&ovs, &["get", "Interface", "p2", "ofport"]).trim(),
        p2.to_string()
    );
    assert_eq!(vs.ofport("p2").await.unwrap(), Some(i64::from(p2)));

    // An interface ovs-vswitchd cannot create gets ofport -1 and an error.
    vs.create_port(
        "br0",
        &PortSpec {
            interface_type: Some("no-such-type".into()),
            ..PortSpec::new("bad")
        },
    )
    .await
    .unwrap();
    match vs.wait_for_ofport("bad", STEP).await {
        Err(Error::InterfaceFailed { name, error }) => {
            assert_eq!(name, "bad");
            let oracle = vsctl(&ovs, &["get", "Interface", "bad", "error"]);
            assert_eq!(format!("{error:?}"), oracle.trim());
        }
        other => panic!("expected InterfaceFailed, got {other:?}"),
    }
}

/// The watch registered before the port exists (what a Pod ADD does) sees the ofport that
/// ovs-vswitchd assigns later; one started after the assignment finds it in its snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ofport_watch_started_before_its_port_exists_sees_the_assigned_port() {
    let ovs = tokio::task::block_in_place(ovstest::Ovs::start).expect("start ovs");
    let vs = vswitch(&ovs).await;
    vs.create_bridge(&full_bridge("br0")).await.unwrap();
    let early = vs.watch_ofport("p1").await.unwrap();
    let port = PortSpec {
        ofport_request: Some(9),
        ..PortSpec::internal("p1")
    };
    vs.create_port("br0", &port).await.unwrap();
    assert_eq!(early.wait(STEP).await.unwrap(), 9);
    assert_eq!(
        vsctl(&ovs, &["get", "Interface", "p1", "ofport"]).trim(),
        "9"
    );
    let late = vs.watch_ofport("p1").await.unwrap();
    assert_eq!(late.wait(STEP).await.unwrap(), 9);

    // A watch on a name that never gets a port times out and names it.
    let never = vs.watch_ofport("ghost").await.unwrap();
    match never.wait(Duration::from_millis(300)).await {
        Err(Error::Timeout { what, .. }) => assert!(what.contains("\"ghost\""), "{what}"),
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_snapshot_arrives_whole() {
    let ovs = start_db();
    let vs = vswitch(&ovs).await;
    vs.create_bridge(&BridgeSpec::new("br0")).await.unwrap();
    let specs: Vec<PortSpec> = (0..2000)
        .map(|i| PortSpec::internal(&format!("port-with-a-longer-name-{i}")))
        .collect();
    vs.create_ports("br0", &specs).await.unwrap();
    let request = ovsdb::monitor::MonitorRequest::default();
    let mut mon = vs
        .client()
        .monitor("Open_vSwitch", [("Interface", request)])
        .await
        .unwrap();
    let ovsdb::monitor::MonitorEvent::Snapshot(ovsdb::monitor::Updates::V1(snap)) =
        next_event(&mut mon).await
    else {
        panic!("snapshot expected")
    };
    let listed = vsctl_nowait(&ovs, &["--columns=_uuid", "--bare", "list", "Interface"]);
    let mut oracle: Vec<String> = listed.split_whitespace().map(str::to_owned).collect();
    oracle.sort();
    let ours: Vec<String> = snap["Interface"].keys().map(ToString::to_string).collect();
    assert_eq!(ours.len(), 2001);
    assert_eq!(ours, oracle);
}
