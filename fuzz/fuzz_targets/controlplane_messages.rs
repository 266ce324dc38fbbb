//! The agent–controller protocol's messages as `controlplane::wire::decode` reads them off the
//! wire (the codecs of both ends call it): the first byte picks the message (even: a
//! `WatchRequest`, as the controller reads it; odd: a `WatchEvent`, as an agent reads it), the
//! rest is its JSON. Never panics; a decoded message passed its checks (a DNS-1123 Node name, a
//! snapshot its updates could have built, no empty update batch), re-encodes to bytes that
//! decode to the same message, and an event's updates can be applied to its snapshot's view or
//! to an empty one without panicking (in or out of order).
#![no_main]

use controlplane::wire::{WatchEvent, WatchRequest, check_node_name, decode, encode};
use controlplane::{Delivery, NodeView};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, json)) = data.split_first() else {
        return;
    };
    if kind % 2 == 0 {
        let Ok(request) = decode::<WatchRequest>(json) else {
            return;
        };
        assert_eq!(check_node_name(&request.node), Ok(()));
        let again = decode::<WatchRequest>(&encode(&request)).expect("a re-encoded request decodes");
        assert_eq!(again, request, "decode(encode(r)) != r");
    } else {
        let Ok(event) = decode::<WatchEvent>(json) else {
            return;
        };
        let again = decode::<WatchEvent>(&encode(&event)).expect("a re-encoded event decodes");
        assert_eq!(again, event, "decode(encode(e)) != e");
        match event.delivery {
            Delivery::Snapshot(view) => {
                let text = serde_json::to_vec(&view).expect("a view encodes");
                let back: NodeView = serde_json::from_slice(&text).expect("a view reads back");
                assert_eq!(back, view);
            }
            Delivery::Updates(updates) => {
                assert!(!updates.is_empty());
                let mut view = NodeView::default();
                for update in &updates {
                    let before = view.clone();
                    if view.apply(update).is_err() {
                        assert_eq!(view, before, "a refused update changed the view");
                    }
                }
            }
        }
    }
});
