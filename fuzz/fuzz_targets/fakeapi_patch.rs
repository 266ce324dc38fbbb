//! PATCH bodies as the fake API server applies them: `fakeapi::PatchType::apply` for merge,
//! strategic-merge and JSON patches on arbitrary bodies never panics. The first byte picks the
//! type; the rest is the target object's JSON, a NUL, then the patch body. A merge patch is
//! idempotent (RFC 7386: applying it twice gives the result of applying it once); a JSON patch
//! is all or nothing: when it fails, the target is unchanged.
#![no_main]

use fakeapi::PatchType;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&kind, rest)) = data.split_first() else {
        return;
    };
    let mut parts = rest.splitn(2, |&b| b == 0);
    let (Some(target), Some(patch)) = (parts.next(), parts.next()) else {
        return;
    };
    let Ok(original) = serde_json::from_slice::<Value>(target) else {
        return;
    };
    let patch_type = match kind % 3 {
        0 => PatchType::Merge,
        1 => PatchType::StrategicMerge,
        _ => PatchType::Json,
    };
    let mut patched = original.clone();
    match patch_type.apply(&mut patched, patch) {
        Ok(()) if patch_type != PatchType::Json => {
            let mut twice = patched.clone();
            patch_type
                .apply(&mut twice, patch)
                .expect("a merge patch that applied applies again");
            assert_eq!(twice, patched, "merge patch is not idempotent");
        }
        Ok(()) => {}
        Err(_) => assert_eq!(patched, original, "a failed patch changed the target"),
    }
});
