//! Table updates: `<table-updates>` of `monitor` (old/new row pairs) and `<table-updates2>` of
//! `monitor_cond` (initial/insert/modify/delete), and the events a monitor stream yields.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::data::{DataError, Row, Uuid};

/// Per table, per row UUID, a change.
pub type TableUpdates<R> = BTreeMap<String, BTreeMap<Uuid, R>>;

/// A row change reported by `monitor` (`update` notifications).
#[derive(Debug, Clone, PartialEq)]
pub enum RowUpdate {
    /// A new row (also every row of the initial contents).
    Insert(Row),
    /// A changed row: `old` has the previous values of the changed columns, `new` every
    /// monitored column.
    Modify {
        /// Previous values of the changed columns.
        old: Row,
        /// Current values.
        new: Row,
    },
    /// A deleted row with its last values.
    Delete(Row),
}

/// A row change reported by `monitor_cond` (`update2` notifications).
#[derive(Debug, Clone, PartialEq)]
pub enum RowUpdate2 {
    /// A row of the initial contents.
    Initial(Row),
    /// A new row.
    Insert(Row),
    /// The changed columns: new values of scalar columns, and for set and map columns the
    /// elements to add or remove (ovsdb-server(7) "update2" diff notation).
    Modify(Row),
    /// A deleted row.
    Delete,
}

/// The updates of either monitor flavour.
#[derive(Debug, Clone, PartialEq)]
pub enum Updates {
    /// From `monitor`.
    V1(TableUpdates<RowUpdate>),
    /// From `monitor_cond`.
    V2(TableUpdates<RowUpdate2>),
}

/// What a monitor stream yields.
#[derive(Debug, Clone, PartialEq)]
pub enum MonitorEvent {
    /// The full current contents: first after the monitor starts, and again after every
    /// reconnection (replace everything known before).
    Snapshot(Updates),
    /// A change.
    Update(Updates),
    /// The connection was lost; a `Snapshot` follows once the client has reconnected.
    Disconnected(String),
    /// After a reconnection the server refused the monitor; the stream ends.
    Failed(String),
}

impl Updates {
    /// Parses `<table-updates>` (`v2 == false`) or `<table-updates2>`.
    pub fn parse(json: &Json, v2: bool) -> Result<Updates, DataError> {
        if v2 {
            parse_tables(json, parse_row_update2).map(Updates::V2)
        } else {
            parse_tables(json, parse_row_update).map(Updates::V1)
        }
    }

    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        match self {
            Updates::V1(t) => t.values().all(BTreeMap::is_empty),
            Updates::V2(t) => t.values().all(BTreeMap::is_empty),
        }
    }
}

fn parse_tables<R>(
    json: &Json,
    row: fn(&Json) -> Result<R, DataError>,
) -> Result<TableUpdates<R>, DataError> {
    let tables = json
        .as_object()
        .ok_or_else(|| DataError::shape("table updates", json))?;
    tables
        .iter()
        .map(|(table, rows)| {
            let rows = rows
                .as_object()
                .ok_or_else(|| DataError::shape("table update", rows))?;
            let rows = rows
                .iter()
                .map(|(uuid, r)| Ok((uuid.parse::<Uuid>()?, row(r)?)))
                .collect::<Result<_, DataError>>()?;
            Ok((table.clone(), rows))
        })
        .collect()
}

fn parse_row_update(json: &Json) -> Result<RowUpdate, DataError> {
    let get = |k| json.get(k).map(Row::parse).transpose();
    match (get("old")?, get("new")?) {
        (None, Some(new)) => Ok(RowUpdate::Insert(new)),
        (Some(old), Some(new)) => Ok(RowUpdate::Modify { old, new }),
        (Some(old), None) => Ok(RowUpdate::Delete(old)),
        (None, None) => Err(DataError::shape("row update", json)),
    }
}

fn parse_row_update2(json: &Json) -> Result<RowUpdate2, DataError> {
    let obj = json
        .as_object()
        .filter(|o| o.len() == 1)
        .ok_or_else(|| DataError::shape("row update2", json))?;
    let Some((kind, body)) = obj.iter().next() else {
        return Err(DataError::shape("row update2", json));
    };
    match kind.as_str() {
        "initial" => Row::parse(body).map(RowUpdate2::Initial),
        "insert" => Row::parse(body).map(RowUpdate2::Insert),
        "modify" => Row::parse(body).map(RowUpdate2::Modify),
        "delete" => Ok(RowUpdate2::Delete),
        _ => Err(DataError::shape("row update2", json)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const U: &str = "36bfd2b6-5a2c-4b8f-9f3c-0123456789ab";

    #[test]
    fn parses_v1_old_new_pairs() {
        let Updates::V1(t) = Updates::parse(
            &json!({"T": {U: {"old": {"a": 1}, "new": {"a": 2}}}}),
            false,
        )
        .unwrap() else {
            panic!("v1 expected")
        };
        let u: Uuid = U.parse().unwrap();
        assert_eq!(
            t["T"][&u],
            RowUpdate::Modify {
                old: Row::new().with("a", 1i64),
                new: Row::new().with("a", 2i64)
            }
        );
    }

    #[test]
    fn parses_v2_kinds() {
        let Updates::V2(t) = Updates::parse(&json!({"T": {U: {"delete": null}}}), true).unwrap()
        else {
            panic!("v2 expected")
        };
        assert_eq!(t["T"][&U.parse::<Uuid>().unwrap()], RowUpdate2::Delete);
    }

    #[test]
    fn rejects_malformed_updates() {
        for (bad, v2) in [
            (json!([]), false),
            (json!({"T": []}), false),
            (json!({"T": {"not-a-uuid": {"new": {}}}}), false),
            (json!({"T": {U: {}}}), false),
            (json!({"T": {U: {"insert": {}, "delete": null}}}), true),
            (json!({"T": {U: {"frobnicate": {}}}}), true),
        ] {
            assert!(Updates::parse(&bad, v2).is_err(), "{bad} accepted");
        }
    }
}
