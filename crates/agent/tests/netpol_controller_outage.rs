//! A controller outage with real packets (issue 12): the truth-table lab in controller mode
//! (tests/controller_lab) with a policy in force on both Nodes. antrea-controller is killed
//! (SIGKILL) and nothing changes: both agents keep enforcing it. One agent restarted during
//! the outage comes back enforcing the view it persisted, before any connection to the
//! controller. A policy changed in the API server meanwhile reaches nobody until the
//! controller is started again; then both agents converge to it. Each state is judged with
//! every probe of the truth table.
#![cfg(target_os = "linux")]

mod controller_lab;
mod support;

use controller_lab::{CONTROLLER_ADDRESS, ControllerLab, state_file};
use serde_json::json;
use support::wait_until;
use truthtable::{Policy, Scenario, scenarios};

/// In force when the controller goes, with a policy on each Node: n1 lets into x only
/// Namespace y, n2 lets into z/a only Namespace x.
fn a_policy_on_each_node() -> Scenario {
    let from_namespace =
        |ns: &str| json!([{"from": [{"namespaceSelector": {"matchLabels": {"ns": ns}}}]}]);
    Scenario {
        name: "x from Namespace y, z/a from Namespace x",
        policies: vec![
            Policy {
                namespace: "x",
                name: "from-y",
                spec: json!({"podSelector": {}, "ingress": from_namespace("y")}),
            },
            Policy {
                namespace: "z",
                name: "a-from-x",
                spec: json!({"podSelector": {"matchLabels": {"pod": "a"}}, "ingress": from_namespace("x")}),
            },
        ],
        labels: Vec::new(),
        ingress: |s, d, _| (d.0 != "x" || s.0 == "y") && (d != ("z", "a") || s.0 == "x"),
        egress: |_, _, _| true,
    }
}

/// Probes `scenario`'s table, failing with the difference; the enforced view must not change
/// while it is probed.
fn assert_table(lab: &ControllerLab, scenario: &Scenario, views: &ViewsByNode, when: &str) {
    let installs = lab.installs();
    let verdict = lab.judge(scenario);
    if !verdict.reprobed.is_empty() {
        eprintln!("{when}: {}", verdict.reprobe_summary());
    }
    if let Err(diff) = verdict.result() {
        panic!("{:?} {when}:\n{diff}", scenario.name);
    }
    lab.assert_unchanged_since(scenario.name, &installs, views);
}

type ViewsByNode = std::collections::BTreeMap<String, controlplane::NodeView>;

#[test]
fn agents_keep_enforcing_through_a_controller_outage_and_converge_after_it() {
    let mut lab = ControllerLab::start();
    let before = a_policy_on_each_node();
    lab.hold_scenario(&before);
    let views = lab.wait_enforced(before.name);
    for (node, view) in &views {
        assert_eq!(view.policies.len(), 1, "{node} enforces one policy");
    }
    assert_table(&lab, &before, &views, "with the controller");

    // The controller vanishes; both agents see their watch end, and change nothing.
    let disconnects = |lab: &ControllerLab| -> Vec<usize> {
        lab.nodes
            .iter()
            .map(|n| {
                let lost = format!("watch of Node {}'s span at {CONTROLLER_ADDRESS}: ", n.name);
                n.log(n.runs())
                    .lines()
                    .filter(|l| l.contains(&lost))
                    .count()
            })
            .collect()
    };
    let connected = disconnects(&lab);
    lab.controller.kill();
    wait_until("both agents to lose their watch", || {
        disconnects(&lab)
            .iter()
            .zip(&connected)
            .all(|(now, was)| now > was)
    });
    assert_table(&lab, &before, &views, "with the controller down");

    // n1's agent restarts while the controller is down: it reads the view it kept and its
    // first flows enforce it, with no controller to ask.
    let n1 = lab.node("n1");
    assert!(n1.stop_agent(), "n1's agent did not stop cleanly");
    n1.start_and_wait_up();
    let socket = n1.cni_socket();
    wait_until("n1's CNI socket", || socket.exists());
    let run = n1.log(n1.runs());
    let kept = &views["n1"];
    let read = format!(
        "NetworkPolicy state {} read: {} policies, {} groups",
        state_file(n1).display(),
        kept.policies.len(),
        kept.groups.len()
    );
    let line_of = |needle: &str| run.lines().position(|l| l.contains(needle));
    assert!(
        line_of(&read) < line_of("Node n1 up") && line_of(&read).is_some(),
        "n1's restarted agent did not bring its Node up from the kept view ({read:?}):\n{run}"
    );
    let x_a = n1.antctl(&["get", "networkpolicies", "--pod", "x/a"]);
    assert!(x_a.contains("ingress isolated"), "{x_a}");
    n1.ovs
        .appctl(&["revalidator/wait"])
        .unwrap_or_else(|e| panic!("n1: revalidator/wait: {e}"));
    assert_table(
        &lab,
        &before,
        &views,
        "after n1's agent restarted during the outage",
    );
    let n1 = lab.node("n1");
    let run = n1.log(n1.runs());
    assert!(
        !run.contains("watching Node n1's span"),
        "n1's restarted agent reached a controller during the outage:\n{run}"
    );

    // A change meanwhile reaches no agent; once the controller is back both converge to it:
    // n1 loses its policy, n2's is replaced.
    let after = scenarios()
        .into_iter()
        .find(|s| s.name == "deny all both ways in z (n2's Pods)")
        .expect("the catalog's deny-all in z");
    lab.hold_scenario(&after);
    for n in &lab.nodes {
        assert_eq!(
            lab.kept_view(n).as_ref(),
            Some(&views[&n.name]),
            "{} received a view with the controller down",
            n.name
        );
    }
    lab.controller.start();
    let converged = lab.wait_enforced(after.name);
    assert!(converged["n1"].policies.is_empty(), "{:?}", converged["n1"]);
    assert_eq!(converged["n2"].policies.len(), 1);
    assert_ne!(converged["n2"], views["n2"]);
    assert_table(&lab, &after, &converged, "after the controller came back");
    lab.stop_agents();
}
