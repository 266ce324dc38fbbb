//! The NetworkPolicy truth tables in controller mode, with real packets: the standalone truth
//! table's lab (netpol_truth_table.rs: two Nodes, real Open vSwitch, the nine Pods added through
//! the real `antrea` plugin) with its objects in a fake API server, NetworkPolicy computed by the
//! real `antrea-controller` on a third LAN host and enforced by agents in
//! `policyComputation: controller` (tests/controller_lab). For every scenario the fake is made
//! to hold exactly the scenario's objects, each agent is seen to enforce the view the
//! controller computes for its Node, and every cell is probed and judged against the same
//! expected table the standalone test judges against, so a pass in both modes is the same
//! results in both modes. The enforced policy must not change while a scenario is probed.
#![cfg(target_os = "linux")]

mod controller_lab;
mod support;

use std::time::Instant;

use controller_lab::ControllerLab;
use truthtable::scenarios;

#[test]
fn every_scenario_with_real_packets_through_antrea_controller() {
    let started = Instant::now();
    let mut lab = ControllerLab::start();
    let setup = started.elapsed();

    let scenarios = scenarios();
    assert!(scenarios.len() >= 25);
    let mut failures = Vec::new();
    let (mut probes, mut rounds, mut reprobed_cells) = (0, 0, 0);
    let mut reprobed = Vec::new();
    let mut spans = Vec::new();
    for scenario in &scenarios {
        lab.hold_scenario(scenario);
        let views = lab.wait_enforced(scenario.name);
        let installs = lab.installs();
        let verdict = lab.judge(scenario);
        lab.assert_unchanged_since(scenario.name, &installs, &views);
        spans.push(format!(
            "{}: {}",
            scenario.name,
            views
                .iter()
                .map(|(node, view)| format!("{node} {} policies", view.policies.len()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        probes += verdict.probes;
        rounds += verdict.rounds;
        reprobed_cells += verdict.reprobed.len();
        if !verdict.reprobed.is_empty() {
            reprobed.push(format!("{}: {}", scenario.name, verdict.reprobe_summary()));
        }
        if let Err(diff) = verdict.result() {
            failures.push(format!("{}\n{diff}", scenario.name));
        }
    }
    eprintln!(
        "{} scenarios through antrea-controller, {probes} probes in {rounds} rounds, in {:?} \
         after a {setup:?} setup; {} allowed cells needed a re-probe{}\nper-Node views:\n{}",
        scenarios.len(),
        started.elapsed() - setup,
        reprobed_cells,
        reprobed
            .iter()
            .map(|r| format!("\n{r}"))
            .collect::<String>(),
        spans.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} scenarios mismatch in controller mode:\n{}",
        failures.len(),
        failures.join("\n")
    );
    lab.stop_agents();
}
