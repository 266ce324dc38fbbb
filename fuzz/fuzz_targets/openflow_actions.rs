//! Action lists and instructions: `parse_actions` and `Instructions::parse` on arbitrary bytes
//! never panic, and what decodes re-encodes to bytes that decode to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use openflow::action::{Instructions, emit_actions, parse_actions};

fuzz_target!(|data: &[u8]| {
    if let Ok(actions) = parse_actions(data) {
        let mut bytes = Vec::new();
        emit_actions(&actions, &mut bytes);
        let again = parse_actions(&bytes).expect("re-encoded actions decode");
        assert_eq!(again, actions, "decode(encode(actions)) != actions");
    }
    if let Ok(instructions) = Instructions::parse(data) {
        let mut bytes = Vec::new();
        instructions.emit(&mut bytes);
        let again = Instructions::parse(&bytes).expect("re-encoded instructions decode");
        assert_eq!(
            again, instructions,
            "decode(encode(instructions)) != instructions"
        );
    }
});
