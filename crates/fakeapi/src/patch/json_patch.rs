//! JSON patch (RFC 6902): `add`, `remove`, `replace`, `move`, `copy` and `test` on JSON pointers.

use super::PatchError;
use serde_json::Value;

/// Applies every operation of `patch` (a JSON array) to `target`, all or nothing.
pub fn apply(target: &mut Value, patch: &Value) -> Result<(), PatchError> {
    let ops = patch
        .as_array()
        .ok_or_else(|| PatchError::Malformed("a JSON patch must be an array".into()))?;
    let mut work = target.clone();
    for (index, op) in ops.iter().enumerate() {
        apply_one(&mut work, op).map_err(|reason| PatchError::Operation { index, reason })?;
    }
    *target = work;
    Ok(())
}

fn apply_one(doc: &mut Value, op: &Value) -> Result<(), String> {
    let name = op
        .get("op")
        .and_then(Value::as_str)
        .ok_or("missing \"op\"")?;
    let path = pointer(op, "path")?;
    let value = || {
        op.get("value")
            .cloned()
            .ok_or_else(|| format!("{name} needs \"value\""))
    };
    match name {
        "add" => add(doc, &path, value()?),
        "remove" => remove(doc, &path).map(drop),
        "replace" => {
            remove(doc, &path)?;
            add(doc, &path, value()?)
        }
        "move" => {
            let from = pointer(op, "from")?;
            let moved = remove(doc, &from)?;
            add(doc, &path, moved)
        }
        "copy" => {
            let from = pointer(op, "from")?;
            let copied = get(doc, &from)?.clone();
            add(doc, &path, copied)
        }
        "test" => {
            if *get(doc, &path)? == value()? {
                Ok(())
            } else {
                Err(format!("test failed at {path:?}"))
            }
        }
        other => Err(format!("unknown op {other:?}")),
    }
}

/// The decoded reference tokens of the pointer in field `field` of an operation.
fn pointer(op: &Value, field: &str) -> Result<Vec<String>, String> {
    let text = op
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("missing {field:?}"))?;
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let rest = text
        .strip_prefix('/')
        .ok_or_else(|| format!("pointer {text:?} must start with '/'"))?;
    Ok(rest
        .split('/')
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn get<'a>(doc: &'a Value, path: &[String]) -> Result<&'a Value, String> {
    path.iter()
        .try_fold(doc, |v, token| match v {
            Value::Object(m) => m.get(token),
            Value::Array(a) => token.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        })
        .ok_or_else(|| format!("path /{} does not exist", path.join("/")))
}

fn parent<'a>(doc: &'a mut Value, path: &'a [String]) -> Result<(&'a mut Value, &'a str), String> {
    let (last, init) = path.split_last().ok_or("the root cannot be the target")?;
    let mut v = doc;
    for token in init {
        v = match v {
            Value::Object(m) => m.get_mut(token),
            Value::Array(a) => token.parse::<usize>().ok().and_then(|i| a.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| format!("parent of /{} does not exist", path.join("/")))?;
    }
    Ok((v, last))
}

fn add(doc: &mut Value, path: &[String], value: Value) -> Result<(), String> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    match parent(doc, path)? {
        (Value::Object(m), key) => {
            m.insert(key.to_owned(), value);
            Ok(())
        }
        (Value::Array(a), "-") => {
            a.push(value);
            Ok(())
        }
        (Value::Array(a), index) => match index.parse::<usize>() {
            Ok(i) if i <= a.len() => {
                a.insert(i, value);
                Ok(())
            }
            _ => Err(format!("array index {index:?} out of range")),
        },
        _ => Err(format!("cannot add below a scalar at /{}", path.join("/"))),
    }
}

fn remove(doc: &mut Value, path: &[String]) -> Result<Value, String> {
    let missing = || format!("path /{} does not exist", path.join("/"));
    match parent(doc, path)? {
        (Value::Object(m), key) => m.remove(key).ok_or_else(missing),
        (Value::Array(a), index) => match index.parse::<usize>() {
            Ok(i) if i < a.len() => Ok(a.remove(i)),
            _ => Err(missing()),
        },
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn operations_follow_rfc6902() {
        let mut doc = json!({"metadata": {"labels": {"a/b": "1"}}, "l": [1, 2]});
        let patch = json!([
            {"op": "add", "path": "/metadata/labels/new", "value": "x"},
            {"op": "remove", "path": "/metadata/labels/a~1b"},
            {"op": "replace", "path": "/l/0", "value": 9},
            {"op": "add", "path": "/l/-", "value": 3},
            {"op": "copy", "from": "/l", "path": "/m"},
            {"op": "move", "from": "/m", "path": "/n"},
            {"op": "test", "path": "/n/2", "value": 3}
        ]);
        super::apply(&mut doc, &patch).unwrap();
        assert_eq!(
            doc,
            json!({"metadata": {"labels": {"new": "x"}}, "l": [9, 2, 3], "n": [9, 2, 3]})
        );
    }

    #[test]
    fn a_failing_operation_leaves_the_document_unchanged() {
        let mut doc = json!({"a": 1});
        let patch = json!([{"op": "replace", "path": "/a", "value": 2}, {"op": "remove", "path": "/missing"}]);
        let err = super::apply(&mut doc, &patch).unwrap_err();
        assert!(matches!(err, super::PatchError::Operation { index: 1, .. }));
        assert_eq!(doc, json!({"a": 1}));
    }
}
