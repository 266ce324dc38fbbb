//! Watch responses: a newline-delimited JSON stream of watch events fed by the store's channel
//! (each event's object printed as a one-row Table when the client asked for Tables).
//!
//! The stream ends after `timeoutSeconds`, after a 410 ERROR event, or fails its body when the
//! server goes unavailable. Dropping it (client gone) unregisters the watch.

use super::body::ResponseBody;
use super::query::Query;
use super::status::Failure;
use crate::error::Unavailable;
use crate::resource::ResourceType;
use crate::server::Shared;
use crate::store::WatchItem;
use crate::table::TableFormat;
use bytes::Bytes;
use futures_util::stream;
use http::{Response, StatusCode, header};
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::{Instant, Interval};

/// Opens a watch and returns its streaming response.
pub fn open(
    shared: &Arc<Shared>,
    resource: &ResourceType,
    namespace: Option<String>,
    query: &Query,
    table: Option<TableFormat>,
) -> Result<Response<ResponseBody>, Failure> {
    let filter = query.filter(namespace)?;
    let start = super::watch_start(query)?;
    let (id, rx) = {
        let mut store = shared.store();
        // Checked under the store lock: `set_available(false)` flips the flag before it takes the
        // lock to break the open watches, so a watch is either failed here or broken there.
        if !shared.available.load(Ordering::SeqCst) {
            let failed = stream::once(async { Err::<Frame<Bytes>, _>(Unavailable) });
            return Ok(Response::new(StreamBody::new(failed).boxed_unsync()));
        }
        store.watch(resource, filter, start, query.bookmarks)
    };
    tracing::debug!(watch = id, resource = %resource.id(), ?start, "watch opened");
    let state = WatchState {
        shared: shared.clone(),
        id,
        rx,
        resource: resource.clone(),
        table,
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
    table: Option<TableFormat>,
    deadline: Option<Instant>,
    ticker: Option<Interval>,
    done: bool,
}

impl WatchState {
    async fn next(&mut self) -> Option<Result<Frame<Bytes>, Unavailable>> {
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
                Some(WatchItem::Event { kind, object }) => match &self.table {
                    Some(table) => {
                        let rv = object.pointer("/metadata/resourceVersion").cloned();
                        let printed =
                            table.table([object.as_ref()], json!({"resourceVersion": rv}));
                        json!({"type": kind.as_str(), "object": printed})
                    }
                    None => json!({"type": kind.as_str(), "object": object.as_ref()}),
                },
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
                    return Some(Err(Unavailable));
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
