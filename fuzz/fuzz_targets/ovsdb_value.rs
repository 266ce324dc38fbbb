//! OVSDB data, monitor updates and schemas from arbitrary JSON: the parsers never panic, and a
//! value or row that parses prints (`to_json`) to JSON that parses to the same value or row.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovsdb::data::{Row, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Ok(value) = Value::parse(&json) {
        let again = Value::parse(&value.to_json()).expect("a printed value parses");
        assert_eq!(again, value, "parse(print(value)) != value");
    }
    if let Ok(row) = Row::parse(&json) {
        let again = Row::parse(&row.to_json()).expect("a printed row parses");
        assert_eq!(again, row, "parse(print(row)) != row");
    }
    let _ = ovsdb::monitor::Updates::parse(&json, true);
    let _ = ovsdb::monitor::Updates::parse(&json, false);
    let _ = ovsdb::schema::DatabaseSchema::parse(&json);
});
