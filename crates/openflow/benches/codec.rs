//! Codec throughput on an Antrea-like flow mix (pod forwarding, network-policy conjunctions,
//! service ct/nat): encode, decode, text parse and text print rates in flows per second on one
//! core, next to a baseline measured in the same run (copying the encoded bytes and reading each
//! message header).

use std::hint::black_box;
use std::time::Instant;

use openflow::Message;
use openflow::header::Header;
use openflow::msg::flow_mod::FlowMod;

const FLOWS: usize = 100_000;

/// The text of flow `i` of the mix: per pod a classifier, spoof-guard and forwarding flow, per
/// policy rule conjunction clauses, per service endpoint a ct/nat flow.
fn flow_text(i: usize) -> String {
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

fn rate(label: &str, n: usize, start: Instant) -> f64 {
    let secs = start.elapsed().as_secs_f64();
    let per_sec = n as f64 / secs;
    println!(
        "{label:<34} {per_sec:>12.0} flows/s  ({:>7.1} ms for {n})",
        secs * 1e3
    );
    per_sec
}

fn main() {
    let texts: Vec<String> = (0..FLOWS).map(flow_text).collect();

    let start = Instant::now();
    let flows: Vec<FlowMod> = texts
        .iter()
        .map(|t| t.parse().unwrap_or_else(|e| panic!("{t}: {e}")))
        .collect();
    rate("text parse (FromStr)", FLOWS, start);

    let start = Instant::now();
    let mut printed = 0usize;
    for f in &flows {
        printed += black_box(f.to_string()).len();
    }
    rate("text print (Display)", FLOWS, start);
    black_box(printed);

    // Encode into one buffer, as a batch sender would.
    let mut wire = Vec::with_capacity(FLOWS * 160);
    let start = Instant::now();
    for (i, f) in flows.iter().enumerate() {
        f.emit(i as u32, &mut wire).expect("encode");
    }
    let encode = rate("encode (FlowMod::emit)", FLOWS, start);
    println!(
        "{:<34} {:>12} bytes, {:.1} bytes/flow",
        "encoded size",
        wire.len(),
        wire.len() as f64 / FLOWS as f64
    );

    let mut offsets = Vec::with_capacity(FLOWS);
    let mut at = 0;
    while at < wire.len() {
        offsets.push(at);
        at += usize::from(u16::from_be_bytes([wire[at + 2], wire[at + 3]]));
    }

    let start = Instant::now();
    let mut copy = Vec::with_capacity(wire.len());
    for (i, &o) in offsets.iter().enumerate() {
        let end = offsets.get(i + 1).copied().unwrap_or(wire.len());
        let h = Header::parse(&wire[o..end]).expect("header");
        copy.extend_from_slice(&wire[o..o + usize::from(h.length)]);
    }
    let baseline = rate("baseline (header parse + copy)", FLOWS, start);
    black_box(&copy);

    let start = Instant::now();
    let mut decoded = 0usize;
    for (i, &o) in offsets.iter().enumerate() {
        let end = offsets.get(i + 1).copied().unwrap_or(wire.len());
        let (fm, _) = FlowMod::decode(&wire[o..end]).expect("decode");
        decoded += fm.instructions.apply.len();
    }
    let decode = rate("decode (FlowMod::decode)", FLOWS, start);
    black_box(decoded);

    let check: Vec<FlowMod> = offsets
        .iter()
        .take(10)
        .map(|&o| FlowMod::decode(&wire[o..]).expect("decode").0)
        .collect();
    assert_eq!(check, flows[..10], "decode(encode(x)) must equal x");
    println!(
        "encode is {:.1}x and decode {:.1}x slower than the baseline",
        baseline / encode,
        baseline / decode
    );
}
