//! OVSDB data, monitor updates and schemas from arbitrary JSON: the parsers never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let _ = ovsdb::data::Value::parse(&json);
    let _ = ovsdb::data::Row::parse(&json);
    let _ = ovsdb::monitor::Updates::parse(&json, true);
    let _ = ovsdb::monitor::Updates::parse(&json, false);
    let _ = ovsdb::schema::DatabaseSchema::parse(&json);
});
