//! Install-and-dump tests against a real `ovs-vswitchd`: Antrea-like flows and groups written as
//! text are parsed, encoded and sent by this crate; `ovs-ofctl -O OpenFlow15 dump-flows` /
//! `dump-groups` must print them exactly as our `Display` does, and our decode of the switch's
//! own flow-desc and group-desc replies must print the same text again.
#![cfg(target_os = "linux")]

mod codec_support;

use codec_support::{OfSocket, normalized_dump};
use openflow::Message;
use openflow::header::msg_type;
use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use openflow::msg::flow_stats::{FlowDescReply, FlowDescRequest, FlowStats, FlowStatsCounters};
use openflow::msg::group_mod::{GROUP_ALL, GroupDescReply, GroupDescRequest, GroupMod};
use ovstest::Ovs;

const GROUPS: &[&str] = &[
    "group_id=1,type=select,selection_method=hash,fields(ip_src,nw_proto,tcp_dst),bucket=bucket_id:0,weight:100,actions=set_field:0xa0a0002->reg3,set_field:0x50/0xffff->reg4,resubmit(,42),bucket=bucket_id:1,weight:100,actions=set_field:0xa0a0003->reg3,set_field:0x50/0xffff->reg4,resubmit(,42)",
    "group_id=2,type=select,selection_method=dp_hash,bucket=bucket_id:0,weight:50,actions=set_field:0xa0a0004->reg3,resubmit(,42),bucket=bucket_id:1,weight:150,watch_port:3,actions=set_field:0xa0a0005->reg3,resubmit(,42)",
    "group_id=3,type=all,bucket=bucket_id:0,actions=output:1,bucket=bucket_id:1,actions=output:2",
    "group_id=4,type=indirect,bucket=bucket_id:0,actions=set_field:0x1->reg1,group:3",
    "group_id=5,type=ff,bucket=bucket_id:0,watch_port:1,actions=output:1,bucket=bucket_id:1,watch_port:2,actions=output:2",
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
];

/// What a dump line for `fm` looks like (before normalisation).
fn expected_line(fm: &FlowMod) -> String {
    FlowStats {
        table_id: fm.table_id,
        priority: fm.priority,
        idle_timeout: fm.idle_timeout,
        hard_timeout: fm.hard_timeout,
        flags: fm.flags,
        importance: fm.importance,
        cookie: fm.cookie,
        flow_match: fm.flow_match.clone(),
        stats: FlowStatsCounters::default(),
        instructions: fm.instructions.clone(),
    }
    .to_string()
}

fn install(ovs: &Ovs) -> (OfSocket, Vec<FlowMod>, Vec<GroupMod>) {
    ovs.add_bridge("br0").expect("add br0");
    let mut sock = OfSocket::connect(&ovs.mgmt_socket("br0"));
    let groups: Vec<GroupMod> = GROUPS
        .iter()
        .map(|g| g.parse().unwrap_or_else(|e| panic!("{g}: {e}")))
        .collect();
    let group_msgs: Vec<Vec<u8>> = groups.iter().map(|g| g.to_bytes(sock.xid())).collect();
    sock.transact_ok(&group_msgs);
    let flows: Vec<FlowMod> = FLOWS
        .iter()
        .map(|f| f.parse().unwrap_or_else(|e| panic!("{f}: {e}")))
        .collect();
    let flow_msgs: Vec<Vec<u8>> = flows.iter().map(|f| f.to_bytes(sock.xid())).collect();
    sock.transact_ok(&flow_msgs);
    (sock, flows, groups)
}

/// Every multipart reply body's entries, decoded by `decode`.
fn collect_replies<T>(
    sock: &mut OfSocket,
    request: Vec<u8>,
    decode: impl Fn(&[u8]) -> Vec<T>,
) -> Vec<T> {
    let replies = sock.transact_ok(&[request]);
    replies
        .iter()
        .filter(|m| m.msg_type == msg_type::MULTIPART_REPLY)
        .flat_map(|m| decode(&m.bytes))
        .collect()
}

#[test]
fn installed_flows_dump_as_we_print_them() {
    let ovs = Ovs::start().expect("start ovs");
    let (mut sock, flows, _) = install(&ovs);

    // The flow texts above are canonical: parsing and printing them gives them back (table 0
    // is the default and not printed).
    for (text, fm) in FLOWS.iter().zip(&flows) {
        assert_eq!(fm.to_string(), text.trim_start_matches("table=0,"));
    }
    let dump = ovs
        .ofctl(&["-O", "OpenFlow15", "dump-flows", "{mgmt:br0}"])
        .expect("dump-flows");
    let ovs_lines = normalized_dump(&dump);
    let mut ours: Vec<String> = flows
        .iter()
        .map(|f| codec_support::normalize_flow_line(&expected_line(f)))
        .collect();
    ours.sort();
    for (o, e) in ovs_lines.iter().zip(&ours) {
        assert_eq!(o, e, "\ndump-flows and our text differ");
    }
    assert_eq!(ovs_lines.len(), ours.len());

    // Our decode of the switch's own OFPMP_FLOW_DESC reply prints the same lines.
    let request = FlowDescRequest::default().to_bytes(sock.xid());
    let decoded = collect_replies(&mut sock, request, |b| {
        FlowDescReply::decode(b)
            .expect("decode flow desc reply")
            .0
            .flows
    });
    assert_eq!(decoded.len(), FLOWS.len());
    let mut decoded_lines: Vec<String> = decoded
        .iter()
        .map(|f| codec_support::normalize_flow_line(&f.to_string()))
        .collect();
    decoded_lines.sort();
    assert_eq!(decoded_lines, ovs_lines);
    // And decoding gives back the very flows we installed.
    for fm in &flows {
        assert!(
            decoded.iter().any(|d| d.table_id == fm.table_id
                && d.priority == fm.priority
                && d.flow_match == fm.flow_match
                && d.instructions == fm.instructions),
            "flow not found in decoded reply: {fm}"
        );
    }
}

#[test]
fn installed_groups_dump_as_we_print_them() {
    let ovs = Ovs::start().expect("start ovs");
    let (mut sock, _, groups) = install(&ovs);
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

    let request = GroupDescRequest {
        group_id: GROUP_ALL,
    }
    .to_bytes(sock.xid());
    let decoded = collect_replies(&mut sock, request, |b| {
        GroupDescReply::decode(b)
            .expect("decode group desc reply")
            .0
            .groups
    });
    let mut decoded_lines: Vec<String> = decoded.iter().map(|g| g.to_string()).collect();
    decoded_lines.sort();
    assert_eq!(decoded_lines, ours);
}

#[test]
fn delete_strict_and_modify_reach_the_switch() {
    let ovs = Ovs::start().expect("start ovs");
    let (mut sock, _, _) = install(&ovs);
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
    let msgs = vec![
        del.to_bytes(sock.xid()),
        modify.to_bytes(sock.xid()),
        del_table.to_bytes(sock.xid()),
    ];
    sock.transact_ok(&msgs);
    let dump = ovs
        .ofctl(&["-O", "OpenFlow15", "dump-flows", "{mgmt:br0}"])
        .expect("dump-flows");
    assert!(!dump.contains("tp_dst=8080"), "{dump}");
    assert!(!dump.contains("table=29"), "{dump}");
    assert!(
        dump.contains("table=0, n_packets=0, n_bytes=0, idle_age=")
            || dump.contains("priority=0 actions=NORMAL"),
        "{dump}"
    );
    assert!(
        normalized_dump(&dump)
            .iter()
            .any(|l| l == "cookie=0x0, table=0, priority=0 actions=NORMAL"),
        "{dump}"
    );
    // A flow the switch must refuse: group 99 does not exist.
    let bad: FlowMod = "table=1,priority=1 actions=group:99".parse().unwrap();
    let bad_msg = bad.to_bytes(sock.xid());
    let replies = sock.transact(&[bad_msg]);
    assert!(
        replies.iter().any(|m| m.msg_type == msg_type::ERROR),
        "switch accepted a flow to a missing group"
    );
}
