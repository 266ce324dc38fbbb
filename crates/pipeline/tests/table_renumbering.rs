//! The table graph renumbered the tables and changed nothing else. The flows rendered before it
//! (`tests/fixtures/before/`: the goldens of that time, n1's flows per traffic mode and the
//! NetworkPolicy flows of every truth-table scenario, with that layout's id→name map in
//! `tables.txt`) and the flows rendered now, each with every table id — `table=N`,
//! `goto_table:N`, `ct(table=N)`, `resubmit(,N)`, `table_id=N` — replaced by the table's name,
//! are the same flows — but for what the Services feature changed on purpose since
//! ([`SERVICES_CHANGED`], and the gotos that now reach its hairpin tables,
//! [`HAIRPIN_RETARGETED`]).

mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;

use model::{TrafficMode, TunnelType};
use pipeline::layout::TableGraph;

/// Where a table id follows in `ovs-ofctl` flow text. After `resubmit(` the id is the second
/// argument.
const TABLE_IDS: [&str; 4] = ["table=", "goto_table:", "table_id=", "resubmit("];

fn fixture(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/before")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The id→name map of the layout before the graph.
fn names_before() -> BTreeMap<u8, String> {
    fixture("tables.txt")
        .lines()
        .map(|line| {
            let (id, name) = line.split_once(' ').expect("`<id> <name>` lines");
            (id.parse().expect("a table id"), name.to_owned())
        })
        .collect()
}

fn names_now() -> BTreeMap<u8, String> {
    TableGraph::standard()
        .tables()
        .map(|(id, t)| (id, t.name().to_owned()))
        .collect()
}

/// `line` (a flow in `ovs-ofctl` syntax; no `table=` means table 0) with its table ids
/// replaced by their names in `names`.
fn named(line: &str, names: &BTreeMap<u8, String>) -> String {
    let name = |id: u8| {
        names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("<no table {id}>"))
    };
    let line = if line.starts_with("table=") {
        line.to_owned()
    } else {
        format!("table=0,{line}")
    };
    let mut out = String::new();
    let mut rest = line.as_str();
    while let Some((at, marker)) = TABLE_IDS
        .iter()
        .filter_map(|m| rest.find(m).map(|at| (at, *m)))
        .min()
    {
        out.push_str(&rest[..at + marker.len()]);
        rest = &rest[at + marker.len()..];
        if marker == "resubmit(" {
            let port = rest.find(',').map_or(rest.len(), |comma| comma + 1);
            out.push_str(&rest[..port]);
            rest = &rest[port..];
        }
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            out.push_str(&name(rest[..digits].parse().expect("a table id")));
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

/// A listing's sections (`## <title>` lines; one untitled section when there are none), each
/// its flows named with `names`, sorted. The `# <id> <name>` headers must agree with `names`.
fn sections(listing: &str, names: &BTreeMap<u8, String>) -> Vec<(String, Vec<String>)> {
    let mut sections: Vec<(String, Vec<String>)> = Vec::new();
    for line in listing.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            sections.push((title.to_owned(), Vec::new()));
        } else if let Some(header) = line.strip_prefix("# ") {
            let (id, name) = header.split_once(' ').expect("`# <id> <name>` headers");
            let id: u8 = id.parse().expect("a table id");
            assert_eq!(names.get(&id).map(String::as_str), Some(name), "{line}");
        } else {
            if sections.is_empty() {
                sections.push((String::new(), Vec::new()));
            }
            let flows = &mut sections.last_mut().expect("a section").1;
            flows.push(named(line, names));
        }
    }
    for (_, flows) in &mut sections {
        flows.sort();
    }
    sections
}

/// What the Services feature (`docs/services.md`) changed in the Node's flows, by table name:
/// the flows it replaced, and the flows it added or replaced them with. Nothing else may
/// differ.
const SERVICES_CHANGED: (&[&str], &[&str]) = (
    &[
        "table=ConntrackState,priority=0 actions=goto_table:EgressRule",
        "table=ConntrackZone,priority=200,ip actions=ct(table=ConntrackState,zone=65520)",
    ],
    &[
        "table=ConntrackState,priority=0 actions=goto_table:PreRoutingClassifier",
        "table=ConntrackZone,priority=200,ip actions=ct(table=ConntrackState,zone=65520,nat)",
        "table=EndpointDNAT,priority=0 actions=goto_table:EgressRule",
        "table=PreRoutingClassifier,priority=200,ip actions=resubmit(,SessionAffinity),resubmit(,ServiceLB)",
        "table=ServiceLB,priority=0 actions=goto_table:EndpointDNAT",
        "table=ServiceLB,priority=200,ip,reg4=0x20000/0x70000 actions=goto_table:EndpointDNAT",
        "table=SessionAffinity,priority=0 actions=set_field:0x10000/0x70000->reg4",
        // Hairpin (n1's gateway is 10.244.1.1).
        "table=UnSNAT,priority=0 actions=goto_table:ConntrackZone",
        "table=UnSNAT,priority=200,ip,nw_dst=10.244.1.1 actions=ct(table=ConntrackZone,zone=65521,nat)",
        "table=SNATMark,priority=0 actions=goto_table:SNAT",
        "table=SNAT,priority=0 actions=goto_table:L2ForwardingCalc",
        "table=SNAT,priority=200,ct_state=+new+trk,ct_mark=0x40/0x40,ip actions=ct(commit,table=L2ForwardingCalc,zone=65521,nat(src=10.244.1.1),exec(set_field:0x40/0x40->ct_mark))",
        "table=SNAT,priority=200,ct_state=-new-rpl+trk,ct_mark=0x40/0x40,ip actions=ct(table=L2ForwardingCalc,zone=65521,nat)",
        "table=IngressRule,priority=64990,ct_mark=0x40/0x40,ip actions=goto_table:ConntrackCommit",
        "table=ConntrackCommit,priority=210,ct_mark=0x40/0x40,ip actions=goto_table:Output",
        "table=Output,priority=210,ct_mark=0x40/0x40,ip actions=IN_PORT",
        // Source NAT of Service traffic from outside under externalTrafficPolicy Cluster.
        "table=SNATMark,priority=210,ct_state=+new+trk,ip,reg4=0x80000/0x80000 actions=ct(commit,table=SNAT,zone=65520,exec(set_field:0x20/0x20->ct_mark))",
        // ... and the Node's own Service connections, committed in zone 65521 to their own
        // address.
        "table=SNATMark,priority=200,ct_state=+new+trk,ip,reg0=0x2/0xf,reg4=0x20000/0x70000,nw_src=10.244.1.1 actions=ct(commit,table=SNAT,zone=65520,exec(set_field:0x20/0x20->ct_mark))",
        "table=SNAT,priority=200,ct_state=+new+trk,ct_mark=0x20/0x20,ip actions=ct(commit,table=L2ForwardingCalc,zone=65521,nat(src=10.244.1.1),exec(set_field:0x20/0x20->ct_mark))",
        "table=SNAT,priority=200,ct_state=-new-rpl+trk,ct_mark=0x20/0x20,ip actions=ct(table=L2ForwardingCalc,zone=65521,nat)",
        "table=ConntrackCommit,priority=210,ct_mark=0x20/0x20,ip actions=goto_table:Output",
        "table=L3Forwarding,priority=210,ct_state=+rpl+trk,ct_mark=0x20/0x20,ip actions=set_field:02:00:0a:f4:01:01->eth_dst,goto_table:L2ForwardingCalc",
        // The Node's own Service traffic to host-network endpoints.
        "table=L3Forwarding,priority=190,ip,reg0=0x2/0xf,reg4=0x20000/0x70000 actions=set_field:02:00:0a:f4:01:01->eth_dst,set_field:0x100000/0x100000->reg4,goto_table:L3DecTTL",
        "table=L3Forwarding,priority=190,ct_mark=0x40/0x40,ip,reg0=0x2/0xf actions=set_field:02:00:0a:f4:01:01->eth_dst,goto_table:L3DecTTL",
        "table=SNATMark,priority=220,ct_state=+new+trk,ip,reg4=0x100000/0x100000 actions=ct(commit,table=SNAT,zone=65520,exec(set_field:0x40/0x40->ct_mark))",
        "table=SNAT,priority=210,ct_state=+new+trk,ct_mark=0x40/0x40,ip,reg0=0x2/0xf actions=ct(commit,table=L2ForwardingCalc,zone=65521,nat(src=169.254.0.253),exec(set_field:0x40/0x40->ct_mark))",
        "table=UnSNAT,priority=200,ip,nw_dst=169.254.0.253 actions=ct(table=ConntrackZone,zone=65521,nat)",
    ],
);

/// The gotos the hairpin tables came between (`docs/services.md`): a flow of the table that
/// went to the first target now goes to the second, the new table in front of it.
const HAIRPIN_RETARGETED: &[(&str, &str, &str)] = &[
    ("Classifier", "ConntrackZone", "UnSNAT"),
    ("SpoofGuard", "ConntrackZone", "UnSNAT"),
    ("L3DecTTL", "L2ForwardingCalc", "SNATMark"),
];

/// `flow` (by table name) with its goto retargeted as [`HAIRPIN_RETARGETED`] says.
fn retargeted(flow: &str) -> String {
    for (table, from, to) in HAIRPIN_RETARGETED {
        if flow.starts_with(&format!("table={table},")) {
            return flow.replace(&format!("goto_table:{from}"), &format!("goto_table:{to}"));
        }
    }
    flow.to_owned()
}

/// The fixture `before` and the listing `now` hold the same flows, by table name, once
/// `intended`'s flows (gone, new) are swapped in.
fn same_flows_by_name(before: &str, now: &str, intended: (&[&str], &[&str])) {
    let (before, now) = (
        sections(&fixture(before), &names_before()),
        sections(now, &names_now()),
    );
    assert!(
        before.iter().any(|(_, flows)| !flows.is_empty()),
        "no flows before"
    );
    let titles = |s: &[(String, Vec<String>)]| s.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>();
    assert_eq!(titles(&before), titles(&now));
    let mut changed = Vec::new();
    for ((title, was), (_, is)) in before.iter().zip(&now) {
        let (gone, new) = intended;
        for flow in gone {
            assert!(
                was.iter().any(|f| f == flow),
                "{title}: {flow} was not there"
            );
        }
        let mut was: Vec<String> = was
            .iter()
            .filter(|f| !gone.contains(&f.as_str()))
            .map(|f| retargeted(f))
            .chain(new.iter().map(|f| (*f).to_owned()))
            .collect();
        was.sort();
        if &was != is {
            let gone = was.iter().filter(|f| !is.contains(f));
            let new = is.iter().filter(|f| !was.contains(f));
            changed.push(format!(
                "{title}\n{}{}",
                gone.map(|f| format!("- {f}\n")).collect::<String>(),
                new.map(|f| format!("+ {f}\n")).collect::<String>()
            ));
        }
    }
    assert!(
        changed.is_empty(),
        "flows changed beyond their table ids:\n{}",
        changed.concat()
    );
}

#[test]
fn the_name_mapping_covers_every_kind_of_table_id() {
    let names: BTreeMap<u8, String> = [(0, "A".into()), (3, "B".into()), (7, "C".into())].into();
    assert_eq!(
        named("priority=0 actions=goto_table:3", &names),
        "table=A,priority=0 actions=goto_table:B"
    );
    assert_eq!(
        named(
            "table=3,ip actions=ct(table=7,zone=65520),resubmit(,7),resubmit(1,3,ct),learn(table_id=0)",
            &names
        ),
        "table=B,ip actions=ct(table=C,zone=65520),resubmit(,C),resubmit(1,B,ct),learn(table_id=A)"
    );
    assert_eq!(
        named("table=9,ip actions=drop", &names),
        "table=<no table 9>,ip actions=drop"
    );
}

#[test]
fn geneve() {
    same_flows_by_name(
        "geneve.txt",
        &support::listing(&support::all_flows(TrafficMode::Encap(TunnelType::Geneve))),
        SERVICES_CHANGED,
    );
}

#[test]
fn no_encap() {
    same_flows_by_name(
        "noencap.txt",
        &support::listing(&support::all_flows(TrafficMode::NoEncap)),
        SERVICES_CHANGED,
    );
}

#[test]
fn hybrid() {
    let flows = support::flows_with_peers(
        TrafficMode::Hybrid(TunnelType::Geneve),
        &[support::peer(), support::far_peer()],
    );
    same_flows_by_name("hybrid.txt", &support::listing(&flows), SERVICES_CHANGED);
}

#[cfg(target_os = "linux")]
#[test]
fn policies_of_every_truth_table_scenario() {
    same_flows_by_name("policy.txt", &support::policy_listing(), (&[], &[]));
}
