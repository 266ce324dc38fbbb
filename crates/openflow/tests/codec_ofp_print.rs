//! Oracle tests: `ovs-ofctl ofp-print` decodes the bytes this crate emits and prints the same
//! flow, action, group and meter text as our `Display`.
#![cfg(target_os = "linux")]

use std::process::Command;

use openflow::Message;
use openflow::msg::flow_mod::{FlowMod, FlowModCommand};

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs `ovs-ofctl ofp-print HEX` and returns its output.
fn ofp_print(bytes: &[u8]) -> String {
    let out = Command::new("ovs-ofctl")
        .args(["ofp-print", &hex(bytes)])
        .output()
        .expect("run ovs-ofctl");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ovs-ofctl ofp-print failed: {text}");
    assert!(
        !text.contains("decode error") && !text.contains("***"),
        "ovs-ofctl could not decode {}: {text}",
        hex(bytes)
    );
    text
}

/// Flows as `ovs-ofctl -O OpenFlow15 parse-flow` prints their match and actions.
const FLOWS: &[&str] = &[
    "priority=200,ip,nw_src=10.10.0.0/24 actions=set_field:0x1/0xf->reg0,set_field:0xa->reg5,set_field:10.0.0.1->ip_dst,move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:0x2/0xf->reg1,set_field:0x5->pkt_mark,IN_PORT,output:NXM_NX_REG1[],output:NXM_NX_REG1[0..15],controller(reason=no_match,max_len=100,userdata=01.02,pause),CONTROLLER:65535,note:01.02.00.00.00.00,resubmit(,10),resubmit:3,dec_ttl,push_vlan:0x8100,group:2,ct_clear,set_field:00:11:22:33:44:55->eth_src,LOCAL,NORMAL,output:5,set_field:0x1/0x1->xreg3,set_field:0x1->tun_id,set_field:1.1.1.1->tun_dst,move:NXM_OF_IN_PORT[]->NXM_NX_REG1[0..15],move:NXM_NX_XXREG0[0..63]->NXM_NX_XXREG1[64..127],move:OXM_OF_METADATA[0..31]->NXM_NX_REG3[]",
    "table=5,priority=100,ip actions=ct(commit,table=5,zone=NXM_NX_REG2[0..15],nat(src=10.0.0.1-10.0.0.5:100-200,persistent,random),exec(set_field:0x2/0x2->ct_mark,set_field:0x1/0xff->ct_label)),ct(zone=65520,nat),ct(commit,table=3,zone=1,exec(move:NXM_NX_REG0[]->NXM_NX_CT_MARK[]))",
    "tcp6 actions=ct(commit,nat(dst=fe80::1)),ct(commit,nat(src=[fe80::1]-[fe80::2]:5)),ct(commit,force,nat(dst=fe80::1),alg=ftp)",
    "actions=conjunction(10,1/2),conjunction(11,2/3)",
    "conj_id=10,ip actions=set_field:0xa->reg5,ct(commit,table=20,zone=65520,exec(set_field:0xa00000000/0xffffffff00000000->ct_label))",
    "tcp actions=learn(table=10,hard_timeout=300,priority=192,delete_learned,cookie=0x5,eth_type=0x800,nw_proto=6,NXM_OF_TCP_DST[],NXM_OF_IP_DST[],NXM_OF_IP_SRC[],load:NXM_NX_REG3[]->NXM_NX_REG3[],load:0x2->NXM_NX_REG4[16..18],output:NXM_OF_IN_PORT[],NXM_NX_REG1[0..3]=NXM_NX_REG2[4..7],in_port=3,eth_src=00:11:22:33:44:55,NXM_NX_REG5[0..11]=0x5),clear_actions,write_actions(output:2),write_metadata:0x1/0x3,goto_table:3",
    "arp,arp_tpa=10.10.0.1,arp_op=1 actions=move:NXM_OF_ETH_SRC[]->NXM_OF_ETH_DST[],set_field:aa:bb:cc:dd:ee:ff->eth_src,set_field:2->arp_op,move:NXM_NX_ARP_SHA[]->NXM_NX_ARP_THA[],set_field:aa:bb:cc:dd:ee:ff->arp_sha,move:NXM_OF_ARP_SPA[]->NXM_OF_ARP_TPA[],set_field:10.10.0.1->arp_spa,IN_PORT",
    "pkt_mark=0x3,conj_id=5,ct_state=+new-est-inv+trk,ct_zone=65520,ct_mark=0x1/0x3,ct_label=0x1/0xf,ct_nw_src=1.1.1.1,ct_nw_proto=6,ct_tp_dst=80,tcp,reg0=0/0x1,reg7=0x5,tun_id=0x5,tun_src=2.2.2.2,tun_dst=1.2.3.4,metadata=0x5,in_port=1,dl_vlan=5,dl_src=01:00:00:00:00:00/01:00:00:00:00:00,dl_dst=0a:00:00:00:00:01,nw_src=10.0.0.0/255.0.255.0,nw_dst=10.0.0.1,nw_tos=8,nw_ecn=1,tp_src=0x50/0xfff0,tp_dst=80,tcp_flags=+syn-ack actions=drop",
    "icmp6,dl_vlan=5,ipv6_src=fe80::/64,ipv6_dst=fe80::1,ipv6_label=0x00005,icmp_type=135,icmp_code=0,nd_target=fe80::1,nd_sll=00:11:22:33:44:55 actions=drop",
    "udp6,tp_dst=53 actions=output:1",
    "sctp,tp_src=5 actions=output:1",
    "icmp,icmp_type=8,icmp_code=0 actions=output:1",
    "in_port=LOCAL,vlan_tci=0x0000/0x1fff actions=output:1",
    "arp,arp_spa=1.2.3.0/24,arp_op=1,arp_sha=00:11:22:33:44:55,arp_tha=00:00:00:00:00:00 actions=output:1",
    "dl_type=0x1234 actions=output:1",
    "ip actions=meter:7,output:1",
    "ip actions=meter:4294901760,goto_table:3",
    "dl_vlan=5 actions=set_field:4097->vlan_vid,set_field:4096/0x1000->vlan_vid,output:1",
    "ip actions=set_field:2->ip_dscp,output:1",
    "vlan_tci=0x0005/0x1fff actions=drop",
];

/// Spellings whose meaning must be what `ovs-ofctl -O OpenFlow15 parse-flow` makes of them: the
/// 13-bit `vlan_vid` (OFPVID_PRESENT included) and the legacy `mod_nw_tos`.
const SPELLINGS: &[&str] = &[
    "dl_vlan=5,actions=set_field:4097->vlan_vid",
    "dl_vlan=5,actions=set_field:0x1002->vlan_vid",
    "ip,actions=mod_nw_tos:8",
    "ip,actions=mod_nw_tos:252",
    "vlan_vid=5,actions=drop",
    "vlan_vid=4101,actions=drop",
];

/// `ovs-ofctl -O OpenFlow15 parse-flow TEXT`: its flow line's match and actions.
fn ovs_parse_flow(text: &str) -> String {
    let out = Command::new("ovs-ofctl")
        .args(["-O", "OpenFlow15", "parse-flow", text])
        .output()
        .expect("run ovs-ofctl");
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "ovs-ofctl parse-flow {text}: {printed}"
    );
    flow_part(&printed)
}

#[test]
fn spellings_mean_what_ovs_ofctl_parses() {
    for text in SPELLINGS {
        let fm: FlowMod = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let ovs = ovs_parse_flow(text);
        assert_eq!(fm.to_string(), ovs, "{text}");
        assert_eq!(
            flow_part(&ofp_print(&fm.to_bytes(1).unwrap())),
            ovs,
            "{text}"
        );
    }
}

/// The `MATCH actions=...` part of an `OFPT_FLOW_MOD` print.
fn flow_part(printed: &str) -> String {
    let line = printed
        .lines()
        .find(|l| l.starts_with("OFPT_FLOW_MOD"))
        .expect("a flow_mod line");
    let after = line.split_once(": ADD ").map(|(_, r)| r).unwrap_or(line);
    // Drop the "table:N priority=... cookie:..." prefix ofp-print adds before the match.
    after
        .split(' ')
        .filter(|w| !w.starts_with("table:") && !w.starts_with("cookie:"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn ofp_print_decodes_our_flow_mods() {
    for text in FLOWS {
        let fm: FlowMod = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let printed = ofp_print(&fm.to_bytes(1).unwrap());
        let expected = text
            .split_once(',')
            .filter(|(t, _)| t.starts_with("table="))
            .map(|(_, r)| r)
            .unwrap_or(text);
        assert_eq!(
            flow_part(&printed),
            expected,
            "\nflow {text}\nofp-print: {printed}"
        );
        assert_eq!(fm.to_string(), *text);
    }
}

#[test]
fn ofp_print_decodes_delete() {
    let fm = FlowMod::from_text(
        FlowModCommand::DeleteStrict,
        "table=1,cookie=0x5/0xff,priority=10,ip,nw_dst=10.0.0.1",
    )
    .unwrap();
    let printed = ofp_print(&fm.to_bytes(1).unwrap());
    assert!(
        printed.contains(
            "DEL_STRICT table:1 priority=10,ip,nw_dst=10.0.0.1 cookie:0x5/0xff actions=drop"
        ),
        "{printed}"
    );
}

use openflow::msg::flow_mod::NO_BUFFER;
use openflow::msg::flow_stats::FlowDescRequest;
use openflow::msg::group_mod::{GROUP_ALL, GroupDescRequest, GroupMod};
use openflow::msg::meter_mod::{METER_ALL, MeterDescRequest, MeterMod};
use openflow::msg::packet_in::{PacketIn, PacketIn2, reason};
use openflow::msg::packet_out::PacketOut;
use openflow::oxm::{Field, Match};

const GROUPS: &[&str] = &[
    "group_id=1,type=select,selection_method=hash,fields(ip_src,nw_proto),bucket=bucket_id:0,weight:100,actions=output:1,bucket=bucket_id:1,weight:50,watch_port:2,actions=set_field:0x1->reg0,resubmit(,10)",
    "group_id=2,type=select,selection_method=dp_hash,bucket=bucket_id:0,weight:100,actions=set_field:0xa0a0002->reg3,set_field:0x50/0xffff->reg4,resubmit(,42)",
    "group_id=3,type=select,selection_method=hash,fields=ip_dst,bucket=bucket_id:5,actions=output:1",
    "group_id=7,type=ff,bucket=bucket_id:0,watch_group:3,actions=output:1",
    "group_id=8,type=all,bucket=bucket_id:0,actions=output:1,bucket=bucket_id:1,actions=output:2",
    "group_id=9,type=indirect,bucket=bucket_id:0,actions=group:8",
];

#[test]
fn ofp_print_decodes_our_group_mods() {
    for text in GROUPS {
        let g: GroupMod = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let printed = ofp_print(&g.to_bytes(1).unwrap());
        assert_eq!(
            printed.lines().nth(1).map(str::trim),
            Some(format!("ADD {text}").as_str()),
            "{printed}"
        );
    }
    let g: GroupMod = GROUPS[0].parse().unwrap();
    let printed = ofp_print(&GroupMod::add_or_modify(g.group).to_bytes(1).unwrap());
    assert_eq!(
        printed.lines().nth(1).map(str::trim),
        Some(format!("ADD_OR_MOD {}", GROUPS[0]).as_str()),
        "{printed}"
    );
    let printed = ofp_print(&GroupMod::delete(GROUP_ALL).to_bytes(1).unwrap());
    assert!(
        printed.contains("DEL group_id=4294967292,type=all"),
        "{printed}"
    );
}

const METERS: &[&str] = &[
    "meter=1 kbps bands=type=drop rate=1000",
    "meter=2 pktps burst stats bands=type=drop rate=10 burst_size=5",
    "meter=3 kbps bands=type=dscp_remark rate=300 prec_level=2 type=drop rate=500",
    "meter=4 pktps burst bands=type=dscp_remark rate=1 burst_size=2 prec_level=3",
];

/// `ofp-print` shows a meter mod as `COMMAND meter=… bands=` and one line per band; joined
/// like our `Display` (see `MeterDesc`'s doc) they must equal our text.
fn meter_part(printed: &str) -> String {
    let mut lines = printed.lines().map(str::trim);
    let head = lines
        .next()
        .and_then(|l| l.split_once("): "))
        .map(|(_, r)| r)
        .unwrap_or_default();
    head.to_string() + &lines.collect::<Vec<_>>().join(" ")
}

#[test]
fn ofp_print_decodes_our_meter_mods() {
    for text in METERS {
        let m: MeterMod = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        let printed = ofp_print(&m.to_bytes(1).unwrap());
        assert!(printed.starts_with("OFPT_METER_MOD (OF1.5)"), "{printed}");
        assert_eq!(meter_part(&printed), format!("ADD {text}"), "{printed}");
        assert_eq!(m.to_string(), *text);
        let modify = MeterMod::modify(m.meter.clone());
        assert_eq!(
            meter_part(&ofp_print(&modify.to_bytes(1).unwrap())),
            format!("MOD {text}")
        );
    }
    let printed = ofp_print(&MeterMod::delete(METER_ALL).to_bytes(1).unwrap());
    assert_eq!(meter_part(&printed), "DEL meter=all bands=", "{printed}");
    let printed = ofp_print(
        &MeterDescRequest {
            meter_id: METER_ALL,
        }
        .to_bytes(1)
        .unwrap(),
    );
    assert!(
        printed.starts_with("OFPST_METER_CONFIG request (OF1.5) (xid=0x1): meter=all"),
        "{printed}"
    );
}

#[test]
fn ofp_print_decodes_our_requests() {
    let printed = ofp_print(
        &GroupDescRequest {
            group_id: GROUP_ALL,
        }
        .to_bytes(1)
        .unwrap(),
    );
    assert!(
        printed.starts_with("OFPST_GROUP_DESC request (OF1.5) (xid=0x1): group_id=ALL"),
        "{printed}"
    );
    let req = FlowDescRequest {
        table_id: 3,
        cookie: 5,
        cookie_mask: 0xff,
        flow_match: "ip,nw_src=10.0.0.0/24".parse().unwrap(),
        ..FlowDescRequest::default()
    };
    let printed = ofp_print(&req.to_bytes(1).unwrap());
    assert!(
        printed.starts_with("OFPST_FLOW request (OF1.5) (xid=0x1): table=3 ip,nw_src=10.0.0.0/24"),
        "{printed}"
    );
}

fn packet() -> Vec<u8> {
    // An Ethernet frame: dst 00:01:..:05, src 06:..:0b, ethertype 0x0c0d, payload.
    (0..60).map(|i| i as u8).collect()
}

#[test]
fn ofp_print_decodes_our_packet_messages() {
    let m = Match::new().with(Field::InPort, 1).with(Field::Reg(0), 3);
    let out = PacketOut {
        buffer_id: NO_BUFFER,
        flow_match: m.clone(),
        actions: openflow::action::text::parse_action_list(
            "set_field:0x5->reg1,resubmit(,10),output:2",
        )
        .unwrap(),
        data: packet(),
    };
    let printed = ofp_print(&out.to_bytes(1).unwrap());
    assert!(printed.starts_with("OFPT_PACKET_OUT (OF1.5) (xid=0x1): reg0=0x3,in_port=1 actions=set_field:0x5->reg1,resubmit(,10),output:2 data_len=60"), "{printed}");
    assert!(
        printed.contains("dl_src=06:07:08:09:0a:0b,dl_dst=00:01:02:03:04:05,dl_type=0x0c0d"),
        "{printed}"
    );

    let pin = PacketIn {
        buffer_id: NO_BUFFER,
        total_len: 60,
        reason: reason::ACTION,
        table_id: 3,
        cookie: 5,
        flow_match: m.clone(),
        data: packet(),
    };
    let printed = ofp_print(&pin.to_bytes(1).unwrap());
    assert!(
        printed.starts_with("OFPT_PACKET_IN (OF1.5) (xid=0x1): table_id=3 cookie=0x5 total_len=60 reg0=0x3,in_port=1 (via action) data_len=60 (unbuffered)"),
        "{printed}"
    );

    let pin2 = PacketIn2 {
        packet: packet(),
        full_len: 60,
        buffer_id: NO_BUFFER,
        table_id: 3,
        cookie: 5,
        reason: reason::NO_MATCH,
        metadata: m,
        userdata: vec![1, 2, 3],
        continuation: Vec::new(),
    };
    let printed = ofp_print(&pin2.to_bytes(1).unwrap());
    assert!(
        printed.starts_with("NXT_PACKET_IN2 (OF1.5) (xid=0x1): table_id=3 cookie=0x5 total_len=60 reg0=0x3,in_port=1 (via no_match) data_len=60 (unbuffered)"),
        "{printed}"
    );
    assert!(printed.contains(" userdata=01.02.03"), "{printed}");
}
