//! Watch responses: a newline-delimited JSON stream of watch events fed by the store's channel.
//!
//! The stream ends after `timeoutSeconds`, after a 410 ERROR event, or fails its body when the
//! server goes unavailable. Dropping it (client gone) unregisters the watch.

use super::body::{BodyError, ResponseBody};
use super::query::Query;
use super::status::Failure;
use crate::resource::ResourceType;
use crate::server::Shared;
use crate::store::WatchItem;
use bytes::Bytes;
use futures_util::stream;
use http::{Response, StatusCode, header};
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::{Instant, Interval};

/// Opens a watch and returns its streaming response.
pub fn open(
    shared: &Arc<Shared>,
    resource: &ResourceType,
    namespace: Option<String>,
    query: &Query,
) -> Result<Response<ResponseBody>, Failure> {
    let filter = query.filter(namespace)?;
    let start = super::watch_start(query)?;
    let (id, rx) = shared
        .store()
        .watch(resource, filter, start, query.bookmarks);
    tracing::debug!(watch = id, resource = %resource.id(), ?start, "watch opened");
    let state = WatchState {
        shared: shared.clone(),
        id,
        rx,
        resource: resource.clone(),
        deadline: query.timeout.map(|t| Instant::now() + t),
        ticker: shared
            .bookmark_interval
            .filter(|_| query.bookmarks)
            .map(|every| tokio::time::interval_at(Instant::now() + every, every)),
        done: false,
    };
    let frames = stream::unfold(state, |mut state| async move {
        let item = state.next().await?;
        Some((item, state))
    });
    let mut response = Response::new(StreamBody::new(frames).boxed_unsync());
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

struct WatchState {
    shared: Arc<Shared>,
    id: u64,
    rx: UnboundedReceiver<WatchItem>,
    resource: ResourceType,
    deadline: Option<Instant>,
    ticker: Option<Interval>,
    done: bool,
}

impl WatchState {
    async fn next(&mut self) -> Option<Result<Frame<Bytes>, BodyError>> {
        if self.done {
            return None;
        }
        loop {
            let item = tokio::select! {
                item = self.rx.recv() => item,
                () = sleep_until(self.deadline) => None,
                () = tick(self.ticker.as_mut()) => {
                    self.shared.store().bookmark(self.id);
                    continue;
                }
            };
            let line = match item {
                None => return None,
                Some(WatchItem::Event { kind, object }) => {
                    json!({"type": kind.as_str(), "object": object.as_ref()})
                }
                Some(WatchItem::Bookmark {
                    rv,
                    initial_events_end,
                }) => self.bookmark(rv, initial_events_end),
                Some(WatchItem::Expired { requested, oldest }) => {
                    self.done = true;
                    let failure = Failure::new(
                        StatusCode::GONE,
                        "Expired",
                        format!("too old resource version: {requested} ({oldest})"),
                    );
                    json!({"type": "ERROR", "object": failure.to_status()})
                }
                Some(WatchItem::Broken) => {
                    self.done = true;
                    return Some(Err(BodyError::Unavailable));
                }
            };
            let mut bytes = line.to_string().into_bytes();
            bytes.push(b'\n');
            return Some(Ok(Frame::data(Bytes::from(bytes))));
        }
    }

    fn bookmark(&self, rv: u64, initial_events_end: bool) -> Value {
        let mut metadata = json!({"resourceVersion": rv.to_string()});
        if initial_events_end {
            metadata["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        let object = json!({"kind": self.resource.kind, "apiVersion": self.resource.api_version(), "metadata": metadata});
        json!({"type": "BOOKMARK", "object": object})
    }
}

impl Drop for WatchState {
    fn drop(&mut self) {
        self.shared.store().close_watch(self.id);
        tracing::debug!(watch = self.id, "watch closed");
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

async fn tick(ticker: Option<&mut Interval>) {
    match ticker {
        Some(t) => {
            t.tick().await;
        }
        None => std::future::pending().await,
    }
}
