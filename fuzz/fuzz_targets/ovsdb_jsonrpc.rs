//! The OVSDB JSON-RPC stream decoder on arbitrary bytes: never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ovsdb::wire::decode_messages(data, 1 << 20);
});
