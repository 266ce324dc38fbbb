//! Flow text by table name, for tests that must not depend on table ids: a flow in `ovs-ofctl`
//! syntax with `table=`, `goto_table:` and `ct(table=…)` naming tables instead of numbering
//! them.

use openflow::msg::flow_mod::FlowMod;

use super::TableGraph;

/// `fm` as `ovs-ofctl` text with the names `g` gives its table ids, the table always written:
/// `table=IngressRule,priority=200,conj_id=1,ip actions=goto_table:ConntrackCommit`.
pub(crate) fn named_text(g: &TableGraph, fm: &FlowMod) -> String {
    let name = |id: &str| {
        let id: u8 = id.parse().expect("a table id");
        g.table(id)
            .map_or_else(|| format!("<no table {id}>"), |t| t.to_string())
    };
    let text = fm.to_string();
    let text = if text.starts_with("table=") {
        text
    } else {
        format!("table=0,{text}")
    };
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some((at, marker)) = ["table=", "goto_table:"]
        .iter()
        .filter_map(|m| rest.find(m).map(|at| (at, *m)))
        .min()
    {
        out.push_str(&rest[..at + marker.len()]);
        rest = &rest[at + marker.len()..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        out.push_str(&name(&rest[..digits]));
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::tables::{CONNTRACK_STATE, CONNTRACK_ZONE};

    #[test]
    fn every_table_id_is_named() {
        let g = TableGraph::standard();
        let mut fm: FlowMod = "priority=0 actions=goto_table:1".parse().unwrap();
        assert_eq!(
            named_text(g, &fm),
            "table=Classifier,priority=0 actions=goto_table:SpoofGuard"
        );
        fm = format!(
            "table={},ip actions=ct(table={},zone=65520)",
            g.id(CONNTRACK_ZONE),
            g.id(CONNTRACK_STATE)
        )
        .parse()
        .unwrap();
        assert_eq!(
            named_text(g, &fm),
            "table=ConntrackZone,ip actions=ct(table=ConntrackState,zone=65520)"
        );
    }
}
