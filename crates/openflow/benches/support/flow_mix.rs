//! The Antrea-like flow mix the benchmarks share: per pod a classifier, spoof-guard, L3 and L2
//! forwarding flow, per policy rule conjunction clauses, per service endpoint a ct/nat flow.

/// The text of flow `i` of the mix: per pod a classifier, spoof-guard and forwarding flow, per
/// policy rule conjunction clauses, per service endpoint a ct/nat flow.
pub fn flow_text(i: usize) -> String {
    let pod = i / 10;
    let (a, b) = ((pod >> 8) & 0xff, pod & 0xff);
    let port = 10 + pod % 60000;
    match i % 10 {
        0 => format!(
            "table=0,cookie=0x1010000000000,priority=190,in_port={port} actions=set_field:0x2/0xf->reg0,goto_table:1"
        ),
        1 => format!(
            "table=1,cookie=0x1010000000000,priority=200,ip,in_port={port},dl_src=aa:bb:cc:00:{a:02x}:{b:02x},nw_src=10.{a}.{b}.2 actions=goto_table:3"
        ),
        2 => format!(
            "table=1,cookie=0x1010000000000,priority=200,arp,in_port={port},arp_spa=10.{a}.{b}.2,arp_sha=aa:bb:cc:00:{a:02x}:{b:02x} actions=goto_table:2"
        ),
        3 => format!(
            "table=14,cookie=0x1010000000000,priority=200,ip,reg0=0x200/0x200,nw_dst=10.{a}.{b}.2 actions=set_field:0a:00:00:00:00:01->eth_src,set_field:aa:bb:cc:00:{a:02x}:{b:02x}->eth_dst,dec_ttl,goto_table:15"
        ),
        4 => format!(
            "table=15,cookie=0x1010000000000,priority=200,dl_dst=aa:bb:cc:00:{a:02x}:{b:02x} actions=set_field:{port:#x}->reg1,set_field:0x10000/0x10000->reg0,goto_table:16"
        ),
        5 => format!(
            "table=10,cookie=0x1050000000000,priority=200,ip,nw_src=10.{a}.{b}.2 actions=conjunction({},1/3),conjunction({},1/2)",
            pod * 2 + 1,
            pod * 2 + 2
        ),
        6 => format!(
            "table=10,cookie=0x1050000000000,priority=200,ip,reg1={port:#x} actions=conjunction({},2/3)",
            pod * 2 + 1
        ),
        7 => format!(
            "table=10,cookie=0x1050000000000,priority=200,tcp,tp_dst={} actions=conjunction({},3/3),conjunction({},2/2)",
            1 + pod % 65000,
            pod * 2 + 1,
            pod * 2 + 2
        ),
        8 => format!(
            "table=10,cookie=0x1050000000000,priority=190,conj_id={},ip actions=set_field:{:#x}->reg5,ct(commit,table=11,zone=65520,exec(set_field:{:#x}00000000/0xffffffff00000000->ct_label))",
            pod * 2 + 1,
            pod * 2 + 1,
            pod * 2 + 1
        ),
        _ => format!(
            "table=8,cookie=0x1030000000000,priority=200,tcp,reg3=0xa{a:02x}{b:02x}02,reg4=0x20050/0x7ffff actions=ct(commit,table=9,zone=65520,nat(dst=10.{a}.{b}.2:80),exec(set_field:0x10/0x10->ct_mark,move:NXM_NX_REG0[0..3]->NXM_NX_CT_MARK[0..3]))"
        ),
    }
}
