//! What HNS answers: `hcn::schema::decode` (the decoder the HCN client runs on every
//! `HcnQuery*Properties` and `HcnEnumerate*` output) for networks, endpoints, namespaces and ID
//! lists, and the error-record decoding. The first byte picks the document type, the rest is the
//! text. Never panics; a document that decodes re-encodes (as the client sends documents) to
//! text that decodes to the same value, less the read-only keys the client never sends
//! (a network's `Extensions`, an endpoint's `HostComputeNamespace`, a namespace's `NamespaceId`
//! and `Resources`).
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
/// `sent` clears the read-only parts (what encoding leaves out).
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(
    text: &str,
    read: fn(&str) -> serde_json::Result<T>,
    sent: fn(&mut T),
) {
    let Ok(mut document) = read(text) else { return };
    let encoded = serde_json::to_string(&document).expect("a decoded document encodes");
    let again = read(&encoded).expect("a re-encoded document decodes");
    sent(&mut document);
    assert_eq!(again, document, "decode(encode(d)) != d for {encoded}");
}

fn network_sent(network: &mut HostComputeNetwork) {
    network.extensions.clear();
}

fn endpoint_sent(endpoint: &mut HostComputeEndpoint) {
    endpoint.host_compute_namespace = None;
}

fn namespace_sent(namespace: &mut HostComputeNamespace) {
    namespace.namespace_id = 0;
    namespace.resources.clear();
}

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match kind % 5 {
        0 => round_trip(text, decode::<HostComputeNetwork>, network_sent),
        1 => round_trip(text, decode::<HostComputeEndpoint>, endpoint_sent),
        2 => round_trip(text, decode::<HostComputeNamespace>, namespace_sent),
        3 => round_trip(text, decode::<Option<Vec<Guid>>>, |_| {}),
        // The client reads a failed call's error record with plain serde_json.
        _ => round_trip(text, |t| serde_json::from_str::<ErrorRecord>(t), |_| {}),
    }
});
