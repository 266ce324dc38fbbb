//! The OVSDB JSON-RPC stream decoder on arbitrary bytes: never panics, and the messages it
//! decodes, emitted back to back (`Message::emit`), decode to the same messages.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(messages) = ovsdb::wire::decode_messages(data, 1 << 20) else {
        return;
    };
    let stream: Vec<u8> = messages.iter().flat_map(|m| m.emit()).collect();
    let again = ovsdb::wire::decode_messages(&stream, usize::MAX).expect("emitted messages decode");
    assert_eq!(again, messages, "decode(emit(messages)) != messages");
});
