//! The connection against a real `ovs-vswitchd` (userspace datapath, private instance per test),
//! with `ovs-vsctl` and `ovs-ofctl` as oracles.
#![cfg(target_os = "linux")]

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use localipc::Endpoint;
use openflow::action::{Action, Instructions};
use openflow::conn::{ConnError, ConnEvent, ConnOptions, Encoded, OfConnection, PacketInMessage};
use openflow::msg::bundle::{BundleControl, BundleCtrlType, bundle_flags};
use openflow::msg::echo::EchoReply;
use openflow::msg::flow_mod::FlowMod;
use openflow::msg::group_mod::GroupMod;
use openflow::msg::meter_mod::MeterMod;
use openflow::msg::port::PortReason;
use ovstest::Ovs;

/// A flow mod from `add-flow` text.
fn flow(text: &str) -> FlowMod {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// `priority=P actions=drop`.
fn drop_flow(priority: u16) -> Encoded {
    Encoded::new(&flow(&format!("priority={priority} actions=drop"))).unwrap()
}

/// Output to a port number outside OpenFlow's range: `OFPBAC_BAD_OUT_PORT` when decoded.
fn bad_out_port(priority: u16) -> FlowMod {
    let mut fm = flow(&format!("priority={priority} actions=drop"));
    fm.instructions = Instructions::apply(vec![Action::output(0x1_0000)]);
    fm
}

fn bridge() -> Ovs {
    let ovs = Ovs::start().expect("start ovs");
    ovs.add_bridge("br0").expect("add br0");
    ovs
}

fn endpoint(ovs: &Ovs) -> Endpoint {
    Endpoint::Unix(ovs.mgmt_socket("br0"))
}

fn flows(ovs: &Ovs) -> String {
    ovs.ofctl(&["-O", "OpenFlow15", "dump-flows", "{mgmt:br0}", "--no-stats"])
        .expect("dump-flows")
}

fn has_flow(ovs: &Ovs, priority: u16) -> bool {
    flows(ovs).lines().any(|l| {
        l.split([' ', ','])
            .any(|w| w == format!("priority={priority}"))
    })
}

/// Hang detector: no operation in these tests legitimately takes this long.
async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap_or_else(|_| panic!("{what} hung"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_gives_the_datapath_id() {
    let ovs = bridge();
    let conn = within(
        "connect",
        OfConnection::connect(endpoint(&ovs), ConnOptions::default()),
    )
    .await
    .unwrap();
    let features = conn.features().await.unwrap();
    let expected = ovs.vsctl(&["get", "bridge", "br0", "datapath_id"]).unwrap();
    let expected = u64::from_str_radix(expected.trim().trim_matches('"'), 16).unwrap();
    assert_eq!(features.datapath_id, expected);
    assert_eq!(features.n_tables, 254);
    within("barrier", conn.barrier()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_installs_flows_and_reports_errors_by_name() {
    let ovs = bridge();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    within("good batch", conn.batch(&[drop_flow(10), drop_flow(11)]))
        .await
        .unwrap();
    assert!(has_flow(&ovs, 10) && has_flow(&ovs, 11), "{}", flows(&ovs));

    let batch = [
        drop_flow(100),
        Encoded::new(&bad_out_port(200)).unwrap(),
        drop_flow(300),
    ];
    let err = within("batch", conn.batch(&batch)).await.unwrap_err();
    let ConnError::BatchRejected(rejections) = &err else {
        panic!("unexpected {err}")
    };
    assert_eq!(rejections.len(), 1, "{err}");
    assert_eq!(rejections[0].index, 1);
    assert_eq!(rejections[0].error.name(), Some("OFPBAC_BAD_OUT_PORT"));
    assert_eq!(
        rejections[0].error.offending_header().map(|h| h.xid),
        Some(rejections[0].xid)
    );
    assert!(err.to_string().contains("OFPBAC_BAD_OUT_PORT"), "{err}");
    // A batch is not atomic: the good messages are installed, and already when batch() returns.
    let dump = flows(&ovs);
    assert!(
        has_flow(&ovs, 100) && has_flow(&ovs, 300) && !has_flow(&ovs, 200),
        "{dump}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_errors_arrive_as_async_messages() {
    let ovs = bridge();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    let mut unsolicited = conn.async_messages();
    let xid = conn.send(&bad_out_port(5)).await.unwrap();
    let raw = within("async error", unsolicited.recv()).await.unwrap();
    assert_eq!(raw.header.xid, xid);
    let error = raw.parse::<openflow::msg::error::ErrorMsg>().unwrap();
    assert_eq!(error.name(), Some("OFPBAC_BAD_OUT_PORT"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bundle_applies_all_or_nothing() {
    let ovs = bridge();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();

    // Rejected when added: nothing of the bundle is installed.
    let bundle = [
        drop_flow(300),
        Encoded::new(&bad_out_port(301)).unwrap(),
        drop_flow(302),
    ];
    let err = within("bundle", conn.bundle(&bundle)).await.unwrap_err();
    assert!(
        matches!(&err, ConnError::BundleRejected { rejections, .. } if rejections.len() == 1 && rejections[0].index == 1),
        "{err}"
    );
    assert_eq!(err.error_names(), ["OFPBAC_BAD_OUT_PORT"]);
    assert!(
        !has_flow(&ovs, 300) && !has_flow(&ovs, 302),
        "{}",
        flows(&ovs)
    );

    // Rejected at commit (overlaps an installed flow of the same priority): nothing is
    // installed either.
    ovs.ofctl(&[
        "-O",
        "OpenFlow15",
        "add-flow",
        "{mgmt:br0}",
        "priority=400,ip,actions=drop",
    ])
    .unwrap();
    let overlapping = Encoded::new(&flow("check_overlap,priority=400 actions=drop")).unwrap();
    let err = within("bundle", conn.bundle(&[drop_flow(401), overlapping]))
        .await
        .unwrap_err();
    let names = err.error_names();
    assert!(names.contains(&"OFPFMFC_OVERLAP"), "{err}");
    assert!(names.contains(&"OFPBFC_MSG_FAILED"), "{err}");
    assert!(!has_flow(&ovs, 401), "{}", flows(&ovs));

    // A good bundle is applied whole.
    within("bundle", conn.bundle(&[drop_flow(500), drop_flow(501)]))
        .await
        .unwrap();
    assert!(
        has_flow(&ovs, 500) && has_flow(&ovs, 501),
        "{}",
        flows(&ovs)
    );
}

/// A bundle produced in chunks is one bundle: a rejection in a later chunk names the message's
/// index among all of them and nothing is installed; a chunk that fails to encode discards
/// what earlier chunks added; good chunks are applied whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_in_chunks_is_one_bundle() {
    let ovs = bridge();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    let chunk = |priorities: std::ops::Range<u16>| -> Result<Vec<Encoded>, openflow::EncodeError> {
        Ok(priorities.map(drop_flow).collect())
    };

    let bad = vec![drop_flow(610), Encoded::new(&bad_out_port(611)).unwrap()];
    let err = within(
        "bundle",
        conn.bundle_chunks([chunk(600..605), chunk(605..610), Ok(bad)], || {}),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, ConnError::BundleRejected { rejections, .. } if rejections.len() == 1 && rejections[0].index == 11),
        "{err}"
    );
    assert!((600..612).all(|p| !has_flow(&ovs, p)), "{}", flows(&ovs));

    let too_long = openflow::EncodeError {
        msg_type: 14,
        len: 70_000,
        max: 65_535,
    };
    let err = within(
        "bundle",
        conn.bundle_chunks([chunk(620..625), Err(too_long), chunk(625..630)], || {
            panic!("a chunk failed to encode: not every message was queued")
        }),
    )
    .await
    .unwrap_err();
    assert!(matches!(&err, ConnError::Encode(_)), "{err}");
    assert!((620..630).all(|p| !has_flow(&ovs, p)), "{}", flows(&ovs));

    let mut queued = false;
    let count = within(
        "bundle",
        conn.bundle_chunks([chunk(640..645), chunk(645..650)], || queued = true),
    )
    .await
    .unwrap();
    assert_eq!(count, 10);
    assert!(queued, "told once every message was queued");
    assert!((640..650).all(|p| has_flow(&ovs, p)), "{}", flows(&ovs));
}

fn groups(ovs: &Ovs) -> String {
    ovs.ofctl(&["-O", "OpenFlow15", "dump-groups", "{mgmt:br0}"])
        .expect("dump-groups")
}

/// What Open vSwitch 3.1 takes inside a bundle: group mods (add-or-modify included), and a group
/// before the flows that forward to it, but no meter mods.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bundles_take_group_mods_in_order_but_no_meter_mods() {
    let ovs = bridge();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    let group = |text: &str| -> GroupMod { text.parse().unwrap() };
    let enc = |g: &GroupMod| Encoded::new(g).unwrap();

    let meter: MeterMod = "meter=1 kbps bands=type=drop rate=10".parse().unwrap();
    let err = within(
        "meter bundle",
        conn.bundle(&[Encoded::new(&meter).unwrap()]),
    )
    .await
    .unwrap_err();
    assert_eq!(err.error_names(), ["OFPBFC_MSG_UNSUP"], "{err}");

    // The flow before the group it uses: refused, nothing installed.
    let g1 = group("group_id=1,type=all,bucket=bucket_id:0,actions=output:1");
    let uses_g1 = Encoded::new(&flow("priority=700 actions=group:1")).unwrap();
    let err = within(
        "flow before group",
        conn.bundle(&[uses_g1.clone(), enc(&g1)]),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.error_names(),
        ["OFPBAC_BAD_OUT_GROUP", "OFPBFC_MSG_FAILED"],
        "{err}"
    );
    assert!(!groups(&ovs).contains("group_id=1,"), "{}", groups(&ovs));
    // The group first: applied.
    within("group then flow", conn.bundle(&[enc(&g1), uses_g1]))
        .await
        .unwrap();
    assert!(has_flow(&ovs, 700), "{}", flows(&ovs));

    // Add-or-modify replaces group 1 in place (the flow stays) and creates group 2.
    let g1_new = GroupMod::add_or_modify(
        group("group_id=1,type=select,bucket=bucket_id:0,actions=output:2").group,
    );
    let g2 = GroupMod::add_or_modify(
        group("group_id=2,type=all,bucket=bucket_id:0,actions=output:3").group,
    );
    within("add or modify", conn.bundle(&[enc(&g1_new), enc(&g2)]))
        .await
        .unwrap();
    let dump = groups(&ovs);
    assert!(dump.contains(&g1_new.to_string()), "{dump}");
    assert!(dump.contains(&g2.to_string()), "{dump}");
    assert!(has_flow(&ovs, 700), "{}", flows(&ovs));
    // Plain add of an existing group is refused.
    let err = within("add existing", conn.bundle(&[enc(&g1)]))
        .await
        .unwrap_err();
    assert!(err.error_names().contains(&"OFPGMFC_GROUP_EXISTS"), "{err}");

    // Deleting a group deletes the flows that forward to it.
    within("delete group", conn.bundle(&[enc(&GroupMod::delete(1))]))
        .await
        .unwrap();
    assert!(!has_flow(&ovs, 700), "{}", flows(&ovs));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bundle_whose_open_fails_is_not_committed() {
    let ovs = bridge();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    // Take the id the connection's first bundle gets (ids count from 1): Open vSwitch rejects
    // its open with OFPBFC_BAD_ID, yet creates a fresh bundle for the adds that follow it.
    let flags = bundle_flags::ATOMIC | bundle_flags::ORDERED;
    let open = BundleControl::new(1, BundleCtrlType::OpenRequest, flags);
    within("open", conn.request::<_, BundleControl>(&open))
        .await
        .unwrap();

    let err = within("bundle", conn.bundle(&[drop_flow(600), drop_flow(601)]))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ConnError::BundleRejected { rejections, control: Some(_) } if rejections.is_empty()),
        "{err}"
    );
    assert_eq!(err.error_names(), ["OFPBFC_BAD_ID"]);
    assert!(
        !has_flow(&ovs, 600) && !has_flow(&ovs, 601),
        "{}",
        flows(&ovs)
    );

    // The failed bundle was discarded: committing its id finds nothing.
    let commit = BundleControl::new(1, BundleCtrlType::CommitRequest, flags);
    let err = within("commit", conn.request::<_, BundleControl>(&commit))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ConnError::Rejected(e) if e.name() == Some("OFPBFC_BAD_ID")),
        "{err}"
    );
    within("bundle", conn.bundle(&[drop_flow(602)]))
        .await
        .unwrap();
    assert!(
        has_flow(&ovs, 602) && !has_flow(&ovs, 600),
        "{}",
        flows(&ovs)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn port_status_reports_added_ports() {
    let ovs = bridge();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    let mut status = conn.port_status();
    ovs.vsctl(&[
        "add-port",
        "br0",
        "p1",
        "--",
        "set",
        "interface",
        "p1",
        "type=internal",
    ])
    .unwrap();
    let added = within("port status", async {
        loop {
            let s = status.recv().await.unwrap();
            if s.reason == PortReason::Add {
                return s;
            }
        }
    })
    .await;
    assert_eq!(added.port.name, "p1");
    let ofport: u32 = ovs
        .vsctl(&["get", "interface", "p1", "ofport"])
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(added.port.port_no, ofport);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn port_desc_lists_every_port() {
    let ovs = bridge();
    for p in ["p1", "p2", "p3"] {
        ovs.vsctl(&[
            "add-port",
            "br0",
            p,
            "--",
            "set",
            "interface",
            p,
            "type=internal",
        ])
        .unwrap();
    }
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    let ports = within("port desc", conn.port_desc()).await.unwrap();
    let mut names: Vec<_> = ports.iter().map(|p| p.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["br0", "p1", "p2", "p3"]);
    let local = ports.iter().find(|p| p.name == "br0").unwrap();
    assert_eq!(local.port_no, openflow::msg::port::port_no::LOCAL);
    let show = ovs
        .ofctl(&["-O", "OpenFlow15", "show", "{mgmt:br0}"])
        .unwrap();
    for p in &ports {
        let mac = p
            .hw_addr
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":");
        assert!(
            show.contains(&format!("({}): addr:{mac}", p.name)),
            "{} {mac} not in\n{show}",
            p.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnects_after_restart_and_replays_through_the_hook() {
    let ovs = bridge();
    let calls = Arc::new(AtomicUsize::new(0));
    let hook_calls = calls.clone();
    let options = ConnOptions::default().on_connect(move |conn| {
        let calls = hook_calls.clone();
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            conn.batch(&[drop_flow(700)]).await
        }
    });
    let conn = OfConnection::connect(endpoint(&ovs), options)
        .await
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(has_flow(&ovs, 700));
    let mut events = conn.events();

    ovs.restart_vswitchd().unwrap();
    within("reconnect", async {
        loop {
            if let ConnEvent::Connected { .. } = events.recv().await.unwrap() {
                return;
            }
        }
    })
    .await;
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // The hook ran before this request could proceed, so the flow is back already.
    within("barrier", conn.barrier()).await.unwrap();
    assert!(has_flow(&ovs, 700), "{}", flows(&ovs));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_in_flight_fails_when_the_switch_goes_away() {
    let ovs = bridge();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    // The switch never answers an echo reply, so this request is still waiting when it dies.
    let pending = tokio::spawn({
        let conn = conn.clone();
        async move { conn.request_raw(&EchoReply::default()).await }
    });
    conn.barrier().await.unwrap();
    ovs.stop_vswitchd();
    let result = within("in-flight request", pending).await.unwrap();
    assert!(
        matches!(result, Err(ConnError::Disconnected(_))),
        "{result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn port_mod_changes_the_port_config() {
    use openflow::msg::port::{PortMod, port_config};
    let ovs = bridge();
    ovs.vsctl(&[
        "add-port",
        "br0",
        "p1",
        "--",
        "set",
        "interface",
        "p1",
        "type=internal",
    ])
    .unwrap();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    let p1 = conn
        .port_desc()
        .await
        .unwrap()
        .into_iter()
        .find(|p| p.name == "p1")
        .unwrap();
    let mask = port_config::NO_RECV | port_config::NO_PACKET_IN | port_config::NO_FLOOD;
    let port_mod = PortMod {
        port_no: p1.port_no,
        hw_addr: p1.hw_addr,
        config: mask,
        mask,
        properties: vec![],
    };
    within("port mod", conn.batch(&[Encoded::new(&port_mod).unwrap()]))
        .await
        .unwrap();
    let show = ovs
        .ofctl(&["-O", "OpenFlow10", "show", "{mgmt:br0}"])
        .unwrap();
    let p1_config = show
        .lines()
        .skip_while(|l| !l.contains("(p1)"))
        .nth(1)
        .unwrap_or_default();
    assert!(
        p1_config.contains("NO_RECV") && p1_config.contains("NO_PACKET_IN"),
        "{show}"
    );
    // Open vSwitch ignores the OpenFlow 1.0 no-flood bit in 1.1+ port mods (see msg::port).
    assert!(!p1_config.contains("NO_FLOOD"), "{show}");

    // A port mod whose address does not match the port is rejected by name.
    let wrong = PortMod {
        hw_addr: [2, 0xde, 0xad, 0, 0, 1],
        ..port_mod
    };
    let err = within("port mod", conn.batch(&[Encoded::new(&wrong).unwrap()]))
        .await
        .unwrap_err();
    assert_eq!(err.error_names(), ["OFPPMFC_BAD_HW_ADDR"], "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn packet_ins_arrive_typed_in_either_format() {
    use openflow::msg::packet_in::packet_in_format;
    use openflow::msg::packet_out::PacketOut;
    use openflow::oxm::{Field, Match, PortNo};
    let ovs = bridge();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    let mut packet_ins = conn.packet_ins();
    let flows = [
        Encoded::new(&flow(
            "priority=10,dl_type=0x88b5 actions=controller(userdata=01.02.03.04)",
        ))
        .unwrap(),
        Encoded::new(&flow("table=1,priority=10 actions=CONTROLLER:65535")).unwrap(),
    ];
    within("flows", conn.batch(&flows)).await.unwrap();
    // A frame with the local experimental EtherType, injected as if from the controller port.
    let mut frame = vec![0xff; 6];
    frame.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x88, 0xb5]);
    frame.resize(60, 0xab);
    let inject = |actions| PacketOut {
        buffer_id: openflow::msg::flow_mod::NO_BUFFER,
        flow_match: Match::new().with(Field::InPort, u128::from(PortNo::CONTROLLER.0)),
        actions,
        data: frame.clone(),
    };

    // The default format: OFPT_PACKET_IN.
    within(
        "packet-out",
        conn.batch(&[Encoded::new(&inject(vec![Action::resubmit_table(1)])).unwrap()]),
    )
    .await
    .unwrap();
    let PacketInMessage::Standard(p) = within("packet-in", packet_ins.recv()).await.unwrap() else {
        panic!("expected OFPT_PACKET_IN")
    };
    assert_eq!((p.table_id, &p.data), (1, &frame));

    // NXT_PACKET_IN2 carries the controller action's userdata.
    within(
        "format",
        conn.set_packet_in_format(packet_in_format::NXT_PACKET_IN2),
    )
    .await
    .unwrap();
    within(
        "packet-out",
        conn.batch(&[Encoded::new(&inject(vec![Action::output(PortNo::TABLE.0)])).unwrap()]),
    )
    .await
    .unwrap();
    let PacketInMessage::Nicira(p) = within("packet-in2", packet_ins.recv()).await.unwrap() else {
        panic!("expected NXT_PACKET_IN2")
    };
    assert_eq!(
        (p.table_id, &p.packet, &p.userdata[..]),
        (0, &frame, &[1, 2, 3, 4][..])
    );
    assert_eq!(p.full_len, 60);

    // An undefined format is rejected by the switch, by name.
    let err = within("bad format", conn.set_packet_in_format(7))
        .await
        .unwrap_err();
    assert!(matches!(err, ConnError::Rejected(_)), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_messages_are_refused_before_sending() {
    use openflow::msg::group_mod::GroupMod;
    let ovs = bridge();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    // 2,000 buckets of ~48 bytes: about 96 KB, beyond OpenFlow's 64 KB message limit.
    let buckets: Vec<String> = (0..2000)
        .map(|i| format!("bucket=bucket_id:{i},actions=set_field:{i}->reg3,resubmit(,42)"))
        .collect();
    let group: GroupMod = format!("group_id=1,type=select,{}", buckets.join(","))
        .parse()
        .unwrap();
    let err = Encoded::new(&group).unwrap_err();
    assert!(err.len > 65535, "{err}");
    let err = within("send", conn.send(&group)).await.unwrap_err();
    assert!(matches!(err, ConnError::Encode(_)), "{err}");
    // Nothing reached the switch and the connection is still fine.
    within("barrier", conn.barrier()).await.unwrap();
    assert!(
        !ovs.ofctl(&["-O", "OpenFlow15", "dump-groups", "{mgmt:br0}"])
            .unwrap()
            .contains("group_id=1")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of10_port_mod_sets_and_clears_no_flood() {
    use openflow::of10::{self, Of10Error};
    let ovs = bridge();
    ovs.vsctl(&[
        "add-port",
        "br0",
        "p1",
        "--",
        "set",
        "interface",
        "p1",
        "type=internal",
    ])
    .unwrap();
    let conn = OfConnection::connect(endpoint(&ovs), ConnOptions::default())
        .await
        .unwrap();
    let p1 = conn
        .port_desc()
        .await
        .unwrap()
        .into_iter()
        .find(|p| p.name == "p1")
        .unwrap();
    let p1_config = || {
        let show = ovs.ofctl(&["show", "{mgmt:br0}"]).unwrap();
        show.lines()
            .skip_while(|l| !l.contains("(p1)"))
            .nth(1)
            .unwrap_or_default()
            .to_owned()
    };
    let wait = Duration::from_secs(30);
    assert!(!p1_config().contains("NO_FLOOD"), "{}", p1_config());

    of10::set_port_no_flood(&endpoint(&ovs), p1.port_no, p1.hw_addr, true, wait)
        .await
        .unwrap();
    assert!(p1_config().contains("NO_FLOOD"), "{}", p1_config());
    // Setting it again is accepted and changes nothing.
    of10::set_port_no_flood(&endpoint(&ovs), p1.port_no, p1.hw_addr, true, wait)
        .await
        .unwrap();
    assert!(p1_config().contains("NO_FLOOD"), "{}", p1_config());

    of10::set_port_no_flood(&endpoint(&ovs), p1.port_no, p1.hw_addr, false, wait)
        .await
        .unwrap();
    assert!(!p1_config().contains("NO_FLOOD"), "{}", p1_config());

    // A hardware address that is not the port's: OFPET_PORT_MOD_FAILED / OFPPMFC_BAD_HW_ADDR.
    let err = of10::set_port_no_flood(
        &endpoint(&ovs),
        p1.port_no,
        [2, 0xde, 0xad, 0, 0, 1],
        true,
        wait,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            err,
            Of10Error::Rejected {
                xid: 2,
                err_type: 4,
                code: 1
            }
        ),
        "{err}"
    );
    assert!(!p1_config().contains("NO_FLOOD"), "{}", p1_config());
}
