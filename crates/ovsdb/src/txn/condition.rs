//! `where` conditions `[column, function, value]` and mutations `[column, mutator, value]`.

use serde_json::Value as Json;

use crate::data::Value;

/// A comparison function of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    /// `<`
    Less,
    /// `<=`
    LessOrEqual,
    /// `==`
    Equal,
    /// `!=`
    NotEqual,
    /// `>=`
    GreaterOrEqual,
    /// `>`
    Greater,
    /// `includes`: the column's set/map contains every element of the value.
    Includes,
    /// `excludes`: the column's set/map contains no element of the value.
    Excludes,
}

impl Function {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Function::Less => "<",
            Function::LessOrEqual => "<=",
            Function::Equal => "==",
            Function::NotEqual => "!=",
            Function::GreaterOrEqual => ">=",
            Function::Greater => ">",
            Function::Includes => "includes",
            Function::Excludes => "excludes",
        }
    }
}

/// One `where` clause element.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// Column name (may be `_uuid`).
    pub column: String,
    /// Comparison.
    pub function: Function,
    /// Right-hand side.
    pub value: Value,
}

impl Condition {
    /// `[column, function, value]`.
    pub fn new(column: &str, function: Function, value: impl Into<Value>) -> Condition {
        Condition {
            column: column.to_owned(),
            function,
            value: value.into(),
        }
    }

    /// `[column, "==", value]`.
    pub fn eq(column: &str, value: impl Into<Value>) -> Condition {
        Condition::new(column, Function::Equal, value)
    }

    /// The JSON array form.
    pub fn to_json(&self) -> Json {
        Json::Array(vec![
            Json::from(self.column.as_str()),
            Json::from(self.function.as_str()),
            self.value.to_json(),
        ])
    }
}

/// A mutation operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutator {
    /// `+=`
    Add,
    /// `-=`
    Subtract,
    /// `*=`
    Multiply,
    /// `/=`
    Divide,
    /// `%=`
    Remainder,
    /// `insert` into a set or map.
    Insert,
    /// `delete` from a set or map (for maps, by key set or by key/value map).
    Delete,
}

impl Mutator {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mutator::Add => "+=",
            Mutator::Subtract => "-=",
            Mutator::Multiply => "*=",
            Mutator::Divide => "/=",
            Mutator::Remainder => "%=",
            Mutator::Insert => "insert",
            Mutator::Delete => "delete",
        }
    }
}

/// One mutation of a `mutate` operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Mutation {
    /// Column name.
    pub column: String,
    /// Operator.
    pub mutator: Mutator,
    /// Operand.
    pub value: Value,
}

impl Mutation {
    /// `[column, mutator, value]`.
    pub fn new(column: &str, mutator: Mutator, value: impl Into<Value>) -> Mutation {
        Mutation {
            column: column.to_owned(),
            mutator,
            value: value.into(),
        }
    }

    /// The JSON array form.
    pub fn to_json(&self) -> Json {
        Json::Array(vec![
            Json::from(self.column.as_str()),
            Json::from(self.mutator.as_str()),
            self.value.to_json(),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn emits_the_array_forms() {
        assert_eq!(
            Condition::eq("name", "br0").to_json(),
            json!(["name", "==", "br0"])
        );
        assert_eq!(
            Condition::new(
                "external_ids",
                Function::Includes,
                Value::Map(vec![("k".into(), "v".into())])
            )
            .to_json(),
            json!(["external_ids", "includes", ["map", [["k", "v"]]]])
        );
        assert_eq!(
            Mutation::new("n", Mutator::Remainder, 3i64).to_json(),
            json!(["n", "%=", 3])
        );
        assert_eq!(
            Mutation::new("s", Mutator::Delete, Value::set(["a"])).to_json(),
            json!(["s", "delete", ["set", ["a"]]])
        );
    }
}
