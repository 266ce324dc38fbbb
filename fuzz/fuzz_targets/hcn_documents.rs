//! What HNS answers: `hcn::schema::decode` (the decoder the HCN client runs on every
//! `HcnQuery*Properties` and `HcnEnumerate*` output) for networks, endpoints, namespaces and ID
//! lists, and the error-record decoding. The first byte picks the document type, the rest is the
//! text. Never panics; a document that decodes re-encodes (as the client sends documents) to
//! text that decodes to the same value.
//! (The error record is read with `serde_json::from_str`, as the client reads it.)
#![no_main]

use std::fmt::Debug;

use hcn::Guid;
use hcn::schema::{
    ErrorRecord, HostComputeEndpoint, HostComputeNamespace, HostComputeNetwork, decode,
};
use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Decodes `text` with `read`, re-encodes it, and checks `read` gives the same value back.
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(
    text: &str,
    read: fn(&str) -> serde_json::Result<T>,
) {
    let Ok(document) = read(text) else { return };
    let encoded = serde_json::to_string(&document).expect("a decoded document encodes");
    let again = read(&encoded).expect("a re-encoded document decodes");
    assert_eq!(again, document, "decode(encode(d)) != d for {encoded}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match kind % 5 {
        0 => round_trip(text, decode::<HostComputeNetwork>),
        1 => round_trip(text, decode::<HostComputeEndpoint>),
        2 => round_trip(text, decode::<HostComputeNamespace>),
        3 => round_trip(text, decode::<Option<Vec<Guid>>>),
        // The client reads a failed call's error record with plain serde_json.
        _ => round_trip(text, |t| serde_json::from_str::<ErrorRecord>(t)),
    }
});
