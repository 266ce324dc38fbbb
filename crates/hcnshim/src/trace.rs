//! [`Trace`]: one [`Entry`] per export call, appended as a JSON line to the file named by
//! [`TRACE_ENV`] when it is set. Tests read it back ([`read`]) to see which exports the client
//! called, in order, and that every handle it got was closed.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The environment variable naming the trace file.
pub const TRACE_ENV: &str = "ANTREA_HCN_SHIM_TRACE";

/// One export call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The calling process.
    pub pid: u32,
    /// The export, e.g. `HcnOpenNetwork`.
    pub export: String,
    /// The handle the call returned (open, create) or was given (query, modify, close).
    pub handle: Option<usize>,
    /// The HRESULT it returned.
    pub hresult: u32,
}

/// Where entries go: the file named by [`TRACE_ENV`], or nowhere.
#[derive(Debug)]
pub struct Trace(Option<PathBuf>);

impl Trace {
    /// The file named by [`TRACE_ENV`], if set.
    pub fn from_env() -> Self {
        Trace(
            std::env::var_os(TRACE_ENV)
                .filter(|path| !path.is_empty())
                .map(PathBuf::from),
        )
    }

    /// Appends one entry. A trace that cannot be written is reported on stderr and does not
    /// fail the call: the trace is for tests, which then miss the entry and fail.
    pub fn record(&self, export: &str, handle: Option<usize>, hresult: u32) {
        let Some(path) = &self.0 else { return };
        let entry = Entry {
            pid: std::process::id(),
            export: export.to_owned(),
            handle,
            hresult,
        };
        let appended = serde_json::to_string(&entry)
            .map_err(io::Error::other)
            .and_then(|line| {
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?
                    .write_all(format!("{line}\n").as_bytes())
            });
        if let Err(e) = appended {
            eprintln!(
                "computenetwork shim: cannot append to {}: {e}",
                path.display()
            );
        }
    }
}

/// The entries of the trace file `path`, in order; none when it does not exist.
pub fn read(path: &Path) -> io::Result<Vec<Entry>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    text.lines()
        .map(|line| {
            serde_json::from_str(line).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_appended_and_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.jsonl");
        let trace = Trace(Some(path.clone()));
        trace.record("HcnOpenNetwork", Some(1), 0);
        trace.record("HcnCloseNetwork", Some(1), 0x8007_0006);
        let entries = read(&path).unwrap();
        assert_eq!(
            entries
                .iter()
                .map(|e| (e.export.as_str(), e.handle, e.hresult))
                .collect::<Vec<_>>(),
            [
                ("HcnOpenNetwork", Some(1), 0),
                ("HcnCloseNetwork", Some(1), 0x8007_0006)
            ]
        );
        assert!(entries.iter().all(|e| e.pid == std::process::id()));
        assert!(read(&dir.path().join("none")).unwrap().is_empty());
    }
}
