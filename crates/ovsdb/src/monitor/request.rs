//! `<monitor-request>` / `<monitor-cond-request>`: columns, optional conditions and which kinds
//! of change to report.

use serde_json::{Map, Value as Json};

use crate::txn::Condition;

/// Which changes a monitor reports (all by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonitorSelect {
    /// Send the current contents first.
    pub initial: bool,
    /// Report inserted rows.
    pub insert: bool,
    /// Report deleted rows.
    pub delete: bool,
    /// Report modified rows.
    pub modify: bool,
}

impl Default for MonitorSelect {
    fn default() -> Self {
        MonitorSelect {
            initial: true,
            insert: true,
            delete: true,
            modify: true,
        }
    }
}

/// What to watch in one table.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MonitorRequest {
    /// Columns to report (`None`: all).
    pub columns: Option<Vec<String>>,
    /// Only rows matching these conditions (`monitor_cond` only; ignored by `monitor`).
    pub conditions: Option<Vec<Condition>>,
    /// Kinds of change.
    pub select: MonitorSelect,
}

impl MonitorRequest {
    /// Watch `columns` of every row.
    pub fn columns(columns: &[&str]) -> MonitorRequest {
        MonitorRequest {
            columns: Some(columns.iter().map(|c| (*c).to_owned()).collect()),
            ..Default::default()
        }
    }

    /// Adds `where` conditions (for `monitor_cond`).
    pub fn matching(mut self, conditions: Vec<Condition>) -> MonitorRequest {
        self.conditions = Some(conditions);
        self
    }

    /// The JSON object; `with_conditions` adds the `where` member of `monitor_cond`.
    pub(crate) fn to_json(&self, with_conditions: bool) -> Json {
        let mut o = Map::new();
        if let Some(columns) = &self.columns {
            o.insert(
                "columns".into(),
                Json::Array(columns.iter().map(|c| Json::from(c.as_str())).collect()),
            );
        }
        if let (true, Some(conds)) = (with_conditions, &self.conditions) {
            o.insert(
                "where".into(),
                Json::Array(conds.iter().map(Condition::to_json).collect()),
            );
        }
        let s = self.select;
        let select: Map<String, Json> = [
            ("initial", s.initial),
            ("insert", s.insert),
            ("delete", s.delete),
            ("modify", s.modify),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), Json::Bool(v)))
        .collect();
        o.insert("select".into(), Json::Object(select));
        Json::Object(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn emits_columns_conditions_and_select() {
        let r = MonitorRequest::columns(&["name"]).matching(vec![Condition::eq("name", "a")]);
        let all = json!({"initial":true,"insert":true,"delete":true,"modify":true});
        assert_eq!(
            r.to_json(true),
            json!({"columns":["name"],"where":[["name","==","a"]],"select":all})
        );
        assert_eq!(r.to_json(false), json!({"columns":["name"],"select":all}));
    }
}
