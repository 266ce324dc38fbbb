//! The protocol's wire: one server-streaming gRPC method,
//! `antrears.controlplane.v1.NetworkPolicySpan/Watch`, taking a [`WatchRequest`] and returning a
//! stream of [`WatchEvent`]s. Messages are JSON (the serde forms of the content types, the same
//! encoding an agent persists) in gRPC's length-prefixed framing, through [`ServerCodec`] and
//! [`ClientCodec`] instead of protobuf.
//!
//! Decoding checks what the types cannot say: a request names a Node by a DNS-1123 subdomain,
//! an event's snapshot is a [`NodeView`](crate::NodeView) its updates could have built (checked
//! by the view's own deserialization), an update batch is not empty. Sizes are bounded by
//! tonic's message limits ([`MAX_REQUEST_BYTES`], [`MAX_EVENT_BYTES`]). Nothing here panics on
//! any input.

use std::marker::PhantomData;
use std::sync::Arc;

use bytes::{Buf, BufMut};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tonic::Status;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};

use crate::Delivery;

/// The gRPC service's full name.
pub const SERVICE: &str = "antrears.controlplane.v1.NetworkPolicySpan";
/// The `Watch` method's path.
pub const WATCH_PATH: &str = "/antrears.controlplane.v1.NetworkPolicySpan/Watch";
/// The largest request the controller reads.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024;
/// The largest event either side encodes or decodes (a snapshot of a large span).
pub const MAX_EVENT_BYTES: usize = 64 * 1024 * 1024;

/// Where a reconnecting watcher left off: the controller run and the version of the last event
/// it received.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resume {
    pub epoch: u64,
    pub version: u64,
}

/// What an agent asks for: its Node's span, from nothing or from where it left off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchRequest {
    pub node: String,
    #[serde(default)]
    pub resume: Option<Resume>,
}

/// One message of a watch: a delivery, with the controller run that sent it (`epoch`, random at
/// each start) and its place among the Node's messages (`version`, increasing within a run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchEvent {
    pub epoch: u64,
    pub version: u64,
    pub delivery: Delivery,
}

/// Why bytes are not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("malformed {what}: {reason}")]
    Malformed { what: &'static str, reason: String },
    #[error("invalid {what}: {reason}")]
    Invalid { what: &'static str, reason: String },
}

/// A protocol message: its name in errors, and the checks its decoding adds to serde's.
pub trait Message: Serialize + DeserializeOwned {
    const NAME: &'static str;
    fn check(&self) -> Result<(), String>;
}

impl Message for WatchRequest {
    const NAME: &'static str = "WatchRequest";
    fn check(&self) -> Result<(), String> {
        check_node_name(&self.node)
    }
}

impl Message for WatchEvent {
    const NAME: &'static str = "WatchEvent";
    fn check(&self) -> Result<(), String> {
        match &self.delivery {
            Delivery::Updates(updates) if updates.is_empty() => {
                Err("an update batch without updates".to_owned())
            }
            _ => Ok(()),
        }
    }
}

/// Decodes and checks one message.
pub fn decode<M: Message>(bytes: &[u8]) -> Result<M, DecodeError> {
    let message: M = serde_json::from_slice(bytes).map_err(|e| DecodeError::Malformed {
        what: M::NAME,
        reason: e.to_string(),
    })?;
    message.check().map_err(|reason| DecodeError::Invalid {
        what: M::NAME,
        reason,
    })?;
    Ok(message)
}

/// Encodes one message.
pub fn encode<M: Serialize>(message: &M) -> Vec<u8> {
    serde_json::to_vec(message).unwrap_or_default()
}

/// Whether `name` is a DNS-1123 subdomain, as Kubernetes requires of a Node's name: at most 253
/// characters, dot-separated labels of lower-case letters, digits and `-`, each starting and
/// ending with a letter or digit.
pub fn check_node_name(name: &str) -> Result<(), String> {
    let refuse = |why: &str| {
        Err(format!(
            "Node name {name:?} is not a DNS-1123 subdomain: {why}"
        ))
    };
    if name.is_empty() {
        return refuse("it is empty");
    }
    if name.len() > 253 {
        return refuse("it is longer than 253 characters");
    }
    for label in name.split('.') {
        let alphanumeric = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        let bytes = label.as_bytes();
        match (bytes.first(), bytes.last()) {
            (Some(&first), Some(&last)) if alphanumeric(first) && alphanumeric(last) => {}
            _ => return refuse("a part is empty or does not start and end with [a-z0-9]"),
        }
        if !bytes.iter().all(|&c| alphanumeric(c) || c == b'-') {
            return refuse("only [a-z0-9.-] are allowed");
        }
    }
    Ok(())
}

/// The controller's codec: events out (shared with the resume log and other watchers), requests
/// in. A request that does not decode reaches the handler as an error, so that the handler
/// logs it with its peer.
#[derive(Debug, Default, Clone, Copy)]
pub struct ServerCodec;

/// The agent's codec: requests out, events in.
#[derive(Debug, Default, Clone, Copy)]
pub struct ClientCodec;

impl Codec for ServerCodec {
    type Encode = Arc<WatchEvent>;
    type Decode = Result<WatchRequest, DecodeError>;
    type Encoder = JsonEncoder<Arc<WatchEvent>>;
    type Decoder = LenientDecoder<WatchRequest>;

    fn encoder(&mut self) -> Self::Encoder {
        JsonEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        LenientDecoder(PhantomData)
    }
}

impl Codec for ClientCodec {
    type Encode = WatchRequest;
    type Decode = WatchEvent;
    type Encoder = JsonEncoder<WatchRequest>;
    type Decoder = StrictDecoder<WatchEvent>;

    fn encoder(&mut self) -> Self::Encoder {
        JsonEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        StrictDecoder(PhantomData)
    }
}

/// Writes a message as JSON.
#[derive(Debug)]
pub struct JsonEncoder<E>(PhantomData<fn(E)>);

impl<E: Serialize> Encoder for JsonEncoder<E> {
    type Item = E;
    type Error = Status;

    fn encode(&mut self, item: E, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        serde_json::to_writer(dst.writer(), &item)
            .map_err(|e| Status::internal(format!("cannot encode a message: {e}")))
    }
}

/// Reads a message, failing the stream with `INVALID_ARGUMENT` when it does not decode.
#[derive(Debug)]
pub struct StrictDecoder<M>(PhantomData<fn() -> M>);

impl<M: Message> Decoder for StrictDecoder<M> {
    type Item = M;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<M>, Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        decode(&bytes)
            .map(Some)
            .map_err(|e| Status::invalid_argument(e.to_string()))
    }
}

/// Reads a message, handing a decoding failure on as a value.
#[derive(Debug)]
pub struct LenientDecoder<M>(PhantomData<fn() -> M>);

impl<M: Message> Decoder for LenientDecoder<M> {
    type Item = Result<M, DecodeError>;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Self::Item>, Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        Ok(Some(decode(&bytes)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NodeUpdate, NodeView};

    #[test]
    fn node_names_are_dns_1123_subdomains() {
        for good in ["n1", "node-1.example.com", "a", &"a".repeat(253)] {
            assert_eq!(check_node_name(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "N1",
            "-n",
            "n-",
            "a..b",
            ".a",
            "a_b",
            "ä",
            &"a".repeat(254),
        ] {
            assert!(check_node_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_request_reads_back_and_a_bad_one_is_refused() {
        let request = WatchRequest {
            node: "n1".into(),
            resume: Some(Resume {
                epoch: u64::MAX,
                version: 7,
            }),
        };
        assert_eq!(decode::<WatchRequest>(&encode(&request)), Ok(request));
        let without: WatchRequest = decode(br#"{"node":"n2"}"#).unwrap();
        assert_eq!(without.resume, None);
        for (bytes, error) in [
            (&br#"{"node":"N2"}"#[..], "invalid WatchRequest"),
            (br#"{"node":"n2","extra":1}"#, "malformed WatchRequest"),
            (
                br#"{"node":"n2","resume":{"epoch":-1,"version":0}}"#,
                "malformed",
            ),
            (b"\xff\x00", "malformed"),
            (b"", "malformed"),
        ] {
            let got = decode::<WatchRequest>(bytes).unwrap_err().to_string();
            assert!(got.contains(error), "{got}");
        }
    }

    #[test]
    fn an_event_with_an_impossible_snapshot_or_no_updates_is_refused() {
        let event = WatchEvent {
            epoch: 1,
            version: 2,
            delivery: Delivery::Snapshot(NodeView::default()),
        };
        assert_eq!(decode::<WatchEvent>(&encode(&event)), Ok(event));
        let empty = br#"{"epoch":1,"version":2,"delivery":{"updates":[]}}"#;
        assert!(
            decode::<WatchEvent>(empty)
                .unwrap_err()
                .to_string()
                .contains("without updates")
        );
        let removal = WatchEvent {
            epoch: 1,
            version: 3,
            delivery: Delivery::Updates(vec![NodeUpdate::PolicyRemoved(
                model::policy::PolicyKey::new("ns", "p"),
            )]),
        };
        assert_eq!(decode::<WatchEvent>(&encode(&removal)), Ok(removal));
        // A policy reading a group the snapshot lacks.
        let policy = netpol::input::CompiledPolicy {
            key: model::policy::PolicyKey::new("ns", "p"),
            applied_to: netpol::input::GroupKey {
                scope: netpol::input::Scope::Namespace("ns".into()),
                pods: netpol::selector::Selector::with_labels([("app", "web")]),
            },
            ingress: Some(vec![]),
            egress: None,
        };
        let orphan = serde_json::json!({"epoch": 1, "version": 2, "delivery":
            {"snapshot": {"groups": [], "policies": [policy]}}});
        let error = decode::<WatchEvent>(orphan.to_string().as_bytes()).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("a group the policy reads is missing"),
            "{error}"
        );
        assert!(matches!(error, DecodeError::Malformed { .. }), "{error}");
    }
}
