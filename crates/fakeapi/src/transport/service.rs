//! The fake as a `tower::Service` over `http` requests: `kube::Client::new(server.service(), ns)`.

use crate::http::{ResponseBody, handle};
use crate::server::{FakeApiServer, Shared};
use http::{Request, Response, StatusCode};
use http_body_util::BodyExt;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A `tower::Service` answering Kubernetes API requests from the fake's store.
#[derive(Debug, Clone)]
pub struct FakeService {
    shared: Arc<Shared>,
}

impl FakeApiServer {
    /// The in-process transport (no socket).
    pub fn service(&self) -> FakeService {
        FakeService {
            shared: self.shared.clone(),
        }
    }
}

impl<B> tower::Service<Request<B>> for FakeService
where
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            match body.collect().await {
                Ok(collected) => Ok(handle(&shared, &parts, collected.to_bytes())),
                Err(e) => {
                    let e: BoxError = e.into();
                    tracing::warn!(error = %e, "fakeapi could not read a request body");
                    let mut response = Response::new(crate::http::empty());
                    *response.status_mut() = StatusCode::BAD_REQUEST;
                    Ok(response)
                }
            }
        })
    }
}
