//! A blocking CRI client (`runtime.v1.RuntimeService`, the `k8s-cri` bindings over tonic) on a
//! containerd's Unix socket: the calls kubelet makes to create and delete Pod sandboxes, plus
//! `Status` for readiness. Each call has a deadline, sent to containerd as `grpc-timeout` so
//! that it gives up too (as it does for kubelet's runtime request timeout).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use k8s_cri::v1::runtime_service_client::RuntimeServiceClient;
use k8s_cri::v1::{
    ListPodSandboxRequest, PodSandbox, PodSandboxConfig, PodSandboxStatusRequest,
    RemovePodSandboxRequest, RunPodSandboxRequest, StatusRequest, StopPodSandboxRequest,
};
use tonic::transport::{Channel, Endpoint};

/// A CRI call that failed: the call, the gRPC code and containerd's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CRI {call} on {socket}: {code:?}: {message}")]
pub struct CriError {
    /// The RPC.
    pub call: &'static str,
    /// The socket.
    pub socket: String,
    /// The gRPC status code (`Unavailable` when nothing answered).
    pub code: tonic::Code,
    /// The message.
    pub message: String,
}

/// What a Pod sandbox's status says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxFacts {
    /// The Pod IP the CNI result gave.
    pub ip: String,
    /// The sandbox process (from the verbose `info`), whose network namespace the Pod's is.
    pub pid: Option<u32>,
}

/// A connection to one containerd's CRI service.
#[derive(Debug)]
pub struct Cri {
    runtime: tokio::runtime::Runtime,
    client: RuntimeServiceClient<Channel>,
    socket: PathBuf,
}

impl Cri {
    /// Connects to the CRI service on `socket`.
    pub fn connect(socket: &Path) -> Result<Cri, CriError> {
        let fail = |message: String| CriError {
            call: "connect",
            socket: socket.display().to_string(),
            code: tonic::Code::Unavailable,
            message,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let path = socket.to_owned();
        let channel = runtime
            .block_on(
                Endpoint::from_static("http://containerd.invalid").connect_with_connector(
                    tower::service_fn(move |_| {
                        let path = path.clone();
                        async move {
                            tokio::net::UnixStream::connect(path)
                                .await
                                .map(TokioIo::new)
                        }
                    }),
                ),
            )
            .map_err(|e| {
                fail(format!(
                    "{e}: {}",
                    std::error::Error::source(&e)
                        .map(ToString::to_string)
                        .unwrap_or_default()
                ))
            })?;
        Ok(Cri {
            runtime,
            client: RuntimeServiceClient::new(channel),
            socket: socket.to_owned(),
        })
    }

    fn call<T, R>(
        &mut self,
        call: &'static str,
        message: T,
        timeout: Duration,
        rpc: impl AsyncFnOnce(
            &mut RuntimeServiceClient<Channel>,
            tonic::Request<T>,
        ) -> Result<tonic::Response<R>, tonic::Status>,
    ) -> Result<R, CriError> {
        let mut request = tonic::Request::new(message);
        request.set_timeout(timeout);
        let client = &mut self.client;
        let result = self.runtime.block_on(async {
            tokio::time::timeout(timeout + Duration::from_secs(1), rpc(client, request))
                .await
                .unwrap_or_else(|_| Err(tonic::Status::deadline_exceeded("no answer in time")))
        });
        result
            .map(tonic::Response::into_inner)
            .map_err(|status| CriError {
                call,
                socket: self.socket.display().to_string(),
                code: status.code(),
                message: status.message().to_owned(),
            })
    }

    /// The runtime's conditions (`RuntimeReady`, `NetworkReady`) as (type, status, message).
    pub fn conditions(&mut self) -> Result<Vec<(String, bool, String)>, CriError> {
        let status = self.call(
            "Status",
            StatusRequest { verbose: false },
            Duration::from_secs(5),
            async |c, r| c.status(r).await,
        )?;
        Ok(status
            .status
            .map(|s| s.conditions)
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                (
                    c.r#type,
                    c.status,
                    format!("{} {}", c.reason, c.message).trim().to_owned(),
                )
            })
            .collect())
    }

    /// `RunPodSandbox`: the sandbox's ID once containerd has made it and its network.
    pub fn run_pod_sandbox(
        &mut self,
        config: PodSandboxConfig,
        timeout: Duration,
    ) -> Result<String, CriError> {
        let request = RunPodSandboxRequest {
            config: Some(config),
            runtime_handler: String::new(),
        };
        self.call("RunPodSandbox", request, timeout, async |c, r| {
            c.run_pod_sandbox(r).await
        })
        .map(|r| r.pod_sandbox_id)
    }

    /// `PodSandboxStatus` (verbose): the Pod IP and the sandbox process.
    pub fn sandbox(&mut self, id: &str) -> Result<SandboxFacts, CriError> {
        let request = PodSandboxStatusRequest {
            pod_sandbox_id: id.to_owned(),
            verbose: true,
        };
        let response = self.call(
            "PodSandboxStatus",
            request,
            Duration::from_secs(10),
            async |c, r| c.pod_sandbox_status(r).await,
        )?;
        let ip = response
            .status
            .and_then(|s| s.network)
            .map(|n| n.ip)
            .unwrap_or_default();
        let info = verbose_info(&response.info);
        Ok(SandboxFacts {
            ip,
            pid: info
                .as_ref()
                .and_then(|i| i["pid"].as_u64())
                .and_then(|p| u32::try_from(p).ok()),
        })
    }

    /// `StopPodSandbox`: containerd kills the sandbox and tears its network down (CNI DEL).
    pub fn stop_pod_sandbox(&mut self, id: &str, timeout: Duration) -> Result<(), CriError> {
        let request = StopPodSandboxRequest {
            pod_sandbox_id: id.to_owned(),
        };
        self.call("StopPodSandbox", request, timeout, async |c, r| {
            c.stop_pod_sandbox(r).await
        })
        .map(drop)
    }

    /// `RemovePodSandbox`: containerd forgets a stopped sandbox.
    pub fn remove_pod_sandbox(&mut self, id: &str, timeout: Duration) -> Result<(), CriError> {
        let request = RemovePodSandboxRequest {
            pod_sandbox_id: id.to_owned(),
        };
        self.call("RemovePodSandbox", request, timeout, async |c, r| {
            c.remove_pod_sandbox(r).await
        })
        .map(drop)
    }

    /// `ListPodSandbox`: every sandbox containerd knows, ready or not.
    pub fn list_pod_sandboxes(&mut self) -> Result<Vec<PodSandbox>, CriError> {
        self.call(
            "ListPodSandbox",
            ListPodSandboxRequest { filter: None },
            Duration::from_secs(10),
            async |c, r| c.list_pod_sandbox(r).await,
        )
        .map(|r| r.items)
    }
}

/// containerd's verbose sandbox info: the JSON under the `info` key.
fn verbose_info(info: &HashMap<String, String>) -> Option<serde_json::Value> {
    info.get("info")
        .and_then(|text| serde_json::from_str(text).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbose_info_is_read_from_its_json() {
        let mut info = HashMap::new();
        assert_eq!(verbose_info(&info), None);
        info.insert(
            "info".to_owned(),
            r#"{"pid": 42, "netNamespacePath": "/x/cni-1"}"#.to_owned(),
        );
        let v = verbose_info(&info).unwrap();
        assert_eq!(v["pid"], 42);
        info.insert("info".to_owned(), "not json".to_owned());
        assert_eq!(verbose_info(&info), None);
    }

    #[test]
    fn a_missing_socket_is_unavailable() {
        let err = Cri::connect(Path::new("/nonexistent/containerd.sock")).unwrap_err();
        assert_eq!(err.code, tonic::Code::Unavailable);
        assert!(
            err.to_string().contains("/nonexistent/containerd.sock"),
            "{err}"
        );
    }
}
