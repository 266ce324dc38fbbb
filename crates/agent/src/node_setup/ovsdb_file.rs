//! A new Open vSwitch database file, as `ovsdb-tool create <db> <schema>` writes it: the OVSDB
//! standalone log format with one record, the schema. A record is a header line
//! `OVSDB JSON <length> <sha1>` and then `<length>` bytes, the JSON text and a newline, whose
//! SHA-1 the header gives in hex. ovsdb-server starts on such a file with an empty database.

use ring::digest::{SHA1_FOR_LEGACY_USE_ONLY, digest};

/// A failure reading the schema.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// Not JSON.
    #[error("the OVSDB schema is not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// JSON but no schema: no `name` or no `tables` object.
    #[error("the OVSDB schema has no {0}")]
    NotASchema(&'static str),
}

/// The database file for `schema` (the JSON text of an `.ovsschema` file), its JSON compacted.
pub fn create(schema: &[u8]) -> Result<Vec<u8>, SchemaError> {
    let schema: serde_json::Value = serde_json::from_slice(schema)?;
    if !schema.get("name").is_some_and(serde_json::Value::is_string) {
        return Err(SchemaError::NotASchema("name"));
    }
    if !schema
        .get("tables")
        .is_some_and(serde_json::Value::is_object)
    {
        return Err(SchemaError::NotASchema("tables"));
    }
    let mut record = serde_json::to_vec(&schema)?;
    record.push(b'\n');
    let sha1: String = digest(&SHA1_FOR_LEGACY_USE_ONLY, &record)
        .as_ref()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let mut file = format!("OVSDB JSON {} {sha1}\n", record.len()).into_bytes();
    file.extend(record);
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_record_with_its_length_and_sha1() {
        let file = create(br#"{ "name": "t", "version": "1.0.0", "tables": {} }"#).unwrap();
        let json = br#"{"name":"t","tables":{},"version":"1.0.0"}"#;
        let mut record = json.to_vec();
        record.push(b'\n');
        // sha1sum of the record.
        let expected = format!(
            "OVSDB JSON {} 17a16a8cb53c8bceb0fc07f2ee9bd67f853ae6d3\n",
            record.len()
        );
        assert_eq!(
            String::from_utf8_lossy(&file[..expected.len()]),
            expected,
            "{}",
            String::from_utf8_lossy(&file)
        );
        assert_eq!(&file[expected.len()..], record);
    }

    #[test]
    fn what_is_not_a_schema_is_refused() {
        assert!(matches!(create(b"{"), Err(SchemaError::Json(_))));
        assert!(matches!(
            create(br#"{"tables":{}}"#),
            Err(SchemaError::NotASchema("name"))
        ));
        assert!(matches!(
            create(br#"{"name":"x"}"#),
            Err(SchemaError::NotASchema("tables"))
        ));
    }
}
