//! The state file: what `up` built (the topology, each Pod's address, the binaries it drove),
//! so that `check`, `status`, `iperf` and `down` work from a fresh process.

use std::fs;
use std::io;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::plan::{ClusterApi, Runtime, Topology};

/// The state file's format number; a file of another format is refused.
pub const FORMAT: u32 = 1;

/// How far `up` got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// `up` is building (or died while building): `down` still cleans it.
    Building,
    /// `up` finished.
    Up,
}

/// One Pod as created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PodRecord {
    /// Pod name (also its namespace).
    pub name: String,
    /// Its Node's name.
    pub node: String,
    /// Its IPv4 address, once known.
    pub ip: Option<Ipv4Addr>,
}

/// The whole state file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// [`FORMAT`].
    pub format: u32,
    /// How far `up` got.
    pub phase: Phase,
    /// The requested topology.
    pub topology: Topology,
    /// The agent binary (`agent` wiring).
    pub agent_bin: Option<PathBuf>,
    /// The CNI plugin binary (`agent` wiring).
    pub cni_bin: Option<PathBuf>,
    /// Where the agents read the cluster from (absent in older files: the directory).
    #[serde(default)]
    pub api: ClusterApi,
    /// The fake API server binary (`api` fake).
    #[serde(default)]
    pub apiserver_bin: Option<PathBuf>,
    /// The antrea-controller binary (`up --controller`; absent: the agents compute their
    /// NetworkPolicy themselves).
    #[serde(default)]
    pub controller_bin: Option<PathBuf>,
    /// Who creates the Pods (absent in older files: the lab itself).
    #[serde(default)]
    pub runtime: Runtime,
    /// The Pods created so far.
    pub pods: Vec<PodRecord>,
    /// Seconds `up` took, once finished.
    pub up_seconds: Option<f64>,
}

/// A state file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Reading or writing failed.
    #[error("state file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// Not a state file of this format.
    #[error("state file {path} is not valid: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl State {
    /// A fresh state for a lab being built.
    pub fn building(
        topology: Topology,
        agent_bin: Option<PathBuf>,
        cni_bin: Option<PathBuf>,
    ) -> State {
        State {
            format: FORMAT,
            phase: Phase::Building,
            topology,
            agent_bin,
            cni_bin,
            api: ClusterApi::Directory,
            apiserver_bin: None,
            controller_bin: None,
            runtime: Runtime::Direct,
            pods: Vec::new(),
            up_seconds: None,
        }
    }

    /// Parses a state file's text. Never panics; any other text gives [`StateError::Invalid`].
    pub fn parse(text: &[u8], path: &Path) -> Result<State, StateError> {
        let invalid = |message: String| StateError::Invalid {
            path: path.to_owned(),
            message,
        };
        let state: State = serde_json::from_slice(text).map_err(|e| invalid(e.to_string()))?;
        if state.format != FORMAT {
            return Err(invalid(format!(
                "format {} (this antrea-lab reads format {FORMAT})",
                state.format
            )));
        }
        // Re-check the topology limits: the file may have been edited.
        let t = state.topology;
        Topology::new(t.nodes, t.pods_per_node, t.encap, t.wiring)
            .map_err(|e| invalid(e.to_string()))?;
        Ok(state)
    }

    /// Reads the state file at `path`; `None` when there is none.
    pub fn load(path: &Path) -> Result<Option<State>, StateError> {
        match fs::read(path) {
            Ok(text) => State::parse(&text, path).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(StateError::Io {
                path: path.to_owned(),
                source,
            }),
        }
    }

    /// Writes the state file atomically (a temporary file renamed over it).
    pub fn save(&self, path: &Path) -> Result<(), StateError> {
        let io_err = |source| StateError::Io {
            path: path.to_owned(),
            source,
        };
        let text = serde_json::to_vec_pretty(self).map_err(|e| io_err(io::Error::other(e)))?;
        let tmp = path.with_extension("json.tmp");
        fs::write(&tmp, text).map_err(io_err)?;
        fs::rename(&tmp, path).map_err(io_err)
    }

    /// The Pod named `name`.
    pub fn pod(&self, name: &str) -> Option<&PodRecord> {
        self.pods.iter().find(|p| p.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Encap, Wiring};

    fn sample() -> State {
        let topology = Topology::new(2, 2, Encap::Vxlan, Wiring::Agent).unwrap();
        let mut s = State::building(
            topology,
            Some("/x/antrea-agent".into()),
            Some("/x/antrea".into()),
        );
        s.pods.push(PodRecord {
            name: "lab-n1-p1".into(),
            node: "lab-n1".into(),
            ip: Some(Ipv4Addr::new(10, 244, 1, 2)),
        });
        s.pods.push(PodRecord {
            name: "lab-n1-p2".into(),
            node: "lab-n1".into(),
            ip: None,
        });
        s.phase = Phase::Up;
        s.up_seconds = Some(1.5);
        s
    }

    #[test]
    fn save_then_load_gives_the_same_state() {
        let dir =
            std::env::temp_dir().join(format!("antrea-lab-state-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("state.json");
        let s = sample();
        s.save(&path).unwrap();
        assert_eq!(State::load(&path).unwrap(), Some(s));
        assert!(!path.with_extension("json.tmp").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_file_is_no_state() {
        assert_eq!(
            State::load(Path::new("/nonexistent/antrea-lab/state.json")).unwrap(),
            None
        );
    }

    #[test]
    fn file_uses_readable_names() {
        let text = serde_json::to_string(&sample()).unwrap();
        for needle in [
            r#""phase":"up""#,
            r#""encap":"vxlan""#,
            r#""wiring":"agent""#,
            r#""ip":"10.244.1.2""#,
            r#""api":"directory""#,
            r#""runtime":"direct""#,
        ] {
            assert!(text.contains(needle), "{needle} in {text}");
        }
    }

    #[test]
    fn the_api_mode_is_remembered_and_older_files_mean_the_directory() {
        let p = Path::new("s.json");
        let mut s = sample();
        s.api = ClusterApi::Fake;
        s.apiserver_bin = Some("/x/antrea-fake-apiserver".into());
        let text = serde_json::to_vec(&s).unwrap();
        assert_eq!(State::parse(&text, p).unwrap(), s);
        let mut older = serde_json::to_value(sample()).unwrap();
        let fields = older.as_object_mut().unwrap();
        fields.remove("api");
        fields.remove("apiserver_bin");
        fields.remove("runtime");
        let parsed = State::parse(older.to_string().as_bytes(), p).unwrap();
        assert_eq!(parsed.api, ClusterApi::Directory);
        assert_eq!(parsed.runtime, Runtime::Direct);
        assert_eq!(parsed, sample());
    }

    #[test]
    fn other_formats_and_garbage_are_refused() {
        let p = Path::new("s.json");
        let mut v = serde_json::to_value(sample()).unwrap();
        v["format"] = 2.into();
        let err = State::parse(v.to_string().as_bytes(), p).unwrap_err();
        assert!(err.to_string().contains("format 2"), "{err}");
        let mut v = serde_json::to_value(sample()).unwrap();
        v["topology"]["nodes"] = 0.into();
        assert!(
            State::parse(v.to_string().as_bytes(), p)
                .unwrap_err()
                .to_string()
                .contains("--nodes 0")
        );
        for garbage in [&b""[..], b"{", b"[]", b"\xff\xfe", b"{\"format\":1}"] {
            assert!(matches!(
                State::parse(garbage, p),
                Err(StateError::Invalid { .. })
            ));
        }
    }
}
