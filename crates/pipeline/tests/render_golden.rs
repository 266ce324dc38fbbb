//! Golden tests: the rendered flows of the lab's Node n1 in each traffic mode, in `ovs-ofctl`
//! syntax, must equal `tests/golden/<mode>.txt`, and the NetworkPolicy flows of every
//! truth-table scenario `tests/golden/policy.txt`. Set `UPDATE_GOLDEN=1` to rewrite the files after
//! an intended change, and review the diff.

mod support;

use std::path::PathBuf;

use model::{TrafficMode, TunnelType};
use openflow::msg::flow_mod::FlowMod;

fn check(flows: &[FlowMod], name: &str) {
    check_text(&support::listing(flows), name);
}

fn check_text(text: &str, name: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, text).expect("write golden file");
    }
    let golden =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        text,
        golden,
        "rendered flows differ from {}",
        path.display()
    );
    // Every line is valid add-flow text that parses back to the same flow.
    for line in golden.lines().filter(|l| !l.starts_with('#')) {
        let fm: FlowMod = line.parse().unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(fm.to_string(), line);
    }
}

#[test]
fn geneve() {
    check(
        &support::all_flows(TrafficMode::Encap(TunnelType::Geneve)),
        "geneve",
    );
}

#[test]
fn vxlan_flows_equal_geneve() {
    // Only the tunnel port's type differs between the tunnel protocols.
    assert_eq!(
        support::all_flows(TrafficMode::Encap(TunnelType::Vxlan)),
        support::all_flows(TrafficMode::Encap(TunnelType::Geneve))
    );
}

#[test]
fn no_encap() {
    check(&support::all_flows(TrafficMode::NoEncap), "noencap");
}

#[test]
fn hybrid() {
    // n2 is in n1's subnet: reached directly, as in noEncap; n3 is not: reached through the
    // tunnel, as in encap.
    let flows = support::flows_with_peers(
        TrafficMode::Hybrid(TunnelType::Geneve),
        &[support::peer(), support::far_peer()],
    );
    check(&flows, "hybrid");
}

#[cfg(target_os = "linux")]
#[test]
fn policy() {
    check_text(&support::policy_listing(), "policy");
}
