//! Where the agent's logs go: the console (stderr), a log file, or both, as two layers of one
//! `tracing` subscriber under one filter (`RUST_LOG`, default `info`). The file is appended to
//! and never rotated.

use std::fs::{File, OpenOptions};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The log file of the agent run as a Windows service when `--log-file` is not given: Antrea's
/// log directory (`C:\var\log\antrea`).
pub const SERVICE_LOG_FILE: &str = r"C:\var\log\antrea\antrea-agent.log";

/// Where to write logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogTargets {
    /// Log to stderr (with colours when it is a terminal).
    pub console: bool,
    /// Append to this file (its directory is created).
    pub file: Option<PathBuf>,
}

/// The log file could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open log file {path}: {source}")]
pub struct LogFileError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// The subscriber writing to `targets`, for [`init`] or a scoped `tracing::subscriber::with_default`.
pub fn subscriber(
    targets: &LogTargets,
) -> Result<impl tracing::Subscriber + Send + Sync + 'static, LogFileError> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let console = targets.console.then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .with_target(false)
    });
    let file = match &targets.file {
        Some(path) => {
            let file = open_append(path)?;
            Some(
                tracing_subscriber::fmt::layer()
                    .with_writer(Arc::new(file))
                    .with_ansi(false)
                    .with_target(false),
            )
        }
        None => None,
    };
    Ok(tracing_subscriber::registry()
        .with(filter)
        .with(console)
        .with(file))
}

/// Installs the process's subscriber writing to `targets`.
pub fn init(targets: &LogTargets) -> Result<(), LogFileError> {
    subscriber(targets)?.init();
    Ok(())
}

/// Opens `path` for appending, creating it and its directory.
fn open_append(path: &Path) -> Result<File, LogFileError> {
    let error = |source| LogFileError {
        path: path.to_owned(),
        source,
    };
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(error)?;
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_layer_appends_plain_lines_and_creates_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs/antrea/antrea-agent.log");
        let targets = LogTargets {
            console: false,
            file: Some(path.clone()),
        };
        for run in ["first", "second"] {
            let subscriber = subscriber(&targets).unwrap();
            tracing::subscriber::with_default(subscriber, || {
                tracing::info!("{run} run");
                tracing::debug!("not at the default level");
            });
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].ends_with(" INFO first run"), "{text}");
        assert!(lines[1].ends_with(" INFO second run"), "{text}");
        assert!(
            !text.contains('\u{1b}'),
            "no colour codes in the file: {text}"
        );
    }

    #[test]
    fn an_unusable_log_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let error = subscriber(&LogTargets {
            console: true,
            file: Some(dir.path().to_owned()),
        })
        .err()
        .expect("a directory is not a log file");
        assert_eq!(error.path, dir.path());
        assert!(
            error
                .to_string()
                .starts_with(&format!("cannot open log file {}: ", dir.path().display())),
            "{error}"
        );
    }
}
