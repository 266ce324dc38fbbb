//! The feature gates as text: one line per gate — name, whether it is on, the platform's
//! default, whether the configuration sets it.

use super::columns::columns;
use crate::apiserver::FeatureGateReport;

/// `gates` as `antctl get featuregates` prints them.
pub fn feature_gate_table(gates: &[FeatureGateReport]) -> String {
    let state = |on: bool| if on { "Enabled" } else { "Disabled" }.to_owned();
    let rows: Vec<[String; 4]> = gates
        .iter()
        .map(|g| {
            [
                g.name.clone(),
                state(g.enabled),
                state(g.default),
                if g.configured {
                    "configured"
                } else {
                    "default"
                }
                .to_owned(),
            ]
        })
        .collect();
    columns(["FEATUREGATE", "STATUS", "DEFAULT", "SOURCE"], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_default_and_source() {
        let gate = |name: &str, enabled, default, configured| FeatureGateReport {
            name: name.into(),
            enabled,
            default,
            configured,
        };
        assert_eq!(
            feature_gate_table(&[
                gate("AntreaPolicy", true, true, false),
                gate("Egress", false, true, true)
            ]),
            "FEATUREGATE   STATUS    DEFAULT  SOURCE\n\
             AntreaPolicy  Enabled   Enabled  default\n\
             Egress        Disabled  Enabled  configured\n"
        );
    }
}
