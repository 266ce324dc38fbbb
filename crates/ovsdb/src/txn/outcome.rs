//! Results of a transaction: one typed result per operation, or the failure the server
//! reported (with the index of the failing operation, or the commit stage after the last one).

use std::fmt;

use serde_json::Value as Json;

use super::{OpIndex, Operation};
use crate::data::{Row, Uuid, abbreviate};

/// The result of one successful operation.
#[derive(Debug, Clone, PartialEq)]
pub enum OperationResult {
    /// The inserted row's UUID.
    Insert(Uuid),
    /// The selected rows.
    Select(Vec<Row>),
    /// Rows updated.
    Update(u64),
    /// Rows mutated.
    Mutate(u64),
    /// Rows deleted.
    Delete(u64),
    /// The condition held (in time).
    Wait,
    /// Durability granted.
    Commit,
    /// The comment was logged.
    Comment,
    /// The lock is owned.
    Assert,
}

/// A failed transaction as the server reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationError {
    /// Index of the failing operation; `None` when every operation succeeded but the commit
    /// failed (constraint violations, referential integrity, ...).
    pub index: Option<usize>,
    /// The failing operation's name (`insert`, ...), when `index` is known.
    pub op: Option<&'static str>,
    /// The server's `error` string (`constraint violation`, `timed out`, `aborted`, ...).
    pub error: String,
    /// The server's `details`, if any.
    pub details: Option<String>,
}

impl OperationError {
    /// True when the commit broke a unique index (RFC 7047 `constraint violation`), e.g. a
    /// row inserted with a name another row of that table already has.
    pub fn is_constraint_violation(&self) -> bool {
        self.error == "constraint violation"
    }
}

impl fmt::Display for OperationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.index, self.op) {
            (Some(i), Some(op)) => write!(f, "operation {i} ({op}) failed: {}", self.error)?,
            _ => write!(f, "transaction commit failed: {}", self.error)?,
        }
        if let Some(d) = &self.details {
            write!(f, ": {d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for OperationError {}

/// Every operation's result, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct TransactOutcome {
    /// One result per operation.
    pub results: Vec<OperationResult>,
}

impl TransactOutcome {
    /// Interprets a `transact` reply for `ops`. `Ok(Err(..))` is a failure the server reported;
    /// `Err(reason)` means the reply does not have the shape RFC 7047 gives it.
    pub(crate) fn parse(
        ops: &[Operation],
        reply: &Json,
    ) -> Result<Result<TransactOutcome, OperationError>, String> {
        let items = reply
            .as_array()
            .ok_or_else(|| format!("transact result is not an array: {}", abbreviate(reply)))?;
        // A failure is an element with an "error" member: at the failing operation, or one
        // element past the last operation when the commit failed.
        if let Some((i, item)) = items
            .iter()
            .enumerate()
            .find(|(_, item)| item.get("error").is_some())
        {
            let error = item
                .get("error")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_owned();
            let details = item
                .get("details")
                .and_then(Json::as_str)
                .map(str::to_owned);
            let op = ops.get(i).map(Operation::name);
            return Ok(Err(OperationError {
                index: op.map(|_| i),
                op,
                error,
                details,
            }));
        }
        if items.len() < ops.len() {
            return Err(format!(
                "transact returned {} results for {} operations",
                items.len(),
                ops.len()
            ));
        }
        let results = ops
            .iter()
            .zip(items)
            .map(|(op, item)| OperationResult::parse(op, item))
            .collect::<Result<_, _>>()?;
        Ok(Ok(TransactOutcome { results }))
    }

    /// The result at `index`.
    pub fn get(&self, index: OpIndex) -> Option<&OperationResult> {
        self.results.get(index.0)
    }

    /// The UUID of the row inserted by the operation at `index`.
    pub fn inserted(&self, index: OpIndex) -> Option<Uuid> {
        match self.get(index)? {
            OperationResult::Insert(u) => Some(*u),
            _ => None,
        }
    }

    /// The rows selected by the operation at `index`.
    pub fn rows(&self, index: OpIndex) -> Option<&[Row]> {
        match self.get(index)? {
            OperationResult::Select(rows) => Some(rows),
            _ => None,
        }
    }

    /// The row count of the update, mutate or delete at `index`.
    pub fn count(&self, index: OpIndex) -> Option<u64> {
        match self.get(index)? {
            OperationResult::Update(n)
            | OperationResult::Mutate(n)
            | OperationResult::Delete(n) => Some(*n),
            _ => None,
        }
    }
}

impl OperationResult {
    fn parse(op: &Operation, json: &Json) -> Result<OperationResult, String> {
        let bad = |what: &str| format!("{} result without {what}: {}", op.name(), abbreviate(json));
        let count = || {
            json.get("count")
                .and_then(Json::as_u64)
                .ok_or_else(|| bad("count"))
        };
        Ok(match op {
            Operation::Insert { .. } => {
                let uuid = json.get("uuid").map(crate::data::Value::parse);
                match uuid {
                    Some(Ok(v)) => OperationResult::Insert(v.as_uuid().ok_or_else(|| bad("uuid"))?),
                    _ => return Err(bad("uuid")),
                }
            }
            Operation::Select { .. } => {
                let rows = json
                    .get("rows")
                    .and_then(Json::as_array)
                    .ok_or_else(|| bad("rows"))?;
                OperationResult::Select(
                    rows.iter()
                        .map(Row::parse)
                        .collect::<Result<_, _>>()
                        .map_err(|e| e.to_string())?,
                )
            }
            Operation::Update { .. } => OperationResult::Update(count()?),
            Operation::Mutate { .. } => OperationResult::Mutate(count()?),
            Operation::Delete { .. } => OperationResult::Delete(count()?),
            Operation::Wait { .. } => OperationResult::Wait,
            Operation::Commit { .. } => OperationResult::Commit,
            Operation::Comment(_) => OperationResult::Comment,
            Operation::Assert { .. } => OperationResult::Assert,
            Operation::Abort => return Err("abort operation reported success".to_owned()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::txn::Condition;
    use serde_json::json;

    fn ops() -> Vec<Operation> {
        vec![
            Operation::Insert {
                table: "T".into(),
                row: Row::new(),
                uuid_name: None,
            },
            Operation::Delete {
                table: "T".into(),
                conditions: vec![Condition::eq("a", 1i64)],
            },
        ]
    }

    #[test]
    fn parses_results_in_order() {
        let u = "36bfd2b6-5a2c-4b8f-9f3c-0123456789ab";
        let out = TransactOutcome::parse(&ops(), &json!([{"uuid":["uuid",u]},{"count":2}]))
            .unwrap()
            .unwrap();
        assert_eq!(out.inserted(OpIndex(0)), Some(u.parse().unwrap()));
        assert_eq!(out.count(OpIndex(1)), Some(2));
    }

    #[test]
    fn reports_the_failing_operation_or_the_commit() {
        let e = TransactOutcome::parse(&ops(), &json!([{}, {"error":"bad","details":"why"}]))
            .unwrap()
            .unwrap_err();
        assert_eq!(
            (e.index, e.op, e.error.as_str(), e.details.as_deref()),
            (Some(1), Some("delete"), "bad", Some("why"))
        );
        let e = TransactOutcome::parse(&ops(), &json!([{"uuid":["uuid","36bfd2b6-5a2c-4b8f-9f3c-0123456789ab"]},{"count":0},{"error":"constraint violation"}]))
            .unwrap()
            .unwrap_err();
        assert_eq!((e.index, e.op), (None, None));
    }

    #[test]
    fn malformed_replies_are_errors() {
        for bad in [
            json!({}),
            json!([{}]),
            json!([{"uuid":"x"},{"count":1}]),
            json!([{"uuid":["uuid","36bfd2b6-5a2c-4b8f-9f3c-0123456789ab"]},{"count":-1}]),
        ] {
            assert!(
                TransactOutcome::parse(&ops(), &bad).is_err(),
                "{bad} accepted"
            );
        }
    }
}
