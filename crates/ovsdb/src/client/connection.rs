//! One live connection: the table of outstanding requests, the writer task, and the reader loop
//! that frames incoming bytes, routes responses and notifications, answers the server's echo
//! requests and runs the inactivity probe.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::BytesMut;
use serde_json::{Value as Json, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::shared::{Shared, lock};
use super::{LockEvent, MonitorEvent};
use crate::error::{DisconnectReason, Error};
use crate::monitor::Updates;
use crate::wire::{FrameDecoder, Message, WireError};

/// What to do with the response to a request.
#[derive(Debug)]
pub(crate) enum Pending {
    /// Hand the result to a caller.
    Call {
        method: &'static str,
        reply: oneshot::Sender<Result<Json, Error>>,
    },
    /// A `monitor`/`monitor_cond` request: the reply is the snapshot for that monitor's stream;
    /// `ack` (absent for re-establishment) learns whether the server accepted it.
    Monitor {
        monitor_id: String,
        v2: bool,
        ack: Option<oneshot::Sender<Result<(), Error>>>,
    },
    /// A fire-and-forget request (our echo probe, a cancel of a dropped monitor).
    Discard,
}

#[derive(Debug, Default)]
struct CallTable {
    closed: Option<DisconnectReason>,
    next_id: u64,
    pending: HashMap<u64, Pending>,
}

/// The sending side of a connection, shared by every caller.
#[derive(Debug)]
pub(crate) struct Conn {
    out: mpsc::UnboundedSender<Vec<u8>>,
    calls: Mutex<CallTable>,
}

impl Conn {
    pub(crate) fn new() -> (Arc<Conn>, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (out, rx) = mpsc::unbounded_channel();
        (
            Arc::new(Conn {
                out,
                calls: Mutex::default(),
            }),
            rx,
        )
    }

    /// Sends a request whose response is handled as `pending`; returns its id.
    pub(crate) fn request(
        &self,
        method: &str,
        params: Vec<Json>,
        pending: Pending,
    ) -> Result<u64, Error> {
        let id = {
            let mut table = lock(&self.calls);
            if let Some(reason) = &table.closed {
                return Err(Error::Disconnected {
                    method: method.to_owned(),
                    reason: reason.clone(),
                });
            }
            let id = table.next_id;
            table.next_id += 1;
            table.pending.insert(id, pending);
            id
        };
        let bytes = json!({"method": method, "params": params, "id": id})
            .to_string()
            .into_bytes();
        if self.out.send(bytes).is_err() {
            // The writer has stopped; the reader is closing the table and failing the rest.
            lock(&self.calls).pending.remove(&id);
            return Err(Error::Disconnected {
                method: method.to_owned(),
                reason: DisconnectReason::PeerClosed,
            });
        }
        Ok(id)
    }

    /// Sends a notification (no response).
    pub(crate) fn notify(&self, method: &str, params: Vec<Json>) -> Result<(), Error> {
        let bytes = json!({"method": method, "params": params, "id": null})
            .to_string()
            .into_bytes();
        self.out.send(bytes).map_err(|_| Error::Disconnected {
            method: method.to_owned(),
            reason: DisconnectReason::PeerClosed,
        })
    }

    /// Sends `cancel` for request `id` and fails that request with [`Error::Canceled`] at once:
    /// ovsdb-server drops a cancelled request without answering it (RFC 7047 §4.1.4 says it
    /// answers `canceled`; an answer that does come is absorbed).
    pub(crate) fn cancel(&self, id: u64) -> Result<(), Error> {
        let pending = {
            let mut table = lock(&self.calls);
            match table.pending.get_mut(&id) {
                Some(slot) => Some(std::mem::replace(slot, Pending::Discard)),
                None => None,
            }
        };
        let Some(pending) = pending else {
            return Ok(());
        };
        self.notify("cancel", vec![Json::from(id)])?;
        if let Pending::Call { method, reply } = pending {
            let _ = reply.send(Err(Error::Canceled {
                method: method.to_owned(),
                id,
            }));
        }
        Ok(())
    }

    fn take(&self, id: u64) -> Option<Pending> {
        lock(&self.calls).pending.remove(&id)
    }

    /// Marks the connection closed and fails every outstanding request with `reason`.
    pub(crate) fn close(&self, reason: &DisconnectReason) {
        let pending = {
            let mut table = lock(&self.calls);
            table.closed = Some(reason.clone());
            std::mem::take(&mut table.pending)
        };
        for p in pending.into_values() {
            match p {
                Pending::Call { method, reply } => {
                    let _ = reply.send(Err(Error::Disconnected {
                        method: method.to_owned(),
                        reason: reason.clone(),
                    }));
                }
                Pending::Monitor { ack: Some(ack), .. } => {
                    let _ = ack.send(Err(Error::Disconnected {
                        method: "monitor".to_owned(),
                        reason: reason.clone(),
                    }));
                }
                Pending::Monitor { ack: None, .. } | Pending::Discard => {}
            }
        }
    }
}

/// Free buffer space offered to each socket read.
const READ_CHUNK: usize = 64 * 1024;

/// Runs the connection over `stream` until it ends; returns why.
pub(crate) async fn run(
    conn: &Arc<Conn>,
    out_rx: mpsc::UnboundedReceiver<Vec<u8>>,
    stream: localipc::Stream,
    shared: &Shared,
    mut shutdown: watch::Receiver<()>,
) -> DisconnectReason {
    let (mut rd, wr) = tokio::io::split(stream);
    let mut writer = tokio::spawn(write_loop(wr, out_rx));
    let mut decoder = FrameDecoder::new(shared.config.max_message_size);
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
    let probe = shared.config.inactivity_probe;
    let mut probe_sent = false;
    let mut deadline = probe.map(|p| Instant::now() + p);
    let reason = loop {
        if buf.capacity() - buf.len() < READ_CHUNK / 4 {
            buf.reserve(READ_CHUNK);
        }
        let idle = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = shutdown.changed() => break DisconnectReason::Shutdown,
            res = &mut writer => break match res {
                Ok(Err(e)) => DisconnectReason::Io(Arc::new(e)),
                _ => DisconnectReason::PeerClosed,
            },
            () = idle => {
                let Some(p) = probe else { continue };
                if probe_sent {
                    break DisconnectReason::Inactive(p);
                }
                if conn.request("echo", vec![], Pending::Discard).is_err() {
                    break DisconnectReason::PeerClosed;
                }
                probe_sent = true;
                deadline = Some(Instant::now() + p);
            }
            read = rd.read_buf(&mut buf) => {
                match read {
                    Ok(0) => break match decoder.finish(&buf) {
                        Ok(()) => DisconnectReason::PeerClosed,
                        Err(e) => DisconnectReason::Malformed(Arc::new(e.into())),
                    },
                    Ok(_) => {}
                    Err(e) => break DisconnectReason::Io(Arc::new(e)),
                }
                probe_sent = false;
                deadline = probe.map(|p| Instant::now() + p);
                if let Err(reason) = drain(&mut decoder, &mut buf, conn, shared) {
                    break reason;
                }
            }
        }
    };
    writer.abort();
    reason
}

/// Handles every complete message in `buf`.
fn drain(
    decoder: &mut FrameDecoder,
    buf: &mut BytesMut,
    conn: &Conn,
    shared: &Shared,
) -> Result<(), DisconnectReason> {
    let malformed = |e: WireError| DisconnectReason::Malformed(Arc::new(e));
    while let Some(json) = decoder.decode(buf).map_err(|e| malformed(e.into()))? {
        let message = Message::parse(json).map_err(|e| malformed(e.into()))?;
        dispatch(message, conn, shared)?;
    }
    Ok(())
}

fn dispatch(message: Message, conn: &Conn, shared: &Shared) -> Result<(), DisconnectReason> {
    match message {
        Message::Response { id, result } => {
            let pending = id.as_u64().and_then(|id| conn.take(id));
            let Some(pending) = pending else {
                return Err(DisconnectReason::Protocol(format!(
                    "response to unknown request id {id}"
                )));
            };
            complete(pending, result, shared);
        }
        Message::Request { method, params, id } => {
            let result = match method.as_str() {
                "echo" => Ok(Json::Array(params)),
                _ => Err(json!({"error": "unknown method", "details": method})),
            };
            let reply = Message::Response { id, result }.emit();
            conn.out
                .send(reply)
                .map_err(|_| DisconnectReason::PeerClosed)?;
        }
        Message::Notification { method, params } => notification(&method, params, shared)?,
    }
    Ok(())
}

fn complete(pending: Pending, result: Result<Json, Json>, shared: &Shared) {
    match pending {
        Pending::Call { method, reply } => {
            let _ = reply.send(result.map_err(|e| rpc_error(method, &e)));
        }
        Pending::Monitor {
            monitor_id,
            v2,
            ack,
        } => {
            let method = if v2 { "monitor_cond" } else { "monitor" };
            let outcome = result.map_err(|e| rpc_error(method, &e)).and_then(|json| {
                Updates::parse(&json, v2).map_err(|e| Error::bad_reply(method, e.to_string()))
            });
            let outcome =
                outcome.map(|updates| shared.deliver(&monitor_id, MonitorEvent::Snapshot(updates)));
            match ack {
                Some(ack) => {
                    let _ = ack.send(outcome);
                }
                None => {
                    if let Err(e) = outcome {
                        shared.fail_monitor(&monitor_id, e.to_string());
                    }
                }
            }
        }
        Pending::Discard => {}
    }
}

fn notification(method: &str, params: Vec<Json>, shared: &Shared) -> Result<(), DisconnectReason> {
    let bad =
        |what: &str| DisconnectReason::Protocol(format!("malformed {method} notification: {what}"));
    match method {
        "update" | "update2" => {
            let [monitor_id, updates] = params.as_slice() else {
                return Err(bad("expected [monitor-id, updates]"));
            };
            let updates =
                Updates::parse(updates, method == "update2").map_err(|e| bad(&e.to_string()))?;
            match monitor_id.as_str() {
                Some(id) => shared.deliver(id, MonitorEvent::Update(updates)),
                None => return Err(bad("monitor id is not one of ours")),
            }
        }
        "locked" | "stolen" => {
            let [Json::String(lock)] = params.as_slice() else {
                return Err(bad("expected [lock-id]"));
            };
            let event = match method {
                "locked" => LockEvent::Locked(lock.clone()),
                _ => LockEvent::Stolen(lock.clone()),
            };
            let _ = shared.lock_events.send(event);
        }
        other => tracing::debug!(method = other, "ignoring unknown OVSDB notification"),
    }
    Ok(())
}

/// A JSON-RPC error member as a typed error: `{"error": .., "details": ..}` or a bare string.
pub(crate) fn rpc_error(method: &str, e: &Json) -> Error {
    let text =
        |j: Option<&Json>| j.map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
    match e {
        Json::Object(o) => Error::Rpc {
            method: method.to_owned(),
            error: text(o.get("error")).unwrap_or_else(|| e.to_string()),
            details: text(o.get("details")),
        },
        other => Error::Rpc {
            method: method.to_owned(),
            error: text(Some(other)).unwrap_or_default(),
            details: None,
        },
    }
}

/// Writes queued messages, coalescing whatever is queued into one write.
async fn write_loop(
    mut wr: tokio::io::WriteHalf<localipc::Stream>,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
) -> std::io::Result<()> {
    const COALESCE_LIMIT: usize = 1 << 20;
    while let Some(mut bytes) = rx.recv().await {
        while bytes.len() < COALESCE_LIMIT {
            match rx.try_recv() {
                Ok(more) => bytes.extend_from_slice(&more),
                Err(_) => break,
            }
        }
        wr.write_all(&bytes).await?;
        wr.flush().await?;
    }
    Ok(())
}
