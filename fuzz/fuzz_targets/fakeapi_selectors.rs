//! The fake API server's `labelSelector` and `fieldSelector` query parameters:
//! `fakeapi::LabelSelector::parse` / `FieldSelector::parse` on arbitrary text never panic, and a
//! selector that parses is a conjunction: the selector `a,b` matches an object exactly when `a`
//! and `b` both do. The input is the selector text, a NUL, a second selector, a NUL, then the
//! object's JSON (labels and fields to match against).
#![no_main]

use fakeapi::{FieldSelector, LabelSelector};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// Whether `text` splits into parts at top-level commas only (no parenthesised sets, whose
/// commas are not separators).
fn plain(text: &str) -> bool {
    !text.contains(['(', ')'])
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let (Some(first), Some(second), Some(object)) = (parts.next(), parts.next(), parts.next())
    else {
        return;
    };
    let (Ok(first), Ok(second)) = (std::str::from_utf8(first), std::str::from_utf8(second)) else {
        return;
    };
    let object: Value = serde_json::from_slice(object).unwrap_or(Value::Null);
    let both = format!("{first},{second}");
    let labels = (
        LabelSelector::parse(first),
        LabelSelector::parse(second),
        LabelSelector::parse(&both),
    );
    if let (Ok(a), Ok(b), Ok(ab)) = &labels {
        if plain(first) && plain(second) {
            assert_eq!(
                ab.matches(&object),
                a.matches(&object) && b.matches(&object),
                "label selector {both:?} is not the conjunction of its parts"
            );
        }
    }
    if let (Ok(a), Ok(b)) = (FieldSelector::parse(first), FieldSelector::parse(second)) {
        let ab = FieldSelector::parse(&both).expect("two valid field selectors joined parse");
        assert_eq!(
            ab.matches(&object),
            a.matches(&object) && b.matches(&object),
            "field selector {both:?} is not the conjunction of its parts"
        );
    }
});
