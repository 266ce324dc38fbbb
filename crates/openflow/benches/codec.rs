//! Codec throughput on an Antrea-like flow mix (pod forwarding, network-policy conjunctions,
//! service ct/nat): encode, decode, text parse and text print rates in flows per second on one
//! core, next to a baseline measured in the same run (copying the encoded bytes and reading each
//! message header).

use std::hint::black_box;
use std::time::Instant;

use openflow::Message;
use openflow::header::Header;
use openflow::msg::flow_mod::FlowMod;

#[path = "support/flow_mix.rs"]
mod flow_mix;
use flow_mix::flow_text;

const FLOWS: usize = 100_000;

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
