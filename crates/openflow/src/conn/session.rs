//! One live connection to the switch: the handshake, the reader task that routes every incoming
//! message (replies and errors to the request waiting on their xid, echo requests answered,
//! port status and other asynchronous messages to subscribers), and the writer task that also
//! sends keepalive echoes and declares the peer dead after the inactivity timeout.
//!
//! When a session closes, for whatever reason, every request still waiting fails with
//! [`ConnError::Disconnected`] and no new request can register on it.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::conn::error::ConnError;
use crate::conn::frame::FrameReader;
use crate::conn::{ConnOptions, PacketInMessage, RawMessage};
use crate::header::{HEADER_LEN, Header, msg_type};
use crate::message::Message;
use crate::msg::any::AnyMessage;
use crate::msg::barrier::BarrierRequest;
use crate::msg::config::{SetConfig, SwitchConfig, config_flags};
use crate::msg::echo::{EchoReply, EchoRequest};
use crate::msg::error::{ErrorKind, ErrorMsg, error_type};
use crate::msg::features::{FeaturesReply, FeaturesRequest};
use crate::msg::hello::{Hello, negotiate};
use crate::msg::multipart;
use crate::msg::port::PortStatus;

/// The subscribers' channels, shared by every session of a connection.
#[derive(Debug)]
pub(crate) struct Subscribers {
    pub(crate) port_status: broadcast::Sender<PortStatus>,
    pub(crate) packet_ins: broadcast::Sender<PacketInMessage>,
    pub(crate) async_messages: broadcast::Sender<RawMessage>,
}

/// Errors collected for the xids of a batch or bundle, in arrival order.
pub(crate) type Collected = Arc<Mutex<Vec<(u32, ErrorMsg)>>>;

/// Xids whose errors are collected: a batch's or bundle's messages, numbered consecutively.
struct ErrorCollector {
    xids: Range<u32>,
    into: Collected,
}

/// What waits for messages with a given xid.
enum Waiter {
    /// A single reply (or error).
    Reply(oneshot::Sender<Result<RawMessage, ConnError>>),
    /// Multipart reply parts until one without the MORE flag (or an error).
    Multipart {
        parts: Vec<RawMessage>,
        done: oneshot::Sender<Result<Vec<RawMessage>, ConnError>>,
    },
}

struct State {
    closed: Option<Arc<ConnError>>,
    waiters: HashMap<u32, Waiter>,
    /// Batches and bundles in flight; few at a time, so a list.
    collectors: Vec<ErrorCollector>,
}

/// A live connection.
pub(crate) struct Session {
    state: Mutex<State>,
    writer: mpsc::UnboundedSender<Vec<u8>>,
    closed_tx: watch::Sender<bool>,
    last_rx: Mutex<Instant>,
    features: OnceLock<FeaturesReply>,
    subscribers: Arc<Subscribers>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("features", &self.features.get())
            .finish_non_exhaustive()
    }
}

/// What a [`Registration`] registered.
enum Registered {
    Waiter(u32),
    Collector(Range<u32>),
}

/// Removes the registered waiter or collector when dropped, so a cancelled request leaves
/// nothing behind.
pub(crate) struct Registration<'a> {
    session: &'a Session,
    registered: Registered,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        if let Ok(mut state) = self.session.state.lock() {
            match &self.registered {
                Registered::Waiter(xid) => drop(state.waiters.remove(xid)),
                Registered::Collector(xids) => state.collectors.retain(|c| c.xids != *xids),
            }
        }
    }
}

/// A reply registered with [`Session::expect_reply`]; dropping it unregisters the waiter.
pub(crate) struct PendingReply<'a> {
    registration: Registration<'a>,
    rx: oneshot::Receiver<Result<RawMessage, ConnError>>,
}

impl PendingReply<'_> {
    /// Waits for the reply (or the switch's error, or the session's end).
    pub(crate) async fn wait(self) -> Result<RawMessage, ConnError> {
        let session = self.registration.session;
        self.rx.await.map_err(|_| session.disconnected())?
    }
}

impl Session {
    /// Runs the hello exchange on an open stream, starts the reader and writer tasks, fetches
    /// the switch features and sets `miss_send_len` (if configured).
    pub(crate) async fn establish(
        stream: localipc::Stream,
        options: &ConnOptions,
        subscribers: Arc<Subscribers>,
        next_xid: impl Fn() -> u32,
    ) -> Result<Arc<Session>, ConnError> {
        let (frames, write_half) = greet(stream, options, next_xid()).await?;

        let (writer, outgoing) = mpsc::unbounded_channel();
        let (closed_tx, _) = watch::channel(false);
        let session = Arc::new(Session {
            state: Mutex::new(State {
                closed: None,
                waiters: HashMap::new(),
                collectors: Vec::new(),
            }),
            writer,
            closed_tx,
            last_rx: Mutex::new(Instant::now()),
            features: OnceLock::new(),
            subscribers,
        });
        tokio::spawn(read_loop(session.clone(), frames));
        tokio::spawn(write_loop(
            session.clone(),
            write_half,
            outgoing,
            options.echo_interval,
            options.inactivity_timeout,
        ));

        let xid = next_xid();
        let features = match session
            .request(xid, FeaturesRequest.to_bytes(xid)?)
            .await
            .and_then(|r| r.parse::<FeaturesReply>())
        {
            Ok(features) => features,
            Err(e) => {
                session.close(e.clone());
                return Err(e);
            }
        };
        let _ = session.features.set(features);
        if let Some(miss_send_len) = options.miss_send_len {
            // Followed by a barrier, so the switch applies it before `connect` returns.
            let mut bytes = SetConfig(SwitchConfig {
                flags: config_flags::FRAG_NORMAL,
                miss_send_len,
            })
            .to_bytes(next_xid())?;
            let barrier_xid = next_xid();
            BarrierRequest.emit(barrier_xid, &mut bytes)?;
            if let Err(e) = session.request(barrier_xid, bytes).await {
                session.close(e.clone());
                return Err(e);
            }
        }
        Ok(session)
    }

    /// The switch features fetched during the handshake.
    pub(crate) fn features(&self) -> FeaturesReply {
        self.features.get().copied().unwrap_or_default()
    }

    /// Waits until the session closes; returns why.
    pub(crate) async fn closed(&self) -> Arc<ConnError> {
        let mut rx = self.closed_tx.subscribe();
        let _ = rx.wait_for(|closed| *closed).await;
        self.close_reason()
            .unwrap_or_else(|| Arc::new(ConnError::Closed))
    }

    fn close_reason(&self) -> Option<Arc<ConnError>> {
        self.state.lock().ok().and_then(|s| s.closed.clone())
    }

    /// Closes the session for `reason` (the first reason wins) and fails every waiting request.
    pub(crate) fn close(&self, reason: ConnError) {
        let waiters = {
            let Ok(mut state) = self.state.lock() else {
                return;
            };
            if state.closed.is_some() {
                return;
            }
            tracing::debug!(%reason, "OpenFlow session closed");
            state.closed = Some(Arc::new(reason));
            state.collectors.clear();
            std::mem::take(&mut state.waiters)
        };
        let reason = self
            .close_reason()
            .unwrap_or_else(|| Arc::new(ConnError::Closed));
        for (_, waiter) in waiters {
            match waiter {
                Waiter::Reply(tx) => drop(tx.send(Err(ConnError::Disconnected(reason.clone())))),
                Waiter::Multipart { done, .. } => {
                    drop(done.send(Err(ConnError::Disconnected(reason.clone()))))
                }
            }
        }
        self.closed_tx.send_replace(true);
    }

    fn disconnected(&self) -> ConnError {
        ConnError::Disconnected(
            self.close_reason()
                .unwrap_or_else(|| Arc::new(ConnError::Closed)),
        )
    }

    fn register_waiter(&self, xid: u32, waiter: Waiter) -> Result<(), ConnError> {
        let mut state = self.state.lock().map_err(|_| ConnError::Closed)?;
        if let Some(reason) = &state.closed {
            return Err(ConnError::Disconnected(reason.clone()));
        }
        state.waiters.insert(xid, waiter);
        Ok(())
    }

    /// Registers the consecutive `xids` to collect their errors into `into`; other replies to
    /// them are ignored.
    pub(crate) fn collect_errors(
        &self,
        xids: Range<u32>,
        into: &Collected,
    ) -> Result<Registration<'_>, ConnError> {
        let mut state = self.state.lock().map_err(|_| ConnError::Closed)?;
        if let Some(reason) = &state.closed {
            return Err(ConnError::Disconnected(reason.clone()));
        }
        state.collectors.push(ErrorCollector {
            xids: xids.clone(),
            into: into.clone(),
        });
        Ok(Registration {
            session: self,
            registered: Registered::Collector(xids),
        })
    }

    /// Queues bytes (one or more whole messages) for sending.
    pub(crate) fn write(&self, bytes: Vec<u8>) -> Result<(), ConnError> {
        self.writer.send(bytes).map_err(|_| self.disconnected())
    }

    /// Sends `bytes` (whose last message has `xid`) and waits for the reply to `xid`.
    pub(crate) async fn request(&self, xid: u32, bytes: Vec<u8>) -> Result<RawMessage, ConnError> {
        let reply = self.expect_reply(xid)?;
        self.write(bytes)?;
        reply.wait().await
    }

    /// Registers for the reply to `xid` before the message is written, so that one write can
    /// carry several requests whose replies are all awaited.
    pub(crate) fn expect_reply(&self, xid: u32) -> Result<PendingReply<'_>, ConnError> {
        let (tx, rx) = oneshot::channel();
        self.register_waiter(xid, Waiter::Reply(tx))?;
        Ok(PendingReply {
            registration: Registration {
                session: self,
                registered: Registered::Waiter(xid),
            },
            rx,
        })
    }

    /// Sends a multipart request and collects every part of the reply.
    pub(crate) async fn multipart(
        &self,
        xid: u32,
        bytes: Vec<u8>,
    ) -> Result<Vec<RawMessage>, ConnError> {
        let (done, rx) = oneshot::channel();
        self.register_waiter(
            xid,
            Waiter::Multipart {
                parts: Vec::new(),
                done,
            },
        )?;
        let _registration = Registration {
            session: self,
            registered: Registered::Waiter(xid),
        };
        self.write(bytes)?;
        rx.await.map_err(|_| self.disconnected())?
    }

    /// Handles one incoming message.
    fn dispatch(&self, frame: Vec<u8>) -> Result<(), ConnError> {
        let (header, msg) = AnyMessage::parse(&frame)?;
        let raw = || RawMessage {
            header,
            body: Bytes::copy_from_slice(&frame[HEADER_LEN..]),
        };
        match msg {
            AnyMessage::EchoRequest(EchoRequest { payload }) => {
                return self.write(EchoReply { payload }.to_bytes(header.xid)?);
            }
            AnyMessage::EchoReply(_) => return Ok(()),
            AnyMessage::PortStatus(status) => {
                let _ = self.subscribers.port_status.send(status);
                return Ok(());
            }
            AnyMessage::PacketIn(p) => {
                let _ = self
                    .subscribers
                    .packet_ins
                    .send(PacketInMessage::Standard(p));
                return Ok(());
            }
            AnyMessage::PacketIn2(p) => {
                let _ = self.subscribers.packet_ins.send(PacketInMessage::Nicira(p));
                return Ok(());
            }
            _ => {}
        }
        let mut state = self.state.lock().map_err(|_| ConnError::Closed)?;
        let waiter = state.waiters.remove(&header.xid);
        if let (None, Some(collector)) = (
            &waiter,
            state
                .collectors
                .iter()
                .find(|c| c.xids.contains(&header.xid)),
        ) {
            if let (AnyMessage::Error(e), Ok(mut c)) = (msg, collector.into.lock()) {
                c.push((header.xid, e));
            }
            return Ok(());
        }
        let unsolicited = match (waiter, msg) {
            (Some(Waiter::Reply(tx)), AnyMessage::Error(e)) => {
                let _ = tx.send(Err(ConnError::Rejected(e)));
                None
            }
            (Some(Waiter::Reply(tx)), _) => {
                let _ = tx.send(Ok(raw()));
                None
            }
            (Some(Waiter::Multipart { done, .. }), AnyMessage::Error(e)) => {
                let _ = done.send(Err(ConnError::Rejected(e)));
                None
            }
            (Some(Waiter::Multipart { mut parts, done }), _)
                if header.msg_type == msg_type::MULTIPART_REPLY =>
            {
                let part = raw();
                let more = multipart::parse_header(&part.body)
                    .map(|(_, flags, _)| flags & multipart::MORE != 0)?;
                parts.push(part);
                if more {
                    state
                        .waiters
                        .insert(header.xid, Waiter::Multipart { parts, done });
                } else {
                    let _ = done.send(Ok(parts));
                }
                None
            }
            (Some(Waiter::Multipart { done, .. }), _) => {
                let _ = done.send(Err(ConnError::UnexpectedReply {
                    expected: "multipart reply",
                    got: header.msg_type,
                }));
                None
            }
            (None, AnyMessage::Error(e)) => {
                tracing::warn!(xid = header.xid, error = %e, "OpenFlow error for a message nobody waits for");
                Some(raw())
            }
            (None, _) => Some(raw()),
        };
        drop(state);
        if let Some(raw) = unsolicited {
            let _ = self.subscribers.async_messages.send(raw);
        }
        Ok(())
    }
}

/// Resolves once the session is closed (also if it already was).
/// The halves of `stream` once hellos are exchanged on it (ours with `xid`), the read half
/// framed.
pub(crate) async fn greet(
    stream: localipc::Stream,
    options: &ConnOptions,
    xid: u32,
) -> Result<
    (
        FrameReader<ReadHalf<localipc::Stream>>,
        WriteHalf<localipc::Stream>,
    ),
    ConnError,
> {
    let (read_half, mut write_half) = tokio::io::split(stream);
    let mut frames = FrameReader::new(read_half, options.max_message_len);
    exchange_hellos(
        &mut frames,
        &mut write_half,
        options.inactivity_timeout,
        xid,
    )
    .await?;
    Ok((frames, write_half))
}

/// Sends our hello (with `xid`) and reads the switch's: the switch must offer OpenFlow 1.5. A
/// refusal is told to the switch before the error is returned.
async fn exchange_hellos<R, W>(
    frames: &mut FrameReader<R>,
    write_half: &mut W,
    timeout: Duration,
    xid: u32,
) -> Result<(), ConnError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    write_half.write_all(&Hello::of15().to_bytes(xid)?).await?;
    let first = tokio::time::timeout(timeout, frames.next())
        .await
        .map_err(|_| ConnError::Inactive(timeout))??
        .ok_or(ConnError::Closed)?;
    let header = Header::parse(&first)?;
    let body = &first[HEADER_LEN..];
    match header.msg_type {
        msg_type::HELLO => {}
        msg_type::ERROR => return Err(ConnError::Rejected(ErrorMsg::parse_body(body)?)),
        got => {
            return Err(ConnError::Handshake {
                expected: "hello",
                got,
            });
        }
    }
    if let Err(e) = negotiate(header.version, &Hello::parse_body(body)?) {
        let refusal = ErrorMsg {
            kind: ErrorKind::Standard {
                err_type: error_type::HELLO_FAILED,
                code: 0,
            },
            data: e.to_string().into_bytes(),
        };
        // Best effort: the peer learns why before the connection closes.
        if let Ok(refusal) = refusal.to_bytes(header.xid) {
            let _ = write_half.write_all(&refusal).await;
        }
        return Err(e.into());
    }
    Ok(())
}

async fn wait_closed(closed: &mut watch::Receiver<bool>) {
    let _ = closed.wait_for(|c| *c).await;
}

async fn read_loop(session: Arc<Session>, mut frames: FrameReader<ReadHalf<localipc::Stream>>) {
    let mut closed = session.closed_tx.subscribe();
    loop {
        let next = tokio::select! {
            () = wait_closed(&mut closed) => return,
            next = frames.next() => next,
        };
        let result = match next {
            Ok(Some(frame)) => {
                if let Ok(mut t) = session.last_rx.lock() {
                    *t = Instant::now();
                }
                session.dispatch(frame)
            }
            Ok(None) => Err(ConnError::Closed),
            Err(e) => Err(e.into()),
        };
        if let Err(reason) = result {
            session.close(reason);
            return;
        }
    }
}

async fn write_loop(
    session: Arc<Session>,
    mut out: WriteHalf<localipc::Stream>,
    mut outgoing: mpsc::UnboundedReceiver<Vec<u8>>,
    echo_interval: Duration,
    inactivity_timeout: Duration,
) {
    let mut closed = session.closed_tx.subscribe();
    let mut ticker = tokio::time::interval(echo_interval.min(inactivity_timeout));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut echo_xid = 0u32;
    loop {
        let result = tokio::select! {
            () = wait_closed(&mut closed) => break,
            bytes = outgoing.recv() => match bytes {
                Some(first) => write_batch(&mut out, first, &mut outgoing).await,
                None => break,
            },
            _ = ticker.tick() => {
                let idle = session.last_rx.lock().map(|t| t.elapsed()).unwrap_or_default();
                if idle >= inactivity_timeout {
                    session.close(ConnError::Inactive(inactivity_timeout));
                    break;
                }
                if idle >= echo_interval {
                    // Echo xids count down from the top so they never meet request xids.
                    echo_xid = echo_xid.wrapping_sub(1);
                    let mut echo = Vec::new();
                    match (EchoRequest { payload: Vec::new() }).emit(echo_xid, &mut echo) {
                        Ok(()) => out.write_all(&echo).await,
                        Err(e) => Err(std::io::Error::other(e)),
                    }
                } else {
                    Ok(())
                }
            }
        };
        if let Err(e) = result {
            session.close(e.into());
            break;
        }
    }
    let _ = out.shutdown().await;
}

/// Writes `first` and everything else already queued in one go.
async fn write_batch<W: AsyncWrite + Unpin>(
    out: &mut W,
    mut buf: Vec<u8>,
    queue: &mut mpsc::UnboundedReceiver<Vec<u8>>,
) -> std::io::Result<()> {
    while let Ok(more) = queue.try_recv() {
        buf.extend_from_slice(&more);
    }
    out.write_all(&buf).await?;
    out.flush().await
}
