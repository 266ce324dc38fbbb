//! [`Transaction`]: collects operations for one database and hands out the index of each, so
//! its result can be picked from the outcome; inserts get generated `uuid-name`s.

use serde_json::Value as Json;

use super::{Condition, Mutation, Operation, WaitUntil};
use crate::data::{Atom, Row};

/// Position of an operation in its transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OpIndex(pub usize);

/// A transaction under construction.
#[derive(Debug, Clone, PartialEq)]
pub struct Transaction {
    database: String,
    operations: Vec<Operation>,
}

impl Transaction {
    /// An empty transaction on `database`.
    pub fn new(database: &str) -> Transaction {
        Transaction {
            database: database.to_owned(),
            operations: Vec::new(),
        }
    }

    /// The database name.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The operations so far.
    pub fn operations(&self) -> &[Operation] {
        &self.operations
    }

    /// Appends any operation.
    pub fn push(&mut self, op: Operation) -> OpIndex {
        self.operations.push(op);
        OpIndex(self.operations.len() - 1)
    }

    /// Inserts `row` and names it, returning the `["named-uuid", ...]` atom other operations of
    /// this transaction use to refer to the new row. Names are `row<index>`.
    pub fn insert_named(&mut self, table: &str, row: Row) -> (OpIndex, Atom) {
        let name = format!("row{}", self.operations.len());
        let index = self.push(Operation::Insert {
            table: table.to_owned(),
            row,
            uuid_name: Some(name.clone()),
        });
        (index, Atom::NamedUuid(name))
    }

    /// Inserts `row` without naming it.
    pub fn insert(&mut self, table: &str, row: Row) -> OpIndex {
        self.push(Operation::Insert {
            table: table.to_owned(),
            row,
            uuid_name: None,
        })
    }

    /// Selects `columns` (all when `None`) of rows matching `conditions`.
    pub fn select(
        &mut self,
        table: &str,
        conditions: Vec<Condition>,
        columns: Option<&[&str]>,
    ) -> OpIndex {
        let columns = columns.map(|c| c.iter().map(|s| (*s).to_owned()).collect());
        self.push(Operation::Select {
            table: table.to_owned(),
            conditions,
            columns,
        })
    }

    /// Updates rows matching `conditions`.
    pub fn update(&mut self, table: &str, conditions: Vec<Condition>, row: Row) -> OpIndex {
        self.push(Operation::Update {
            table: table.to_owned(),
            conditions,
            row,
        })
    }

    /// Mutates rows matching `conditions`.
    pub fn mutate(
        &mut self,
        table: &str,
        conditions: Vec<Condition>,
        mutations: Vec<Mutation>,
    ) -> OpIndex {
        self.push(Operation::Mutate {
            table: table.to_owned(),
            conditions,
            mutations,
        })
    }

    /// Deletes rows matching `conditions`.
    pub fn delete(&mut self, table: &str, conditions: Vec<Condition>) -> OpIndex {
        self.push(Operation::Delete {
            table: table.to_owned(),
            conditions,
        })
    }

    /// Waits until the rows matching `conditions`, projected on `columns`, equal (or differ
    /// from) `rows`; fails with `timed out` after `timeout_ms`.
    pub fn wait(
        &mut self,
        table: &str,
        conditions: Vec<Condition>,
        columns: &[&str],
        until: WaitUntil,
        rows: Vec<Row>,
        timeout_ms: Option<u64>,
    ) -> OpIndex {
        let columns = columns.iter().map(|s| (*s).to_owned()).collect();
        self.push(Operation::Wait {
            table: table.to_owned(),
            conditions,
            columns,
            until,
            rows,
            timeout_ms,
        })
    }

    /// Requests a durable commit.
    pub fn commit(&mut self, durable: bool) -> OpIndex {
        self.push(Operation::Commit { durable })
    }

    /// Aborts the transaction.
    pub fn abort(&mut self) -> OpIndex {
        self.push(Operation::Abort)
    }

    /// Adds a log comment.
    pub fn comment(&mut self, text: &str) -> OpIndex {
        self.push(Operation::Comment(text.to_owned()))
    }

    /// Requires that this session owns `lock`.
    pub fn assert_lock(&mut self, lock: &str) -> OpIndex {
        self.push(Operation::Assert {
            lock: lock.to_owned(),
        })
    }

    /// The `transact` params: `[database, op...]`.
    pub fn to_params(&self) -> Vec<Json> {
        std::iter::once(Json::from(self.database.as_str()))
            .chain(self.operations.iter().map(Operation::to_json))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn named_inserts_are_referable() {
        let mut t = Transaction::new("db");
        let (i, named) = t.insert_named("T", Row::new());
        let m = t.mutate(
            "P",
            vec![],
            vec![Mutation::new(
                "refs",
                super::super::Mutator::Insert,
                named.clone(),
            )],
        );
        assert_eq!((i, m), (OpIndex(0), OpIndex(1)));
        assert_eq!(
            t.to_params(),
            vec![
                json!("db"),
                json!({"op":"insert","table":"T","row":{},"uuid-name":"row0"}),
                json!({"op":"mutate","table":"P","where":[],"mutations":[["refs","insert",["named-uuid","row0"]]]}),
            ]
        );
    }
}
