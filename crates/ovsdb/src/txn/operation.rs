//! The eleven transaction operations and their JSON objects.

use serde_json::{Map, Value as Json};

use super::{Condition, Mutation};
use crate::data::Row;

/// What a `wait` waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitUntil {
    /// Until the selected rows equal the given rows.
    Equal,
    /// Until they differ.
    NotEqual,
}

/// One operation of a transaction.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    /// Insert `row`; `uuid_name` lets later operations refer to it as `["named-uuid", name]`.
    Insert {
        /// Table.
        table: String,
        /// Column values (others get defaults).
        row: Row,
        /// Name for the new row's UUID within the transaction.
        uuid_name: Option<String>,
    },
    /// Read matching rows.
    Select {
        /// Table.
        table: String,
        /// Conditions (all must hold).
        conditions: Vec<Condition>,
        /// Columns to return (`None`: all).
        columns: Option<Vec<String>>,
    },
    /// Set columns of matching rows.
    Update {
        /// Table.
        table: String,
        /// Conditions.
        conditions: Vec<Condition>,
        /// New column values.
        row: Row,
    },
    /// Apply mutations to matching rows.
    Mutate {
        /// Table.
        table: String,
        /// Conditions.
        conditions: Vec<Condition>,
        /// Mutations.
        mutations: Vec<Mutation>,
    },
    /// Delete matching rows.
    Delete {
        /// Table.
        table: String,
        /// Conditions.
        conditions: Vec<Condition>,
    },
    /// Block until the selected rows (projected on `columns`) are equal (or not) to `rows`.
    Wait {
        /// Table.
        table: String,
        /// Conditions.
        conditions: Vec<Condition>,
        /// Columns compared.
        columns: Vec<String>,
        /// Equal or not equal.
        until: WaitUntil,
        /// Expected rows.
        rows: Vec<Row>,
        /// Milliseconds before the transaction fails with `timed out` (`None`: forever).
        timeout_ms: Option<u64>,
    },
    /// Ask for a durable (fsynced) commit.
    Commit {
        /// Durability requested.
        durable: bool,
    },
    /// Abort the transaction (always fails with `aborted`).
    Abort,
    /// Add a comment to the server's log.
    Comment(String),
    /// Fail unless this session owns the lock.
    Assert {
        /// Lock name.
        lock: String,
    },
}

impl Operation {
    /// The `op` name.
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Insert { .. } => "insert",
            Operation::Select { .. } => "select",
            Operation::Update { .. } => "update",
            Operation::Mutate { .. } => "mutate",
            Operation::Delete { .. } => "delete",
            Operation::Wait { .. } => "wait",
            Operation::Commit { .. } => "commit",
            Operation::Abort => "abort",
            Operation::Comment(_) => "comment",
            Operation::Assert { .. } => "assert",
        }
    }

    /// The JSON object.
    pub fn to_json(&self) -> Json {
        let mut o = Map::new();
        o.insert("op".into(), Json::from(self.name()));
        let conds = |c: &[Condition]| Json::Array(c.iter().map(Condition::to_json).collect());
        let strings =
            |c: &[String]| Json::Array(c.iter().map(|s| Json::from(s.as_str())).collect());
        match self {
            Operation::Insert {
                table,
                row,
                uuid_name,
            } => {
                o.insert("table".into(), Json::from(table.as_str()));
                o.insert("row".into(), row.to_json());
                if let Some(name) = uuid_name {
                    o.insert("uuid-name".into(), Json::from(name.as_str()));
                }
            }
            Operation::Select {
                table,
                conditions,
                columns,
            } => {
                o.insert("table".into(), Json::from(table.as_str()));
                o.insert("where".into(), conds(conditions));
                if let Some(columns) = columns {
                    o.insert("columns".into(), strings(columns));
                }
            }
            Operation::Update {
                table,
                conditions,
                row,
            } => {
                o.insert("table".into(), Json::from(table.as_str()));
                o.insert("where".into(), conds(conditions));
                o.insert("row".into(), row.to_json());
            }
            Operation::Mutate {
                table,
                conditions,
                mutations,
            } => {
                o.insert("table".into(), Json::from(table.as_str()));
                o.insert("where".into(), conds(conditions));
                o.insert(
                    "mutations".into(),
                    Json::Array(mutations.iter().map(Mutation::to_json).collect()),
                );
            }
            Operation::Delete { table, conditions } => {
                o.insert("table".into(), Json::from(table.as_str()));
                o.insert("where".into(), conds(conditions));
            }
            Operation::Wait {
                table,
                conditions,
                columns,
                until,
                rows,
                timeout_ms,
            } => {
                if let Some(t) = timeout_ms {
                    o.insert("timeout".into(), Json::from(*t));
                }
                o.insert("table".into(), Json::from(table.as_str()));
                o.insert("where".into(), conds(conditions));
                o.insert("columns".into(), strings(columns));
                let until = match until {
                    WaitUntil::Equal => "==",
                    WaitUntil::NotEqual => "!=",
                };
                o.insert("until".into(), Json::from(until));
                o.insert(
                    "rows".into(),
                    Json::Array(rows.iter().map(Row::to_json).collect()),
                );
            }
            Operation::Commit { durable } => {
                o.insert("durable".into(), Json::Bool(*durable));
            }
            Operation::Abort => {}
            Operation::Comment(text) => {
                o.insert("comment".into(), Json::from(text.as_str()));
            }
            Operation::Assert { lock } => {
                o.insert("lock".into(), Json::from(lock.as_str()));
            }
        }
        Json::Object(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn emits_each_operation() {
        let cases = [
            (
                Operation::Insert {
                    table: "T".into(),
                    row: Row::new().with("a", 1i64),
                    uuid_name: Some("r".into()),
                },
                json!({"op":"insert","table":"T","row":{"a":1},"uuid-name":"r"}),
            ),
            (
                Operation::Select {
                    table: "T".into(),
                    conditions: vec![Condition::eq("a", 1i64)],
                    columns: Some(vec!["b".into()]),
                },
                json!({"op":"select","table":"T","where":[["a","==",1]],"columns":["b"]}),
            ),
            (
                Operation::Update {
                    table: "T".into(),
                    conditions: vec![],
                    row: Row::new().with("b", "x"),
                },
                json!({"op":"update","table":"T","where":[],"row":{"b":"x"}}),
            ),
            (
                Operation::Mutate {
                    table: "T".into(),
                    conditions: vec![],
                    mutations: vec![Mutation::new("n", super::super::Mutator::Add, 1i64)],
                },
                json!({"op":"mutate","table":"T","where":[],"mutations":[["n","+=",1]]}),
            ),
            (
                Operation::Delete {
                    table: "T".into(),
                    conditions: vec![],
                },
                json!({"op":"delete","table":"T","where":[]}),
            ),
            (
                Operation::Wait {
                    table: "T".into(),
                    conditions: vec![],
                    columns: vec!["a".into()],
                    until: WaitUntil::NotEqual,
                    rows: vec![Row::new().with("a", 1i64)],
                    timeout_ms: Some(0),
                },
                json!({"op":"wait","timeout":0,"table":"T","where":[],"columns":["a"],"until":"!=","rows":[{"a":1}]}),
            ),
            (
                Operation::Commit { durable: false },
                json!({"op":"commit","durable":false}),
            ),
            (Operation::Abort, json!({"op":"abort"})),
            (
                Operation::Comment("hi".into()),
                json!({"op":"comment","comment":"hi"}),
            ),
            (
                Operation::Assert { lock: "l".into() },
                json!({"op":"assert","lock":"l"}),
            ),
        ];
        for (op, want) in cases {
            assert_eq!(op.to_json(), want, "{}", op.name());
        }
    }
}
