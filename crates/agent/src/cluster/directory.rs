//! The lab's cluster source: a directory of YAML files holding Nodes, Pods, Namespaces and
//! NetworkPolicies, read again on every poll. A file that fails to decode keeps the objects it last held, so an operator editing
//! it does not see its Nodes disappear mid-edit.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::mpsc;

use super::decode::{ClusterObject, DecodeProblem, decode_documents};
use super::event::ClusterEvent;
use super::store::{Store, StoreWriter, namespace_key, node_key, pod_key, policy_key};

/// Something the directory source could not use; it carries on with everything else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceProblem {
    /// The directory could not be listed; nothing changed.
    ReadDirectory {
        /// The directory.
        dir: PathBuf,
        /// The operating system's error.
        error: String,
    },
    /// A file could not be read; it keeps the objects it last held.
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        error: String,
    },
    /// A file is malformed; it keeps the objects it last held.
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong, and in which document.
        problem: DecodeProblem,
    },
    /// A document of a kind the agent does not use was skipped.
    Skipped {
        /// The file.
        path: PathBuf,
        /// Which document, and its kind.
        problem: DecodeProblem,
    },
    /// The same object is defined in two files; the first file (by name) wins.
    Duplicate {
        /// The file whose copy is ignored.
        path: PathBuf,
        /// The object, such as `Node node1` or `Pod default/web-0`.
        object: String,
        /// The file whose copy is used.
        used: PathBuf,
    },
}

impl fmt::Display for SourceProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceProblem::ReadDirectory { dir, error } => {
                write!(
                    f,
                    "cannot list cluster directory {}: {error}",
                    dir.display()
                )
            }
            SourceProblem::ReadFile { path, error } => {
                write!(
                    f,
                    "{}: cannot read: {error}; keeping the objects it last held",
                    path.display()
                )
            }
            SourceProblem::Malformed { path, problem } => {
                write!(
                    f,
                    "{}: {problem}; keeping the objects it last held",
                    path.display()
                )
            }
            SourceProblem::Skipped { path, problem } => write!(f, "{}: {problem}", path.display()),
            SourceProblem::Duplicate { path, object, used } => {
                write!(
                    f,
                    "{}: {object} is also defined in {}, which is used",
                    path.display(),
                    used.display()
                )
            }
        }
    }
}

/// What one poll found.
#[derive(Debug, Default)]
pub struct PollOutcome {
    /// The changes, in the order [`StoreWriter::replace`] gives, then `Synced` after the first
    /// complete read.
    pub events: Vec<ClusterEvent>,
    /// What could not be used. A problem with a file's content is reported once, when the
    /// content changes; a directory or file that cannot be read is reported on every poll.
    pub problems: Vec<SourceProblem>,
}

#[derive(Debug)]
struct FileState {
    /// The content last read, to notice changes.
    content: Vec<u8>,
    /// The objects of the last content that decoded.
    objects: Vec<ClusterObject>,
}

/// Watches a directory of `*.yaml`, `*.yml` and `*.json` files (not its subdirectories; names
/// starting with `.` are ignored, as editors' temporary files are).
#[derive(Debug)]
pub struct DirectorySource {
    dir: PathBuf,
    files: BTreeMap<PathBuf, FileState>,
    writer: StoreWriter,
}

impl DirectorySource {
    /// A source over `dir`; nothing is read until the first [`poll`](Self::poll).
    pub fn new(dir: impl Into<PathBuf>) -> DirectorySource {
        DirectorySource {
            dir: dir.into(),
            files: BTreeMap::new(),
            writer: StoreWriter::new(),
        }
    }

    /// The store this source fills.
    pub fn store(&self) -> Store {
        self.writer.store()
    }

    /// Reads the directory once and applies what changed since the last poll.
    pub fn poll(&mut self) -> PollOutcome {
        let mut outcome = PollOutcome::default();
        let paths = match self.list() {
            Ok(paths) => paths,
            Err(error) => {
                outcome.problems.push(SourceProblem::ReadDirectory {
                    dir: self.dir.clone(),
                    error: error.to_string(),
                });
                return outcome;
            }
        };
        let before = self.files.len();
        self.files.retain(|path, _| paths.contains(path));
        let mut changed = before != self.files.len() || !self.writer.store().is_synced();
        for path in paths {
            changed |= self.read_file(path, &mut outcome.problems);
        }
        if changed {
            let objects = self.merged(&mut outcome.problems);
            outcome.events = self.writer.replace(objects);
        }
        outcome.events.extend(self.writer.mark_synced());
        outcome
    }

    /// Polls every `interval` (reading files on the blocking-I/O threads) and sends the events,
    /// logging problems, until the receiver is dropped.
    pub async fn run(mut self, interval: Duration, events: mpsc::Sender<ClusterEvent>) {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            let polled = tokio::task::spawn_blocking(move || {
                let outcome = self.poll();
                (self, outcome)
            });
            let outcome;
            (self, outcome) = match polled.await {
                Ok(polled) => polled,
                Err(error) => {
                    tracing::error!("cluster directory poll failed: {error}");
                    return;
                }
            };
            for problem in &outcome.problems {
                tracing::warn!("{problem}");
            }
            for event in outcome.events {
                if events.send(event).await.is_err() {
                    return;
                }
            }
        }
    }

    /// The files of the directory that hold objects, by name.
    fn list(&self) -> std::io::Result<BTreeSet<PathBuf>> {
        let mut paths = BTreeSet::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            if is_object_file(&path) && path.is_file() {
                paths.insert(path);
            }
        }
        Ok(paths)
    }

    /// Reads one file and decodes it when its content changed; returns whether it changed.
    fn read_file(&mut self, path: PathBuf, problems: &mut Vec<SourceProblem>) -> bool {
        let content = match std::fs::read(&path) {
            Ok(content) => content,
            Err(error) => {
                problems.push(SourceProblem::ReadFile {
                    path,
                    error: error.to_string(),
                });
                return false;
            }
        };
        if self
            .files
            .get(&path)
            .is_some_and(|state| state.content == content)
        {
            return false;
        }
        let decoded = match std::str::from_utf8(&content) {
            Ok(text) => decode_documents(text),
            Err(e) => Err(DecodeProblem::Yaml {
                message: format!("not UTF-8 text: {e}"),
            }),
        };
        let objects =
            match decoded {
                Ok(file) => {
                    problems.extend(file.skipped.into_iter().map(|problem| {
                        SourceProblem::Skipped {
                            path: path.clone(),
                            problem,
                        }
                    }));
                    file.objects
                }
                Err(problem) => {
                    problems.push(SourceProblem::Malformed {
                        path: path.clone(),
                        problem,
                    });
                    self.files
                        .get_mut(&path)
                        .map(|state| std::mem::take(&mut state.objects))
                        .unwrap_or_default()
                }
            };
        self.files.insert(path, FileState { content, objects });
        true
    }

    /// Every file's objects together; the first file (by name) holding an object wins.
    fn merged(&self, problems: &mut Vec<SourceProblem>) -> Vec<ClusterObject> {
        let mut merged: BTreeMap<String, (&Path, &ClusterObject)> = BTreeMap::new();
        for (path, state) in &self.files {
            for object in &state.objects {
                let identity = identity(object);
                let (first, _) = *merged.entry(identity.clone()).or_insert((path, object));
                if first != path.as_path() {
                    problems.push(SourceProblem::Duplicate {
                        path: path.clone(),
                        object: identity,
                        used: first.to_owned(),
                    });
                }
            }
        }
        merged.into_values().map(|(_, o)| o.clone()).collect()
    }
}

/// An object's kind and key, as `Pod default/web-0`: what makes two objects the same one.
fn identity(object: &ClusterObject) -> String {
    match object {
        ClusterObject::Node(n) => format!("Node {}", node_key(n)),
        ClusterObject::Pod(p) => format!("Pod {}", pod_key(p)),
        ClusterObject::Namespace(n) => format!("Namespace {}", namespace_key(n)),
        ClusterObject::NetworkPolicy(p) => format!("NetworkPolicy {}", policy_key(p)),
    }
}

fn is_object_file(path: &Path) -> bool {
    let hidden = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_none_or(|n| n.starts_with('.'));
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    !hidden && matches!(extension, "yaml" | "yml" | "json")
}
