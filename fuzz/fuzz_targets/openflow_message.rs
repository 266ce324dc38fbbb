//! Whole OpenFlow messages: `AnyMessage::parse` on arbitrary bytes never panics, and a message
//! that decodes re-encodes to bytes that decode to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use openflow::msg::any::AnyMessage;

fuzz_target!(|data: &[u8]| {
    let Ok((header, msg)) = AnyMessage::parse(data) else {
        return;
    };
    let mut bytes = Vec::new();
    // Decoded messages came in at most 65535 bytes; a re-encoding may still grow (a default
    // made explicit), so a refusal is allowed, a panic is not.
    if msg.emit(header.xid, &mut bytes).is_err() {
        return;
    }
    let (again_header, again) = AnyMessage::parse(&bytes).expect("a re-encoded message decodes");
    assert_eq!(again_header.xid, header.xid);
    assert_eq!(again, msg, "decode(encode(m)) != m");
});
