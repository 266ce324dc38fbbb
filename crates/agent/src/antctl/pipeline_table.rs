//! The pipeline report as text: one line per table — id, name, stage, the flows the switch
//! holds in it — in aligned columns.

use crate::apiserver::PipelineReport;

/// `report` as `antctl get pipeline` prints it.
pub fn pipeline_table(report: &PipelineReport) -> String {
    let rows: Vec<[String; 4]> = report
        .tables
        .iter()
        .map(|t| {
            [
                t.id.to_string(),
                t.name.clone().unwrap_or_else(|| "-".into()),
                t.stage.clone().unwrap_or_else(|| "-".into()),
                t.flows.to_string(),
            ]
        })
        .collect();
    let header = ["ID", "TABLE", "STAGE", "FLOWS"].map(str::to_owned);
    let mut widths = [0; 4];
    for row in std::iter::once(&header).chain(&rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let line = format!(
            "{:<w0$}  {:<w1$}  {:<w2$}  {:>w3$}",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3]
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apiserver::TableReport;

    #[test]
    fn aligned_columns_and_a_dash_for_an_undeclared_table() {
        let table = |id, name: Option<&str>, stage: Option<&str>, flows| TableReport {
            id,
            name: name.map(Into::into),
            stage: stage.map(Into::into),
            flows,
        };
        let report = PipelineReport {
            tables: vec![
                table(0, Some("Classifier"), Some("Classifier"), 9),
                table(13, Some("ARPResponder"), Some("Output"), 12),
                table(200, None, None, 1),
            ],
        };
        assert_eq!(
            pipeline_table(&report),
            "ID   TABLE         STAGE       FLOWS\n\
             0    Classifier    Classifier      9\n\
             13   ARPResponder  Output         12\n\
             200  -             -               1\n"
        );
    }
}
