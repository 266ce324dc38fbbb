//! Install-and-dump tests against a real `ovs-vswitchd`: Antrea-like flows, groups and meters
//! written as text are parsed, encoded and installed through our `OfConnection` (meters and
//! groups in batches, flows in a bundle); `ovs-ofctl -O OpenFlow15 dump-flows` / `dump-groups` /
//! `dump-meters` must print them exactly as our `Display` does, and our own `dump_flows` /
//! `dump_groups` / `dump_meters` (decoding the switch's desc replies) must give back the same
//! objects and print the same text.
#![cfg(target_os = "linux")]

use std::future::Future;
use std::time::Duration;

use localipc::Endpoint;
use openflow::conn::{ConnError, ConnOptions, Encoded, OfConnection};
use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use openflow::msg::flow_stats::{FlowDescRequest, FlowStats};
use openflow::msg::group_mod::GroupMod;
use openflow::msg::meter_mod::MeterMod;
use ovstest::Ovs;

const GROUPS: &[&str] = &[
    "group_id=1,type=select,selection_method=hash,fields(ip_src,nw_proto,tcp_dst),bucket=bucket_id:0,weight:100,actions=set_field:0xa0a0002->reg3,set_field:0x50/0xffff->reg4,resubmit(,42),bucket=bucket_id:1,weight:100,actions=set_field:0xa0a0003->reg3,set_field:0x50/0xffff->reg4,resubmit(,42)",
    "group_id=2,type=select,selection_method=dp_hash,bucket=bucket_id:0,weight:50,actions=set_field:0xa0a0004->reg3,resubmit(,42),bucket=bucket_id:1,weight:150,watch_port:3,actions=set_field:0xa0a0005->reg3,resubmit(,42)",
    "group_id=3,type=all,bucket=bucket_id:0,actions=output:1,bucket=bucket_id:1,actions=output:2",
    "group_id=4,type=indirect,bucket=bucket_id:0,actions=set_field:0x1->reg1,group:3",
    "group_id=5,type=ff,bucket=bucket_id:0,watch_port:1,actions=output:1,bucket=bucket_id:1,watch_port:2,actions=output:2",
];

/// Meters as `dump-meters` prints them (joined on one line). The userspace datapath has drop
/// bands only (`OFPMMFC_BAD_BAND` for DSCP remark; `tests/codec_ofp_print.rs` covers those).
const METERS: &[&str] = &[
    "meter=1 kbps bands=type=drop rate=1000",
    "meter=2 pktps burst stats bands=type=drop rate=100 burst_size=10",
    "meter=3 kbps stats bands=type=drop rate=500 type=drop rate=2000",
];

/// An Antrea-style pipeline, written in the text `ovs-ofctl -O OpenFlow15 dump-flows` prints.
const FLOWS: &[&str] = &[
    // Classifier.
    "table=0,priority=200,in_port=32769 actions=set_field:0x1/0xf->reg0,set_field:0x200/0x200->reg0,goto_table:1",
    "table=0,priority=190,in_port=5 actions=set_field:0x2/0xf->reg0,goto_table:1",
    "table=0,priority=200,tun_id=0x5,in_port=32768 actions=set_field:0x1/0xf->reg0,move:NXM_NX_TUN_ID[0..23]->NXM_NX_REG9[0..23],goto_table:1",
    "table=0,priority=0 actions=drop",
    // Spoof guard.
    "table=1,priority=200,ip,in_port=5,dl_src=aa:bb:cc:dd:ee:01,nw_src=10.10.0.5 actions=goto_table:3",
    "table=1,priority=200,arp,in_port=5,arp_spa=10.10.0.5,arp_sha=aa:bb:cc:dd:ee:01 actions=goto_table:2",
    "table=1,priority=200,ipv6,in_port=5,dl_src=aa:bb:cc:dd:ee:01,ipv6_src=fe80::a8bb:ccff:fedd:ee01 actions=goto_table:3",
    "table=1,priority=210,icmp6,in_port=5,icmp_type=135,nd_target=fe80::1 actions=goto_table:3",
    // ARP responder.
    "table=2,priority=200,arp,arp_tpa=10.10.0.1,arp_op=1 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:aa:bb:cc:dd:ee:ff->eth_src,set_field:2->arp_op,move:NXM_NX_ARP_SHA[]->NXM_NX_ARP_THA[],set_field:aa:bb:cc:dd:ee:ff->arp_sha,move:NXM_OF_ARP_SPA[]->NXM_OF_ARP_TPA[],set_field:10.10.0.1->arp_spa,IN_PORT",
    "table=2,priority=190,arp actions=NORMAL",
    // Conntrack.
    "table=3,priority=200,ip actions=ct(table=4,zone=65520,nat)",
    "table=3,priority=200,ipv6 actions=ct(table=4,zone=65510,nat)",
    "table=4,priority=190,ct_state=+inv+trk,ip actions=drop",
    "table=4,priority=200,ct_state=-new+trk,ct_mark=0x10/0x10,ip actions=set_field:0x2/0x2->reg0,goto_table:5",
    "table=4,priority=180,ct_state=+new+trk,ct_zone=65520,ip actions=goto_table:5",
    // Service load balancing with groups and session affinity.
    "table=5,priority=200,tcp,reg4=0x10000/0x70000,nw_dst=10.96.0.1,tp_dst=443 actions=set_field:0x20000/0x70000->reg4,set_field:0x200/0x200->reg0,group:1",
    "table=5,priority=200,udp,reg4=0x10000/0x70000,nw_dst=10.96.0.10,tp_dst=53 actions=set_field:0x20000/0x70000->reg4,group:2",
    "table=6,priority=190,tcp,reg4=0x30000/0x70000 actions=learn(table=7,hard_timeout=300,priority=192,delete_learned,cookie=0x1000000000000,eth_type=0x800,nw_proto=6,NXM_OF_TCP_DST[],NXM_OF_IP_DST[],NXM_OF_IP_SRC[],load:NXM_NX_REG3[]->NXM_NX_REG3[],load:NXM_NX_REG4[0..15]->NXM_NX_REG4[0..15],load:0x2->NXM_NX_REG4[16..18],load:0x1->NXM_NX_REG0[19]),set_field:0x20000/0x70000->reg4,goto_table:8",
    "table=8,priority=200,tcp,reg3=0xa0a0002,reg4=0x20050/0x7ffff actions=ct(commit,table=9,zone=65520,nat(dst=10.10.0.2:80),exec(set_field:0x10/0x10->ct_mark,move:NXM_NX_REG0[0..3]->NXM_NX_CT_MARK[0..3]))",
    "table=8,priority=190,tcp6,reg4=0x20050/0x7ffff actions=ct(commit,table=9,zone=65510,nat(dst=[fd00::2]:80))",
    // Network policy with conjunctions.
    "table=10,priority=200,ip,nw_src=10.10.0.5 actions=conjunction(10,1/2),conjunction(11,1/3)",
    "table=10,priority=200,tcp,tp_dst=8080 actions=conjunction(10,2/2)",
    "table=10,priority=200,ip,reg1=0x5 actions=conjunction(11,2/3)",
    "table=10,priority=200,tcp,tp_dst=0x1f00/0xff00 actions=conjunction(11,3/3)",
    "table=10,priority=190,conj_id=10,ip actions=set_field:0xa->reg5,ct(commit,table=11,zone=65520,exec(set_field:0xa00000000/0xffffffff00000000->ct_label))",
    "table=10,priority=0 actions=goto_table:11",
    // Controller, output from a register, SNAT, tunnel output.
    "table=11,priority=200,ip,reg0=0x400000/0x400000 actions=controller(max_len=128,userdata=01.01.00.00.00.00.00.0a,pause)",
    "table=11,priority=190,ip,reg0=0x800000/0x800000 actions=controller(reason=no_match,id=3,userdata=02.00.00.00.00.00.00.0b)",
    "table=11,priority=180,ip,reg0=0x1000000/0x1000000 actions=CONTROLLER:65535",
    "table=12,priority=200,reg0=0x10000/0x10000 actions=output:NXM_NX_REG1[]",
    "table=13,priority=200,ct_state=+new+trk,ip,reg0=0x2/0xf actions=ct(commit,table=14,zone=65521,nat(src=192.168.1.10),exec(set_field:0x40/0x40->ct_mark))",
    "table=13,priority=190,ct_state=+new+trk,tcp,reg0=0x3/0xf actions=ct(commit,table=14,zone=65521,nat(src=192.168.1.10-192.168.1.20:30000-40000,persistent,random))",
    "table=14,priority=200,ip,nw_dst=10.10.1.0/24 actions=set_field:aa:bb:cc:dd:ee:ff->eth_src,set_field:0a:00:00:00:00:02->eth_dst,set_field:192.168.1.11->tun_dst,set_field:0x10000/0x10000->reg0,dec_ttl,goto_table:15",
    "table=15,priority=200,dl_dst=aa:bb:cc:dd:ee:01 actions=set_field:0x5->reg1,set_field:0x10000/0x10000->reg0,goto_table:16",
    // Assorted matches and instructions.
    "table=20,idle_timeout=60,hard_timeout=120,importance=5,send_flow_rem,priority=100,udp,tp_dst=53 actions=resubmit(,21),resubmit:3",
    "table=21,cookie=0x1020000000000,priority=100,metadata=0x5 actions=note:01.02.03.04.05.06,write_actions(output:2),write_metadata:0x1/0x3,goto_table:22",
    "table=22,priority=100,dl_vlan=5 actions=pop_vlan,output:3",
    "table=22,priority=90,in_port=3 actions=push_vlan:0x8100,output:4",
    "table=23,priority=100,ip actions=group:3",
    "table=24,priority=100,ip actions=ct_clear,resubmit(,25)",
    "table=25,priority=100,tcp,tcp_flags=+syn-ack actions=drop",
    "table=26,priority=100,ipv6,reg12=0,reg13=0,reg14=0,reg15=0x1 actions=drop",
    "table=27,priority=100,ct_state=-inv+trk,ct_nw_dst=10.96.0.1,ct_nw_proto=6,ct_tp_dst=443,tcp actions=drop",
    "table=28,priority=100,pkt_mark=0x10,tun_id=0x5,tun_src=192.168.1.1,tun_dst=192.168.1.2,in_port=32768 actions=drop",
    "table=29,priority=100,ip,nw_tos=8,nw_ecn=1 actions=set_field:0x1->reg2",
    "table=29,priority=90,icmp,icmp_type=8,icmp_code=0 actions=LOCAL",
    "table=30,priority=100,ct_label=0x1/0x1,ip actions=move:NXM_NX_CT_LABEL[0..31]->NXM_NX_REG2[],output:1",
    // Rate limiting through meters.
    "table=31,priority=100,ip actions=meter:1,output:1",
    "table=31,priority=90,ip actions=meter:2,goto_table:32",
];

/// Removes the volatile statistics (`duration`, `n_packets`, `n_bytes`, `idle_age`,
/// `hard_age`) from a `dump-flows` line.
fn normalize_flow_line(line: &str) -> String {
    let mut out = line.trim().to_string();
    for key in [
        "duration=",
        "n_packets=",
        "n_bytes=",
        "idle_age=",
        "hard_age=",
    ] {
        while let Some(start) = out.find(key) {
            let end = out[start..]
                .find(", ")
                .map(|i| start + i + 2)
                .unwrap_or(out.len());
            out.replace_range(start..end, "");
        }
    }
    out
}

/// The flow lines of a `dump-flows` output, normalised and sorted.
fn normalized_dump(dump: &str) -> Vec<String> {
    let mut lines: Vec<String> = dump
        .lines()
        .filter(|l| l.contains("actions="))
        .map(normalize_flow_line)
        .collect();
    lines.sort();
    lines
}

/// What a dump line for `fm` looks like (before normalisation).
fn expected_line(fm: &FlowMod) -> String {
    FlowStats::of_flow_mod(fm).to_string()
}

/// Hang detector: no operation in these tests legitimately takes this long.
async fn within<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f)
        .await
        .unwrap_or_else(|_| panic!("{what} hung"))
}

fn encoded<M: openflow::Message>(msgs: &[M]) -> Vec<Encoded> {
    msgs.iter()
        .map(|m| Encoded::new(m).expect("encode"))
        .collect()
}

/// Starts a switch with `br0`, connects, installs the meters and the groups (a batch each) and
/// the flows (one bundle) through our connection.
async fn install() -> (
    Ovs,
    OfConnection,
    Vec<FlowMod>,
    Vec<GroupMod>,
    Vec<MeterMod>,
) {
    let ovs = Ovs::start().expect("start ovs");
    ovs.add_bridge("br0").expect("add br0");
    let conn = OfConnection::connect(
        Endpoint::Unix(ovs.mgmt_socket("br0")),
        ConnOptions::default(),
    )
    .await
    .expect("connect");
    let meters: Vec<MeterMod> = METERS
        .iter()
        .map(|m| m.parse().unwrap_or_else(|e| panic!("{m}: {e}")))
        .collect();
    within("meters", conn.batch(&encoded(&meters)))
        .await
        .expect("install meters");
    let groups: Vec<GroupMod> = GROUPS
        .iter()
        .map(|g| g.parse().unwrap_or_else(|e| panic!("{g}: {e}")))
        .collect();
    within("groups", conn.batch(&encoded(&groups)))
        .await
        .expect("install groups");
    let flows: Vec<FlowMod> = FLOWS
        .iter()
        .map(|f| f.parse().unwrap_or_else(|e| panic!("{f}: {e}")))
        .collect();
    within("flows", conn.bundle(&encoded(&flows)))
        .await
        .expect("install flows");
    (ovs, conn, flows, groups, meters)
}

fn dump_flows(ovs: &Ovs) -> String {
    ovs.ofctl(&["-O", "OpenFlow15", "dump-flows", "{mgmt:br0}"])
        .expect("dump-flows")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installed_flows_dump_as_we_print_them() {
    let (ovs, conn, flows, _, _) = install().await;

    // The flow texts above are canonical: parsing and printing them gives them back (table 0
    // is the default and not printed).
    for (text, fm) in FLOWS.iter().zip(&flows) {
        assert_eq!(fm.to_string(), text.trim_start_matches("table=0,"));
    }
    let ovs_lines = normalized_dump(&dump_flows(&ovs));
    let mut ours: Vec<String> = flows
        .iter()
        .map(|f| normalize_flow_line(&expected_line(f)))
        .collect();
    ours.sort();
    for (o, e) in ovs_lines.iter().zip(&ours) {
        assert_eq!(o, e, "\ndump-flows and our text differ");
    }
    assert_eq!(ovs_lines.len(), ours.len());

    // Our own dump (every part of the OFPMP_FLOW_DESC reply, decoded) prints the same lines.
    let decoded = within("dump_flows", conn.dump_flows(&FlowDescRequest::default()))
        .await
        .expect("dump_flows");
    assert_eq!(decoded.len(), FLOWS.len());
    let mut decoded_lines: Vec<String> = decoded
        .iter()
        .map(|f| normalize_flow_line(&f.to_string()))
        .collect();
    decoded_lines.sort();
    assert_eq!(decoded_lines, ovs_lines);
    // And decoding gives back the very flows we installed.
    for fm in &flows {
        let expected = FlowStats::of_flow_mod(fm);
        assert!(
            decoded.iter().any(|d| FlowStats {
                stats: expected.stats,
                ..d.clone()
            } == expected),
            "flow not found in our dump: {fm}"
        );
    }

    // A request selecting one table gets only that table's flows.
    let table10 = FlowDescRequest {
        table_id: 10,
        ..FlowDescRequest::default()
    };
    let decoded = within("dump_flows", conn.dump_flows(&table10))
        .await
        .expect("dump_flows table 10");
    assert_eq!(
        decoded.len(),
        FLOWS.iter().filter(|f| f.starts_with("table=10,")).count()
    );
    assert!(decoded.iter().all(|f| f.table_id == 10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installed_groups_dump_as_we_print_them() {
    let (ovs, conn, _, groups, _) = install().await;
    let dump = ovs
        .ofctl(&["-O", "OpenFlow15", "dump-groups", "{mgmt:br0}"])
        .expect("dump-groups");
    let mut ovs_lines: Vec<String> = dump
        .lines()
        .filter(|l| l.starts_with(" group_id="))
        .map(|l| l.trim().to_string())
        .collect();
    ovs_lines.sort();
    let mut ours: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
    ours.sort();
    assert_eq!(ovs_lines, ours);

    let ids: Vec<u32> = groups.iter().map(|g| g.group.group_id).collect();
    let bound = within("group_bound", conn.group_bound(&ids))
        .await
        .expect("group_bound");
    let decoded = within("dump_groups", conn.dump_groups(bound))
        .await
        .expect("dump_groups");
    let mut decoded_lines: Vec<String> = decoded.iter().map(|g| g.to_string()).collect();
    decoded_lines.sort();
    assert_eq!(decoded_lines, ours);
    for g in &groups {
        assert!(
            decoded.contains(&g.group),
            "group not found in our dump: {g}"
        );
    }
}

// The switch's meter features as `ovs-ofctl meter-features` reads them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meter_features_are_what_ovs_ofctl_reads() {
    let (ovs, conn, _, _, _) = install().await;
    let text = ovs
        .ofctl(&["-O", "OpenFlow15", "meter-features", "{mgmt:br0}"])
        .expect("meter-features");
    let field = |name: &str| -> String {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{name}:")))
            .unwrap_or_else(|| panic!("{name} in\n{text}"))
            .to_owned()
    };
    let features = within("meter_features", conn.meter_features())
        .await
        .expect("meter_features");
    assert_eq!(features.max_meter.to_string(), field("max_meter"), "{text}");
    assert_eq!(features.max_bands.to_string(), field("max_bands"), "{text}");
    assert_eq!(features.max_color.to_string(), field("max_color"), "{text}");
    let line = |name: &str| -> Vec<&str> {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .unwrap_or_else(|| panic!("{name} in\n{text}"))
            .split_whitespace()
            .collect()
    };
    assert_eq!(line("band_types:"), ["drop"], "{text}");
    assert!(line("capabilities:").contains(&"pktps"), "{text}");
    assert!(
        features.drops_packets_per_second(),
        "the userspace datapath has packet-rate meters: {features:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installed_meters_dump_as_we_print_them() {
    let (ovs, conn, _, _, meters) = install().await;
    let dump = ovs
        .ofctl(&["-O", "OpenFlow15", "dump-meters", "{mgmt:br0}"])
        .expect("dump-meters");
    // Entries are a `meter=` line followed by one line per band, separated by blank lines.
    let mut ovs_entries: Vec<String> = Vec::new();
    for line in dump.lines().skip(1).map(str::trim) {
        if line.starts_with("meter=") {
            ovs_entries.push(line.to_string());
        } else if let Some(entry) = ovs_entries.last_mut().filter(|_| !line.is_empty()) {
            if !entry.ends_with('=') {
                entry.push(' ');
            }
            entry.push_str(line);
        }
    }
    ovs_entries.sort();
    let mut ours: Vec<String> = meters.iter().map(|m| m.to_string()).collect();
    ours.sort();
    assert_eq!(ovs_entries, ours, "\n{dump}");
    for (text, m) in METERS.iter().zip(&meters) {
        assert_eq!(m.to_string(), *text);
    }

    let decoded = within("dump_meters", conn.dump_meters())
        .await
        .expect("dump_meters");
    let mut decoded_lines: Vec<String> = decoded.iter().map(|m| m.to_string()).collect();
    decoded_lines.sort();
    assert_eq!(decoded_lines, ours);
    // The switch reports each band's rate as its burst size when the meter has no `burst`
    // flag: equal once normalised.
    let decoded: Vec<_> = decoded.iter().map(|m| m.normalized()).collect();
    for m in &meters {
        assert!(
            decoded.contains(&m.meter),
            "meter not found in our dump: {m}"
        );
    }

    // Deleting a meter deletes the flows that use it.
    within("delete meter", conn.batch(&encoded(&[MeterMod::delete(1)])))
        .await
        .expect("delete meter 1");
    let flows = dump_flows(&ovs);
    assert!(!flows.contains("meter:1,"), "{flows}");
    assert!(flows.contains("meter:2,"), "{flows}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_strict_and_modify_reach_the_switch() {
    let (ovs, conn, _, _, _) = install().await;
    let del = FlowMod::from_text(
        FlowModCommand::DeleteStrict,
        "table=10,priority=200,tcp,tp_dst=8080",
    )
    .unwrap();
    let modify = FlowMod::from_text(
        FlowModCommand::ModifyStrict,
        "table=0,priority=0 actions=NORMAL",
    )
    .unwrap();
    let del_table = FlowMod::from_text(FlowModCommand::Delete, "table=29").unwrap();
    within("batch", conn.batch(&encoded(&[del, modify, del_table])))
        .await
        .expect("delete and modify");
    let dump = dump_flows(&ovs);
    assert!(!dump.contains("tp_dst=8080"), "{dump}");
    assert!(!dump.contains("table=29"), "{dump}");
    assert!(
        normalized_dump(&dump)
            .iter()
            .any(|l| l == "cookie=0x0, table=0, priority=0 actions=NORMAL"),
        "{dump}"
    );
    let ours = within("dump_flows", conn.dump_flows(&FlowDescRequest::default()))
        .await
        .unwrap();
    assert_eq!(ours.len(), normalized_dump(&dump).len());

    // A flow the switch must refuse: group 99 does not exist.
    let bad: FlowMod = "table=1,priority=1 actions=group:99".parse().unwrap();
    let err = within("bad flow", conn.batch(&encoded(&[bad])))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ConnError::BatchRejected(r) if r.len() == 1),
        "{err}"
    );
    assert_eq!(err.error_names(), ["OFPBAC_BAD_OUT_GROUP"], "{err}");
}

/// A select group (`dp_hash`) of `buckets` buckets, each with its own DNAT target.
fn select_group(id: u32, buckets: u32) -> openflow::msg::group_mod::GroupDesc {
    let mut text = format!("group_id={id},type=select,selection_method=dp_hash");
    for n in 0..buckets {
        text.push_str(&format!(
            ",bucket=bucket_id:{n},actions=ct(commit,table=9,zone=65520,nat(dst=10.{}.{}.{}:8080))",
            n >> 16,
            (n >> 8) & 0xff,
            n & 0xff
        ));
    }
    openflow::msg::group_mod::GroupDesc::from_text(&text).unwrap_or_else(|e| panic!("{e}"))
}

// A group over 65,535 bytes: asked for with every other group (`OFPG_ALL`, what `ovs-ofctl
// dump-groups` does), `ovs-vswitchd` 3.1 aborts (`assertion start_ofs <= UINT16_MAX failed in
// ofpmp_postappend()`) once another group follows it; asked for alone, it comes with its lengths
// wrapped. Our dump asks for each id up to the largest a flow names and reads the long one
// whole, while packet-ins flow on the agent-style connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_longer_than_a_message_dumps_whole_among_the_others() {
    let (ovs, conn, _, groups, _) = install().await;
    let big = select_group(100, 5000);
    let last = select_group(101, 2);
    let mods: Vec<GroupMod> = [&big, &last]
        .into_iter()
        .map(|g| GroupMod::add(g.clone()))
        .flat_map(|m| {
            m.chunks(openflow::msg::bundle::MAX_BUNDLED_LEN)
                .expect("chunks")
        })
        .collect();
    // The inserts after the first message carry no selection method: Open vSwitch refuses it
    // there (OFPBPC_BAD_VALUE) and the group keeps the first message's.
    assert!(mods.len() > 2, "the big group takes several messages");
    within("big group", conn.bundle(&encoded(&mods)))
        .await
        .expect("install the big group");
    // Only a flow names the highest group; the caller knows none.
    let to_last = "table=40,priority=1,ip actions=group:101"
        .parse::<FlowMod>()
        .unwrap();
    within("flows", conn.batch(&encoded(&[to_last])))
        .await
        .expect("flows");

    // Packet-ins keep coming on our connection while the groups are read on another.
    let mut packet_ins = conn.packet_ins();
    let sender = {
        let mgmt = ovs.mgmt_socket("br0");
        std::thread::spawn(move || {
            // Ethernet, IPv4 10.0.0.1 -> 10.0.0.2, protocol 253.
            let frame = "ffffffffffff02000000000108004500001400000000400fd00a0000010a000002";
            for _ in 0..50 {
                let _ = std::process::Command::new("ovs-ofctl")
                    .args(["-O", "OpenFlow15", "packet-out"])
                    .arg(&mgmt)
                    .arg(format!("in_port=LOCAL packet={frame} actions=CONTROLLER"))
                    .output();
            }
        })
    };
    let mut wanted: Vec<_> = groups.iter().map(|g| g.group.clone()).collect();
    wanted.extend([big.clone(), last.clone()]);
    wanted.sort_by_key(|g| g.group_id);
    for _ in 0..3 {
        let bound = within("group_bound", conn.group_bound(&[]))
            .await
            .expect("group_bound");
        assert_eq!(bound, 101, "the flow names group 101");
        let mut decoded = within("dump_groups", conn.dump_groups(bound))
            .await
            .expect("dump_groups");
        decoded.sort_by_key(|g| g.group_id);
        assert!(
            decoded == wanted,
            "the groups read differ from those installed"
        );
    }
    sender.join().unwrap();
    within("a packet-in", packet_ins.recv())
        .await
        .expect("packet-ins reached the main connection");
    assert!(
        ovs.appctl(&["version"]).is_ok(),
        "ovs-vswitchd is still running"
    );
    // The main connection keeps its framing.
    let flows = within("dump_flows", conn.dump_flows(&FlowDescRequest::default()))
        .await
        .expect("dump_flows after the group dumps");
    assert!(
        flows.iter().any(|f| f.table_id == 40),
        "the flow to group 101"
    );
}
