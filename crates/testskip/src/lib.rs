//! The one way a test may skip itself: [`skip`]. A test that cannot run here (no second user to
//! switch to, not under Wine) calls it and returns. In strict mode (`ANTREA_TEST_STRICT=1`, set
//! by `scripts/test.sh`) the skip is a failure instead; otherwise it is written to the file
//! named by `ANTREA_TEST_SKIP_LOG`, one line per skip, so the suite's summary can count it.

use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

/// The environment variable that turns every skip into a failure when it is `1`.
pub const STRICT: &str = "ANTREA_TEST_STRICT";
/// The environment variable naming the file skips are appended to.
pub const SKIP_LOG: &str = "ANTREA_TEST_SKIP_LOG";

/// Records that `test` cannot run here because of `reason`; the caller returns right after.
/// Panics in strict mode, naming the test and the reason.
pub fn skip(test: &str, reason: &str) {
    let strict = std::env::var_os(STRICT);
    let log = std::env::var_os(SKIP_LOG);
    if let Err(failure) = record(
        test,
        reason,
        strict.as_deref(),
        log.as_deref().map(Path::new),
    ) {
        panic!("{failure}");
    }
    eprintln!("skipped: {test}: {reason}");
}

/// What [`skip`] does with the values of [`STRICT`] and [`SKIP_LOG`]: an error (the test must
/// fail) in strict mode or when the skip cannot be recorded.
fn record(
    test: &str,
    reason: &str,
    strict: Option<&OsStr>,
    log: Option<&Path>,
) -> Result<(), String> {
    if strict == Some(OsStr::new("1")) {
        return Err(format!(
            "{test} cannot run here ({reason}), and {STRICT}=1 makes a skip a failure"
        ));
    }
    let Some(path) = log else { return Ok(()) };
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(format!("{test}: {reason}\n").as_bytes()))
        .map_err(|error| {
            format!(
                "{test}: the skip could not be recorded in {}: {error}",
                path.display()
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_fails_in_strict_mode_and_is_counted_otherwise() {
        let log = std::env::temp_dir().join(format!("testskip-{}.log", std::process::id()));
        let _ = std::fs::remove_file(&log);
        let strict = record("t", "no peer", Some(OsStr::new("1")), Some(&log)).unwrap_err();
        assert!(strict.contains("t cannot run here (no peer)"), "{strict}");
        assert!(
            !log.exists(),
            "a strict skip is a failure, not a recorded skip"
        );
        record("t", "no peer", None, Some(&log)).unwrap();
        record("u", "not root", Some(OsStr::new("0")), Some(&log)).unwrap();
        record("v", "unlogged", None, None).unwrap();
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "t: no peer\nu: not root\n"
        );
        std::fs::remove_file(&log).unwrap();
        let unwritable = record("w", "x", None, Some(Path::new("/nonexistent-dir/skips")));
        assert!(unwritable.unwrap_err().contains("could not be recorded"));
    }
}
