//! The bridge's flows as text: one line per flow, its table's name and id first.

use crate::apiserver::FlowsReport;

/// `report` as `antctl get ovsflows` prints it.
pub fn flow_lines(report: &FlowsReport) -> String {
    if report.flows.is_empty() {
        return "no flow matches\n".to_owned();
    }
    report
        .flows
        .iter()
        .map(|f| format!("{}  {}\n", f.table_label(), f.flow))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::FlowReport;

    #[test]
    fn each_flow_after_its_table_name() {
        let report = FlowsReport {
            flows: vec![
                FlowReport {
                    table_id: 0,
                    table: Some("Classifier".into()),
                    flow: "cookie=0x0, table=0, priority=0 actions=drop".into(),
                },
                FlowReport {
                    table_id: 200,
                    table: None,
                    flow: "cookie=0x0, table=200, priority=0 actions=drop".into(),
                },
            ],
        };
        assert_eq!(
            flow_lines(&report),
            "Classifier(0)  cookie=0x0, table=0, priority=0 actions=drop\n\
             table 200  cookie=0x0, table=200, priority=0 actions=drop\n"
        );
    }
}
