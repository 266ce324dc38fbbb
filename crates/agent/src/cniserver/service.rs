//! [`CniService`]: the gRPC services (Antrea's `Cni`, our `CniLifecycle`) over a
//! [`PodConfigurator`]; every failure becomes a CNI error in the response, never a gRPC status.

use std::sync::Arc;
use std::time::Instant;

use cni::rpc::lifecycle::cni_lifecycle_server::CniLifecycle;
use cni::rpc::pb::cni_server::Cni;
use cni::rpc::{CmdRequest, error_response, pb, result_response};
use cni::spec::CniError;
use model::PodKey;
use tokio::sync::mpsc;
use tonic::{Request, Response, Status};

use super::configurator::PodConfigurator;
use super::metrics::CniMetrics;
use crate::datapath::Datapath;

/// How a CNI ADD for a Pod ended, for whoever reports it (Kubernetes Events on the Pod).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddOutcome {
    /// The Pod.
    pub pod: PodKey,
    /// `None` when the Pod's network and flows are in place, else why not.
    pub error: Option<String>,
}

/// The CNI server's request handler.
#[derive(Debug)]
pub struct CniService<D> {
    pods: Arc<PodConfigurator<D>>,
    adds: Option<mpsc::UnboundedSender<AddOutcome>>,
    metrics: CniMetrics,
}

impl<D> Clone for CniService<D> {
    fn clone(&self) -> Self {
        CniService {
            pods: self.pods.clone(),
            adds: self.adds.clone(),
            metrics: self.metrics.clone(),
        }
    }
}

impl<D> CniService<D> {
    /// The handler over `pods`; the ADD and DEL durations go to `metrics`.
    pub fn new(pods: Arc<PodConfigurator<D>>, metrics: CniMetrics) -> CniService<D> {
        CniService {
            pods,
            adds: None,
            metrics,
        }
    }

    /// Also sends the outcome of every ADD that names its Pod to `adds`.
    pub fn report_adds_to(mut self, adds: mpsc::UnboundedSender<AddOutcome>) -> CniService<D> {
        self.adds = Some(adds);
        self
    }

    fn report_add(&self, request: &CmdRequest, error: Option<&CniError>) {
        let (Some(adds), false, false) = (
            &self.adds,
            request.k8s.pod_namespace.is_empty(),
            request.k8s.pod_name.is_empty(),
        ) else {
            return;
        };
        // A closed receiver only means nobody reports any more.
        let _ = adds.send(AddOutcome {
            pod: PodKey::new(&request.k8s.pod_namespace, &request.k8s.pod_name),
            error: error.map(ToString::to_string),
        });
    }
}

/// The response for a command without a result (DEL, CHECK, STATUS, GC).
fn empty(outcome: Result<(), CniError>) -> pb::CniCmdResponse {
    match outcome {
        Ok(()) => pb::CniCmdResponse::default(),
        Err(error) => error_response(&error),
    }
}

fn log_failure(command: &str, request: &CmdRequest, error: &CniError) {
    tracing::warn!(
        "CNI {command} for container {} failed: {error}",
        request.container_id
    );
}

impl<D: Datapath> CniService<D> {
    /// Answers `command`; an ADD's or DEL's time to the answer is observed by outcome.
    async fn handle(
        &self,
        command: &'static str,
        request: pb::CniCmdRequest,
    ) -> pb::CniCmdResponse {
        let started = Instant::now();
        let response = self.answer(command, request).await;
        if matches!(command, "ADD" | "DEL") {
            let code = response.error.as_ref().map(|error| error.code);
            self.metrics.observe(command, code, started.elapsed());
        }
        response
    }

    async fn answer(
        &self,
        command: &'static str,
        request: pb::CniCmdRequest,
    ) -> pb::CniCmdResponse {
        let request = match CmdRequest::decode(request) {
            Ok(r) => r,
            Err(error) => {
                tracing::warn!("CNI {command}: undecodable request: {error}");
                return error_response(&error);
            }
        };
        let response = match command {
            "ADD" => match self.pods.add(&request).await {
                Ok(result) => {
                    self.report_add(&request, None);
                    return result_response(&result, request.version);
                }
                Err(error) => {
                    self.report_add(&request, Some(&error));
                    Err(error)
                }
            },
            "DEL" => self.pods.del(&request).await,
            "CHECK" => self.pods.check(&request).await,
            "GC" => self.pods.gc(&request).await,
            _ => Ok(()),
        };
        if let Err(error) = &response {
            log_failure(command, &request, error);
        }
        empty(response)
    }
}

#[tonic::async_trait]
impl<D: Datapath> Cni for CniService<D> {
    async fn cmd_add(
        &self,
        r: Request<pb::CniCmdRequest>,
    ) -> Result<Response<pb::CniCmdResponse>, Status> {
        Ok(Response::new(self.handle("ADD", r.into_inner()).await))
    }

    async fn cmd_check(
        &self,
        r: Request<pb::CniCmdRequest>,
    ) -> Result<Response<pb::CniCmdResponse>, Status> {
        Ok(Response::new(self.handle("CHECK", r.into_inner()).await))
    }

    async fn cmd_del(
        &self,
        r: Request<pb::CniCmdRequest>,
    ) -> Result<Response<pb::CniCmdResponse>, Status> {
        Ok(Response::new(self.handle("DEL", r.into_inner()).await))
    }
}

#[tonic::async_trait]
impl<D: Datapath> CniLifecycle for CniService<D> {
    /// The server only exists once the Node is up, so answering means ready.
    async fn cmd_status(
        &self,
        r: Request<pb::CniCmdRequest>,
    ) -> Result<Response<pb::CniCmdResponse>, Status> {
        Ok(Response::new(self.handle("STATUS", r.into_inner()).await))
    }

    async fn cmd_gc(
        &self,
        r: Request<pb::CniCmdRequest>,
    ) -> Result<Response<pb::CniCmdResponse>, Status> {
        Ok(Response::new(self.handle("GC", r.into_inner()).await))
    }
}
