//! Property tests: OVSDB values and rows round-trip through their JSON text exactly, and the
//! framing decoder yields the same messages however the byte stream is split, and never panics
//! on arbitrary bytes.

use bytes::BytesMut;
use ovsdb::data::{Atom, Row, Uuid, Value};
use ovsdb::wire::{FrameDecoder, Message, decode_messages};
use proptest::prelude::*;
use serde_json::Value as Json;

fn atom() -> impl Strategy<Value = Atom> {
    prop_oneof![
        any::<i64>().prop_map(Atom::Integer),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Atom::Real),
        any::<bool>().prop_map(Atom::Boolean),
        any::<String>().prop_map(Atom::String),
        any::<[u8; 16]>().prop_map(|b| Atom::Uuid(Uuid(b))),
        "[a-zA-Z_][a-zA-Z0-9_]{0,12}".prop_map(Atom::NamedUuid),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        atom().prop_map(Value::Atom),
        prop::collection::vec(atom(), 0..6).prop_map(Value::Set),
        prop::collection::vec((atom(), atom()), 0..6).prop_map(Value::Map),
    ]
}

fn row() -> impl Strategy<Value = Row> {
    prop::collection::btree_map("[a-z_]{1,8}", value(), 0..6).prop_map(Row)
}

/// JSON-RPC messages whose strings contain the characters that matter to framing.
fn message() -> impl Strategy<Value = Message> {
    let text = r#"[a-z{}\[\]"\\ ]{0,12}"#;
    let params = prop::collection::vec(
        prop_oneof![text.prop_map(Json::from), row().prop_map(|r| r.to_json())],
        0..4,
    );
    prop_oneof![
        (text, params.clone(), any::<u32>()).prop_map(|(method, params, id)| Message::Request {
            method,
            params,
            id: Json::from(id)
        }),
        (text, params.clone())
            .prop_map(|(method, params)| Message::Notification { method, params }),
        (any::<u32>(), row()).prop_map(|(id, r)| Message::Response {
            id: Json::from(id),
            result: Ok(r.to_json())
        }),
        (any::<u32>(), text).prop_map(|(id, e)| Message::Response {
            id: Json::from(id),
            result: Err(Json::from(e))
        }),
    ]
}

proptest! {
    #[test]
    fn values_round_trip_through_json_text(v in value()) {
        let text = serde_json::to_string(&v).unwrap();
        let back: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, v);
    }

    #[test]
    fn rows_round_trip_through_json_text(r in row()) {
        let json: Json = serde_json::from_str(&r.to_json().to_string()).unwrap();
        prop_assert_eq!(Row::parse(&json).unwrap(), r);
    }

    #[test]
    fn uuids_round_trip_through_text(b in any::<[u8; 16]>()) {
        prop_assert_eq!(Uuid(b).to_string().parse::<Uuid>().unwrap(), Uuid(b));
    }

    #[test]
    fn framing_is_independent_of_how_bytes_arrive(messages in prop::collection::vec(message(), 1..4), ws in "[ \n\t]{0,2}") {
        let mut stream = Vec::new();
        for m in &messages {
            stream.extend_from_slice(&m.emit());
            stream.extend_from_slice(ws.as_bytes());
        }
        for split in 0..=stream.len() {
            let mut decoder = FrameDecoder::default();
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            for part in [&stream[..split], &stream[split..]] {
                buf.extend_from_slice(part);
                while let Some(json) = decoder.decode(&mut buf).unwrap() {
                    got.push(Message::parse(json).unwrap());
                }
            }
            decoder.finish(&buf).unwrap();
            prop_assert_eq!(&got, &messages, "split at {}", split);
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_messages(&bytes, 256);
    }

    #[test]
    fn json_shaped_noise_never_panics(text in r#"[{}\[\]":,a-z0-9\\ ]{0,200}"#) {
        let _ = decode_messages(text.as_bytes(), 1 << 16);
        if let Ok(json) = serde_json::from_str::<Json>(&text) {
            let _ = Value::parse(&json);
            let _ = Row::parse(&json);
            let _ = ovsdb::monitor::Updates::parse(&json, true);
            let _ = ovsdb::monitor::Updates::parse(&json, false);
            let _ = ovsdb::schema::DatabaseSchema::parse(&json);
        }
    }
}
