//! A packet trace as text: the flow traced, then each table the packet went through by name
//! with the flow that matched and its actions indented under it, then the verdict.

use std::fmt::Write;

use crate::apiserver::{TraceReport, TraceVerdict};

/// `report` as `antctl trace-packet` prints it.
pub fn trace_text(report: &TraceReport) -> String {
    let mut out = format!("Flow: {}\n", report.flow);
    for step in &report.steps {
        let table = step.table.as_deref().unwrap_or("(undeclared)");
        let _ = writeln!(out, "{table}({}): {}", step.table_id, step.flow);
        for action in &step.actions {
            let _ = writeln!(out, "    {action}");
        }
    }
    let _ = match &report.verdict {
        TraceVerdict::Output { ports } => {
            let ports: Vec<String> = ports
                .iter()
                .map(|(number, name)| format!("{number} ({name})"))
                .collect();
            writeln!(out, "Verdict: output to port {}", ports.join(", "))
        }
        TraceVerdict::Drop => writeln!(out, "Verdict: drop"),
        TraceVerdict::Unknown { datapath_actions } => writeln!(
            out,
            "Verdict: neither output nor drop (datapath actions: {datapath_actions})"
        ),
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::TraceStep;

    #[test]
    fn tables_by_name_then_the_verdict() {
        let report = TraceReport {
            flow: "in_port=3,icmp".into(),
            steps: vec![TraceStep {
                table_id: 0,
                table: Some("Classifier".into()),
                flow: "in_port=3, priority 190".into(),
                actions: vec!["goto_table:1".into()],
            }],
            verdict: TraceVerdict::Output {
                ports: vec![(4, "b-1".into())],
            },
            trace: String::new(),
        };
        assert_eq!(
            trace_text(&report),
            "Flow: in_port=3,icmp\nClassifier(0): in_port=3, priority 190\n    goto_table:1\nVerdict: output to port 4 (b-1)\n"
        );
    }
}
