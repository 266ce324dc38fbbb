//! Applying `update2` "modify" diffs (ovsdb-server(7)): a column that holds at most one value
//! and has one is replaced by the diff; otherwise the diff's set elements are toggled and its
//! map pairs are removed (same key and value), replaced (same key) or added.

use super::RowUpdate2;
use crate::data::{Atom, Row, Value};
use crate::schema::{ColumnType, TableSchema};

impl Value {
    /// Applies an `update2` diff for a column of type `column_type`. One-element sets come out
    /// as bare atoms, as ovsdb-server writes them.
    pub fn apply_diff(&mut self, diff: &Value, column_type: &ColumnType) {
        let has_value = match self {
            Value::Atom(_) => true,
            Value::Set(atoms) => !atoms.is_empty(),
            Value::Map(pairs) => !pairs.is_empty(),
        };
        if column_type.max == Some(1) && has_value {
            *self = diff.clone();
            return;
        }
        if column_type.is_map() {
            let mut pairs = match std::mem::replace(self, Value::empty()) {
                Value::Map(pairs) => pairs,
                _ => Vec::new(),
            };
            if let Value::Map(changes) = diff {
                for (k, v) in changes {
                    match pairs.iter().position(|(pk, _)| pk == k) {
                        Some(i) if pairs.get(i).is_some_and(|(_, pv)| pv == v) => {
                            pairs.remove(i);
                        }
                        Some(i) => {
                            if let Some(slot) = pairs.get_mut(i) {
                                slot.1 = v.clone();
                            }
                        }
                        None => pairs.push((k.clone(), v.clone())),
                    }
                }
            }
            *self = Value::Map(pairs);
        } else {
            let mut atoms: Vec<Atom> = self.atoms().to_vec();
            for atom in diff.atoms() {
                match atoms.iter().position(|a| a == atom) {
                    Some(i) => {
                        atoms.remove(i);
                    }
                    None => atoms.push(atom.clone()),
                }
            }
            *self = match <[Atom; 1]>::try_from(atoms) {
                Ok([one]) => Value::Atom(one),
                Err(atoms) => Value::Set(atoms),
            };
        }
    }
}

impl Row {
    /// Applies an `update2` row diff; columns missing from `self` start empty, columns unknown
    /// to `table` are taken from the diff as they are.
    pub fn apply_diff(&mut self, diff: &Row, table: &TableSchema) {
        for (column, change) in &diff.0 {
            match table.columns.get(column) {
                Some(schema) => self
                    .0
                    .entry(column.clone())
                    .or_insert_with(Value::empty)
                    .apply_diff(change, &schema.column_type),
                None => {
                    self.0.insert(column.clone(), change.clone());
                }
            }
        }
    }

    /// Applies one `update2` row change to a cached row: `None` means the row is gone.
    pub fn apply_update2(
        current: Option<Row>,
        update: &RowUpdate2,
        table: &TableSchema,
    ) -> Option<Row> {
        match update {
            RowUpdate2::Initial(row) | RowUpdate2::Insert(row) => Some(row.clone()),
            RowUpdate2::Modify(diff) => {
                let mut row = current.unwrap_or_default();
                row.apply_diff(diff, table);
                Some(row)
            }
            RowUpdate2::Delete => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::ColumnType;
    use serde_json::json;

    fn ty(json: serde_json::Value) -> ColumnType {
        ColumnType::parse("t", &json).unwrap()
    }

    #[test]
    fn scalar_and_optional_columns_take_the_new_value() {
        let scalar = ty(json!("string"));
        let mut v = Value::from("a");
        v.apply_diff(&Value::from("b"), &scalar);
        assert_eq!(v, Value::from("b"));
        let optional = ty(json!({"key": "integer", "min": 0, "max": 1}));
        let mut v = Value::empty();
        v.apply_diff(&Value::from(5i64), &optional);
        assert_eq!(v, Value::from(5i64));
        v.apply_diff(&Value::from(7i64), &optional);
        assert_eq!(v, Value::from(7i64));
        v.apply_diff(&Value::empty(), &optional);
        assert_eq!(v, Value::empty());
    }

    #[test]
    fn sets_toggle_elements() {
        let set = ty(json!({"key": "string", "min": 0, "max": "unlimited"}));
        let mut v = Value::set(["a", "b"]);
        v.apply_diff(&Value::set(["b", "c"]), &set);
        assert_eq!(v, Value::set(["a", "c"]));
        v.apply_diff(&Value::from("c"), &set);
        assert_eq!(v, Value::from("a"));
    }

    #[test]
    fn maps_remove_replace_and_add() {
        let map = ty(json!({"key": "string", "value": "string", "min": 0, "max": "unlimited"}));
        let m = |pairs: &[(&str, &str)]| {
            Value::Map(
                pairs
                    .iter()
                    .map(|(k, v)| (Atom::from(*k), Atom::from(*v)))
                    .collect(),
            )
        };
        let mut v = m(&[("keep", "1"), ("drop", "2"), ("change", "3")]);
        v.apply_diff(&m(&[("drop", "2"), ("change", "4"), ("new", "5")]), &map);
        assert_eq!(v, m(&[("keep", "1"), ("change", "4"), ("new", "5")]));
    }
}
