//! Where a lab's cluster lives (`up --api`): the lab publishes the Node and Pod objects there
//! and tells each agent where to read them. Either the cluster directory (one YAML file per
//! object, `--cluster-dir`) or the fake Kubernetes API server (objects created over its Unix
//! socket, `--kubeconfig` pointing at its address on the LAN).

use std::ffi::OsString;
use std::fs;
use std::path::PathBuf;

use crate::agent::{ClusterObject, write_object};
use crate::error::{LabError, Result};
use crate::host::http;
use crate::layout::Layout;
use crate::plan::ClusterApi;

/// The cluster of one lab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cluster {
    /// The cluster directory.
    Directory(PathBuf),
    /// The fake API server.
    FakeApi {
        /// Its Unix socket (for the lab).
        socket: PathBuf,
        /// The kubeconfig it wrote (for the agents).
        kubeconfig: PathBuf,
    },
}

impl Cluster {
    /// The cluster of the lab at `layout` for `api`.
    pub fn new(layout: &Layout, api: ClusterApi) -> Cluster {
        match api {
            ClusterApi::Directory => Cluster::Directory(layout.cluster_dir()),
            ClusterApi::Fake => Cluster::FakeApi {
                socket: layout.api_socket(),
                kubeconfig: layout.api_kubeconfig(),
            },
        }
    }

    /// The agent's options naming where to read the cluster.
    pub fn agent_args(&self) -> [OsString; 2] {
        match self {
            Cluster::Directory(dir) => ["--cluster-dir".into(), dir.into()],
            Cluster::FakeApi { kubeconfig, .. } => ["--kubeconfig".into(), kubeconfig.into()],
        }
    }

    /// Makes the cluster ready to take objects (creates the directory; the fake API server is
    /// started separately, see [`super::apiserver`]).
    pub fn prepare(&self) -> Result<()> {
        match self {
            Cluster::Directory(dir) => fs::create_dir_all(dir).map_err(|source| LabError::File {
                what: "cluster directory",
                path: dir.clone(),
                source,
            }),
            Cluster::FakeApi { .. } => Ok(()),
        }
    }

    /// Publishes `object`: its file in the directory, or a create in the API server.
    pub fn publish<T: ClusterObject>(&self, object: &T) -> Result<()> {
        match self {
            Cluster::Directory(dir) => write_object(dir, &object.file_name(), object)
                .map(drop)
                .map_err(|source| LabError::File {
                    what: "cluster object",
                    path: dir.join(object.file_name()),
                    source,
                }),
            Cluster::FakeApi { socket, .. } => {
                let path = object.collection_path();
                let body = serde_json::to_vec(object).map_err(|e| LabError::Api {
                    request: format!("POST {path}"),
                    message: e.to_string(),
                })?;
                let response = http::request(socket, "POST", &path, Some(&body))?;
                if response.status == 201 {
                    Ok(())
                } else {
                    Err(LabError::Api {
                        request: format!("POST {path} ({})", object.file_name()),
                        message: format!("status {}: {}", response.status, response.text()),
                    })
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_are_pointed_at_the_directory_or_the_kubeconfig() {
        let layout = Layout::new("/run/antrea-lab");
        assert_eq!(
            Cluster::new(&layout, ClusterApi::Directory).agent_args(),
            [
                OsString::from("--cluster-dir"),
                "/run/antrea-lab/cluster".into()
            ]
        );
        assert_eq!(
            Cluster::new(&layout, ClusterApi::Fake).agent_args(),
            [
                OsString::from("--kubeconfig"),
                "/run/antrea-lab/api/kubeconfig".into()
            ]
        );
    }
}
