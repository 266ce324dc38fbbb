//! OXM matches: `Match::parse` on arbitrary bytes never panics, and a decoded match re-encodes
//! to bytes that decode to the same match.
#![no_main]

use libfuzzer_sys::fuzz_target;
use openflow::oxm::Match;

fuzz_target!(|data: &[u8]| {
    let Ok((m, used)) = Match::parse(data) else {
        return;
    };
    assert!(used <= data.len());
    let mut bytes = Vec::new();
    m.emit(&mut bytes);
    let (again, _) = Match::parse(&bytes).expect("a re-encoded match decodes");
    assert_eq!(again, m, "decode(encode(m)) != m");
});
