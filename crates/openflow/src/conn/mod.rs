//! The async connection to a bridge's OpenFlow management socket (`<bridge>.mgmt` on Linux, the
//! matching named pipe on Windows, or TCP), as a cheap-to-clone [`OfConnection`] handle.
//!
//! - **Handshake**: hello with version negotiation (OpenFlow 1.5 required), then a features
//!   request; [`OfConnection::features`] gives the datapath id.
//! - **Requests**: every message gets a fresh xid. Replies, multipart parts (collected until
//!   the MORE flag is clear) and `OFPT_ERROR`s are routed by xid to the waiting request; an
//!   error becomes [`ConnError::Rejected`] with the OpenFlow error name.
//! - **Batches**: [`OfConnection::batch`] sends messages then a barrier and returns once the
//!   switch has processed all of them, with the errors that belong to the batch.
//! - **Bundles**: [`OfConnection::bundle`] applies messages atomically, or not at all.
//! - **Liveness**: the switch's echo requests are answered; when the switch is silent for the
//!   echo interval we send an echo, and after the inactivity timeout the connection is dead.
//! - **Reconnect**: when the connection drops, requests waiting on it fail with
//!   [`ConnError::Disconnected`]; a background task reconnects with exponential backoff and
//!   runs the owner's on-connect hook (e.g. to replay flows) before other requests proceed.
//!   A request made while reconnecting waits for the new session at most the inactivity
//!   timeout, then fails with [`ConnError::NotConnected`].
//! - **Dumps**: [`OfConnection::dump_flows`], [`OfConnection::dump_groups`] and
//!   [`OfConnection::port_desc`] collect every part of the multipart reply into typed values.
//!   Groups are asked for by id on a connection of their own, so that one longer than a
//!   message neither aborts Open vSwitch nor breaks the framing ([`group_dump`]).
//! - **Subscriptions**: port status changes, packet-ins (either format), other unsolicited
//!   messages (flow removed, errors for fire-and-forget messages) and connection events.

mod error;
pub mod frame;
pub mod group_dump;
mod session;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bytes::Bytes;
use localipc::Endpoint;
use tokio::sync::{broadcast, watch};

pub use error::{ConnError, Rejection};
pub use frame::{DEFAULT_MAX_MESSAGE_LEN, FrameError};

use crate::header::{HEADER_LEN, Header};
use crate::message::Message;
use crate::msg::barrier::{BarrierReply, BarrierRequest};
use crate::msg::bundle::{BundleControl, BundleCtrlType, bundle_flags, emit_bundle_add};
use crate::msg::config::MISS_SEND_LEN_NO_BUFFER;
use crate::msg::features::FeaturesReply;
use crate::msg::flow_stats::{FlowDescReply, FlowDescRequest, FlowStats};
use crate::msg::group_mod::GroupDesc;
use crate::msg::meter_features::{MeterFeatures, MeterFeaturesRequest};
use crate::msg::meter_mod::{METER_ALL, MeterDesc, MeterDescReply, MeterDescRequest};
use crate::msg::packet_in::{PacketIn, PacketIn2, SetPacketInFormat};
use crate::msg::port::{Port, PortDescReply, PortDescRequest, PortStatus};
use crate::{DecodeError, EncodeError};
use session::{Collected, Session, Subscribers};

/// A whole message as received: its header and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawMessage {
    pub header: Header,
    /// Everything after the 8-byte header.
    pub body: Bytes,
}

impl RawMessage {
    /// Decodes the body as `M`, checking the type.
    pub fn parse<M: Message>(&self) -> Result<M, ConnError> {
        if self.header.msg_type != M::TYPE {
            return Err(ConnError::UnexpectedReply {
                expected: std::any::type_name::<M>(),
                got: self.header.msg_type,
            });
        }
        Ok(M::parse_body(&self.body)?)
    }
}

/// A message encoded for sending, whose xid the connection fills in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Encoded(Vec<u8>);

impl Encoded {
    /// Encodes `msg`; fails if it is longer than an OpenFlow message can be.
    pub fn new<M: Message>(msg: &M) -> Result<Encoded, EncodeError> {
        msg.to_bytes(0).map(Encoded)
    }

    /// An already encoded whole message (header included).
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Encoded, DecodeError> {
        let h = Header::parse(&bytes)?;
        if usize::from(h.length) != bytes.len() {
            return Err(DecodeError::BadLength {
                what: "encoded message",
                len: usize::from(h.length),
            });
        }
        Ok(Encoded(bytes))
    }

    /// The message type.
    pub fn msg_type(&self) -> u8 {
        self.0[1]
    }

    /// The whole message, header included (with xid 0).
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Appends the message to `out` with transaction id `xid`.
    fn emit_with_xid(&self, xid: u32, out: &mut Vec<u8>) {
        let start = out.len();
        out.extend_from_slice(&self.0);
        out[start + 4..start + HEADER_LEN].copy_from_slice(&xid.to_be_bytes());
    }
}

/// A packet sent to the controller, in the format chosen with
/// [`OfConnection::set_packet_in_format`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PacketInMessage {
    /// `OFPT_PACKET_IN` (the default format).
    Standard(PacketIn),
    /// `NXT_PACKET_IN2`, with the controller action's userdata and continuation.
    Nicira(PacketIn2),
}

/// What happened to the connection.
#[derive(Debug, Clone)]
pub enum ConnEvent {
    /// A session is up (handshake done, hook run).
    Connected { datapath_id: u64 },
    /// The session dropped; a reconnect follows.
    Disconnected { reason: Arc<ConnError> },
    /// A reconnect attempt failed; another follows after the backoff.
    ConnectFailed { error: ConnError },
}

/// What an on-connect hook returns.
pub type HookFuture = Pin<Box<dyn Future<Output = Result<(), ConnError>> + Send>>;
/// The hook run after every (re)connect; see [`ConnOptions::on_connect`].
pub type ConnectHook = Arc<dyn Fn(OfConnection) -> HookFuture + Send + Sync>;

/// Connection settings.
#[derive(Clone)]
pub struct ConnOptions {
    /// Send an echo request when the switch has been silent this long.
    pub echo_interval: Duration,
    /// Declare the connection dead when the switch has been silent this long.
    pub inactivity_timeout: Duration,
    /// Largest accepted message.
    pub max_message_len: usize,
    /// First delay between reconnect attempts; it doubles up to `reconnect_max`.
    pub reconnect_initial: Duration,
    pub reconnect_max: Duration,
    /// Sent in `OFPT_SET_CONFIG` after the handshake. Open vSwitch sends asynchronous messages
    /// (port status, packet-in) on a management-socket connection only once it is nonzero.
    pub miss_send_len: Option<u16>,
    /// Set with [`ConnOptions::on_connect`].
    pub on_connect: Option<ConnectHook>,
}

impl std::fmt::Debug for ConnOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnOptions")
            .field("echo_interval", &self.echo_interval)
            .field("inactivity_timeout", &self.inactivity_timeout)
            .field("max_message_len", &self.max_message_len)
            .field("reconnect_initial", &self.reconnect_initial)
            .field("reconnect_max", &self.reconnect_max)
            .field("miss_send_len", &self.miss_send_len)
            .field("on_connect", &self.on_connect.is_some())
            .finish()
    }
}

impl Default for ConnOptions {
    fn default() -> Self {
        ConnOptions {
            echo_interval: Duration::from_secs(5),
            inactivity_timeout: Duration::from_secs(15),
            max_message_len: DEFAULT_MAX_MESSAGE_LEN,
            reconnect_initial: Duration::from_millis(100),
            reconnect_max: Duration::from_secs(5),
            miss_send_len: Some(MISS_SEND_LEN_NO_BUFFER),
            on_connect: None,
        }
    }
}

impl ConnOptions {
    /// Registers the hook run after every (re)connect, before any other request proceeds. It
    /// gets a handle bound to the new session and must use that one: other handles wait until
    /// the hook has finished. If it fails, the session is dropped and the connection retries.
    pub fn on_connect<F, Fut>(mut self, hook: F) -> ConnOptions
    where
        F: Fn(OfConnection) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), ConnError>> + Send + 'static,
    {
        self.on_connect = Some(Arc::new(move |conn| Box::pin(hook(conn))));
        self
    }
}

/// Opens a stream to `endpoint`.
async fn dial(endpoint: &Endpoint) -> Result<localipc::Stream, ConnError> {
    localipc::dial(endpoint)
        .await
        .map_err(|e| ConnError::Connect {
            endpoint: endpoint.to_string(),
            source: Arc::new(e),
        })
}

/// Which session requests use.
#[derive(Debug, Clone)]
enum Link {
    Connecting,
    Ready(Arc<Session>),
    Shutdown,
}

struct Shared {
    endpoint: Endpoint,
    options: ConnOptions,
    next_xid: AtomicU32,
    link: watch::Sender<Link>,
    subscribers: Arc<Subscribers>,
    events: broadcast::Sender<ConnEvent>,
}

impl Shared {
    fn next_xid(&self) -> u32 {
        self.next_xids(1).start
    }

    /// `n` consecutive fresh xids (never 0, never wrapping inside the range).
    fn next_xids(&self, n: u32) -> std::ops::Range<u32> {
        loop {
            let first = self.next_xid.fetch_add(n, Ordering::Relaxed);
            if let Some(end) = first.checked_add(n).filter(|_| first != 0) {
                return first..end;
            }
        }
    }

    /// Dials, handshakes and runs the hook; publishes the session as ready.
    async fn connect_once(self: &Arc<Self>, owner: &Arc<Owner>) -> Result<Arc<Session>, ConnError> {
        let stream = dial(&self.endpoint).await?;
        let session = Session::establish(stream, &self.options, self.subscribers.clone(), || {
            self.next_xid()
        })
        .await?;
        if let Some(hook) = &self.options.on_connect {
            let pinned = OfConnection {
                owner: owner.clone(),
                pinned: Some(session.clone()),
            };
            if let Err(e) = hook(pinned).await {
                let e = ConnError::Hook(Arc::new(e));
                session.close(e.clone());
                return Err(e);
            }
        }
        let ready = self.link.send_if_modified(|link| {
            if matches!(link, Link::Shutdown) {
                false
            } else {
                *link = Link::Ready(session.clone());
                true
            }
        });
        if !ready {
            session.close(ConnError::Shutdown);
            return Err(ConnError::Shutdown);
        }
        let _ = self.events.send(ConnEvent::Connected {
            datapath_id: session.features().datapath_id,
        });
        Ok(session)
    }

    /// Watches the session and reconnects when it drops, until shutdown.
    async fn supervise(self: Arc<Self>, owner: std::sync::Weak<Owner>, mut session: Arc<Session>) {
        loop {
            let reason = session.closed().await;
            let shut_down = !self.link.send_if_modified(|link| {
                if matches!(link, Link::Shutdown) {
                    false
                } else {
                    *link = Link::Connecting;
                    true
                }
            });
            if shut_down {
                return;
            }
            tracing::warn!(endpoint = %self.endpoint, %reason, "OpenFlow connection lost; reconnecting");
            let _ = self.events.send(ConnEvent::Disconnected { reason });
            let mut delay = self.options.reconnect_initial;
            session = loop {
                let Some(owner) = owner.upgrade() else { return };
                match self.connect_once(&owner).await {
                    Ok(s) => break s,
                    Err(ConnError::Shutdown) => return,
                    Err(error) => {
                        tracing::debug!(endpoint = %self.endpoint, %error, "OpenFlow reconnect failed");
                        let _ = self.events.send(ConnEvent::ConnectFailed { error });
                    }
                }
                drop(owner);
                let mut link = self.link.subscribe();
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = link.wait_for(|l| matches!(l, Link::Shutdown)) => return,
                }
                delay = (delay * 2).min(self.options.reconnect_max);
            };
        }
    }

    fn shutdown(&self) {
        let previous = self.link.send_replace(Link::Shutdown);
        if let Link::Ready(session) = previous {
            session.close(ConnError::Shutdown);
        }
    }
}

/// Shuts the connection down when the last handle goes away.
struct Owner {
    shared: Arc<Shared>,
    /// Bundle ids, unique per connection.
    next_bundle_id: AtomicU32,
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.shared.shutdown();
    }
}

/// A handle to an OpenFlow connection to one bridge. Cloning is cheap; the connection (and its
/// reconnect task) ends when the last clone is dropped or [`OfConnection::close`] is called.
#[derive(Clone)]
pub struct OfConnection {
    owner: Arc<Owner>,
    /// Set for the handle given to the on-connect hook: it uses that session directly.
    pinned: Option<Arc<Session>>,
}

impl std::fmt::Debug for OfConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OfConnection")
            .field("endpoint", &self.owner.shared.endpoint)
            .finish_non_exhaustive()
    }
}

impl OfConnection {
    /// Connects to `endpoint`, runs the handshake and the on-connect hook, and starts the
    /// reconnect task. Fails if this first attempt fails.
    pub async fn connect(
        endpoint: Endpoint,
        options: ConnOptions,
    ) -> Result<OfConnection, ConnError> {
        let shared = Arc::new(Shared {
            endpoint,
            options,
            next_xid: AtomicU32::new(1),
            link: watch::Sender::new(Link::Connecting),
            subscribers: Arc::new(Subscribers {
                port_status: broadcast::channel(256).0,
                packet_ins: broadcast::channel(1024).0,
                async_messages: broadcast::channel(1024).0,
            }),
            events: broadcast::channel(64).0,
        });
        let owner = Arc::new(Owner {
            shared: shared.clone(),
            next_bundle_id: AtomicU32::new(1),
        });
        let session = shared.connect_once(&owner).await?;
        tokio::spawn(shared.supervise(Arc::downgrade(&owner), session));
        Ok(OfConnection {
            owner,
            pinned: None,
        })
    }

    fn shared(&self) -> &Arc<Shared> {
        &self.owner.shared
    }

    /// The session to use: the pinned one, or the current one once it is ready. While the
    /// connection is being re-established a request waits at most the inactivity timeout, then
    /// fails with [`ConnError::NotConnected`]: a switch that stays unreachable fails its callers
    /// (who can retry) instead of holding them.
    async fn session(&self) -> Result<Arc<Session>, ConnError> {
        if let Some(s) = &self.pinned {
            return Ok(s.clone());
        }
        let mut link = self.shared().link.subscribe();
        let limit = self.shared().options.inactivity_timeout;
        let ready = tokio::time::timeout(limit, link.wait_for(|l| !matches!(l, Link::Connecting)))
            .await
            .map_err(|_| ConnError::NotConnected(limit))?
            .map_err(|_| ConnError::Shutdown)?;
        match &*ready {
            Link::Ready(s) => Ok(s.clone()),
            _ => Err(ConnError::Shutdown),
        }
    }

    /// Shuts the connection down: waiting requests fail, no reconnect follows.
    pub fn close(&self) {
        self.shared().shutdown();
    }

    /// The current session's switch features (datapath id, tables, capabilities).
    pub async fn features(&self) -> Result<FeaturesReply, ConnError> {
        Ok(self.session().await?.features())
    }

    /// Port status changes (ports added, deleted, modified), from now on. A receiver that falls
    /// behind by more than 256 changes gets `Lagged` and should re-read the ports.
    pub fn port_status(&self) -> broadcast::Receiver<PortStatus> {
        self.shared().subscribers.port_status.subscribe()
    }

    /// Packet-ins (both formats), from now on; at most 1024 are buffered per receiver. A
    /// packet-in whose body does not decode goes to [`OfConnection::async_messages`] instead.
    pub fn packet_ins(&self) -> broadcast::Receiver<PacketInMessage> {
        self.shared().subscribers.packet_ins.subscribe()
    }

    /// Other messages nobody requested (flow removed, errors for [`OfConnection::send`]
    /// messages, …), from now on; at most 1024 are buffered per receiver.
    pub fn async_messages(&self) -> broadcast::Receiver<RawMessage> {
        self.shared().subscribers.async_messages.subscribe()
    }

    /// Connection events (connected, disconnected, reconnect failures), from now on.
    pub fn events(&self) -> broadcast::Receiver<ConnEvent> {
        self.shared().events.subscribe()
    }

    /// Sends `msg` without waiting for anything; returns its xid. Errors the switch sends for it
    /// arrive on [`OfConnection::async_messages`].
    pub async fn send<M: Message>(&self, msg: &M) -> Result<u32, ConnError> {
        let session = self.session().await?;
        let xid = self.shared().next_xid();
        session.write(msg.to_bytes(xid)?)?;
        Ok(xid)
    }

    /// Sends `msg` and waits for its reply, decoded as `R`.
    pub async fn request<M: Message, R: Message>(&self, msg: &M) -> Result<R, ConnError> {
        self.request_raw(msg).await?.parse::<R>()
    }

    /// Sends `msg` and waits for its reply.
    pub async fn request_raw<M: Message>(&self, msg: &M) -> Result<RawMessage, ConnError> {
        let session = self.session().await?;
        let xid = self.shared().next_xid();
        session.request(xid, msg.to_bytes(xid)?).await
    }

    /// Sends a multipart request and returns every part of the reply.
    pub async fn multipart<M: Message>(&self, msg: &M) -> Result<Vec<RawMessage>, ConnError> {
        let session = self.session().await?;
        let xid = self.shared().next_xid();
        session.multipart(xid, msg.to_bytes(xid)?).await
    }

    /// Describes every port of the bridge.
    pub async fn port_desc(&self) -> Result<Vec<Port>, ConnError> {
        let mut ports = Vec::new();
        for part in self.multipart(&PortDescRequest::default()).await? {
            ports.extend(part.parse::<PortDescReply>()?.ports);
        }
        Ok(ports)
    }

    /// Describes the flows `request` selects (`FlowDescRequest::default()`: every flow), from
    /// every part of the reply.
    pub async fn dump_flows(&self, request: &FlowDescRequest) -> Result<Vec<FlowStats>, ConnError> {
        let mut flows = Vec::new();
        for part in self.multipart(request).await? {
            flows.extend(part.parse::<FlowDescReply>()?.flows);
        }
        Ok(flows)
    }

    /// The largest group id in `known` or in the group actions of the switch's flows (0 for
    /// none): a bound for [`OfConnection::dump_groups`].
    /// Dumps the flows; [`group_dump::group_bound`] computes it from flows already at hand.
    pub async fn group_bound(&self, known: &[u32]) -> Result<u32, ConnError> {
        let flows = self.dump_flows(&FlowDescRequest::default()).await?;
        Ok(group_dump::group_bound(known, &flows))
    }

    /// The groups of the bridge whose ids run from 1 to `bound`, or past it to the largest id
    /// the groups found send to. Each group is asked for by its id, never all at once, on a
    /// connection of its own ([`group_dump`]): Open vSwitch aborts on a request for every
    /// group when one is longer than a message. A group above the bound that no group found
    /// names is not read.
    pub async fn dump_groups(&self, bound: u32) -> Result<Vec<GroupDesc>, ConnError> {
        let (mut asked, mut bound, mut groups) = (0, bound, Vec::new());
        while asked < bound {
            let ids: Vec<u32> = (asked + 1..=bound).collect();
            let found =
                group_dump::describe_groups(&self.shared().endpoint, &self.shared().options, &ids)
                    .await?;
            asked = bound;
            bound = found
                .iter()
                .flat_map(GroupDesc::group_ids)
                .fold(bound, u32::max);
            groups.extend(found);
        }
        Ok(groups)
    }

    /// The meters the switch offers. A switch without meters may answer with an error
    /// ([`ConnError::Rejected`]) rather than with no meters.
    pub async fn meter_features(&self) -> Result<MeterFeatures, ConnError> {
        self.request(&MeterFeaturesRequest).await
    }

    /// Describes every meter of the bridge, from every part of the reply.
    pub async fn dump_meters(&self) -> Result<Vec<MeterDesc>, ConnError> {
        let mut meters = Vec::new();
        for part in self
            .multipart(&MeterDescRequest {
                meter_id: METER_ALL,
            })
            .await?
        {
            meters.extend(part.parse::<MeterDescReply>()?.meters);
        }
        Ok(meters)
    }

    /// Chooses the packet-in format the switch uses on this connection (a
    /// [`crate::msg::packet_in::packet_in_format`] value) and waits until it is in effect.
    /// Open vSwitch forgets it on reconnect, so an on-connect hook should set it again.
    pub async fn set_packet_in_format(&self, format: u32) -> Result<(), ConnError> {
        match self
            .batch(&[Encoded::new(&SetPacketInFormat(format))?])
            .await
        {
            Err(ConnError::BatchRejected(mut rejections)) if rejections.len() == 1 => {
                Err(ConnError::Rejected(rejections.remove(0).error))
            }
            other => other,
        }
    }

    /// Waits until the switch has processed every message sent before.
    pub async fn barrier(&self) -> Result<(), ConnError> {
        self.request::<_, BarrierReply>(&BarrierRequest)
            .await
            .map(drop)
    }

    /// Sends `msgs` followed by a barrier and waits for the barrier reply. When it returns, the
    /// switch has processed every message; `Err(BatchRejected)` lists the ones it rejected (the
    /// others were applied — use [`OfConnection::bundle`] for all-or-nothing).
    pub async fn batch(&self, msgs: &[Encoded]) -> Result<(), ConnError> {
        let session = self.session().await?;
        let (xids, mut out) = self.encode_all(Vec::new(), msgs, |xid, msg, out| {
            msg.emit_with_xid(xid, out);
            Ok(())
        })?;
        let collected = Collected::default();
        let registration = session.collect_errors(xids.clone(), &collected)?;
        let barrier_xid = self.shared().next_xid();
        BarrierRequest.emit(barrier_xid, &mut out)?;
        session.request(barrier_xid, out).await?;
        drop(registration);
        let rejections = rejections(&[(xids, 0)], &collected);
        if rejections.is_empty() {
            Ok(())
        } else {
            Err(ConnError::BatchRejected(rejections))
        }
    }

    /// Applies `msgs` as one atomic, ordered bundle: the switch applies all of them or none.
    /// On failure the bundle is discarded and the error lists what the switch rejected.
    pub async fn bundle(&self, msgs: &[Encoded]) -> Result<(), ConnError> {
        self.bundle_chunks([Ok::<_, EncodeError>(msgs)], || {})
            .await
            .map(drop)
    }

    /// [`OfConnection::bundle`] of messages produced chunk by chunk: each chunk goes to the
    /// switch as soon as it is produced, so the switch takes the first messages while the
    /// caller encodes the next ones (a large change overlaps its encoding with the switch's
    /// work). A chunk that fails to encode discards the bundle and returns its error.
    /// `queued` runs once every message is queued for the switch, while the switch still
    /// works through them (the caller's own work after the encoding, overlapped with the
    /// switch's); not at all when the bundle fails before. Rejections give each message's
    /// index in the order produced. Returns the number of messages bundled.
    pub async fn bundle_chunks<C: AsRef<[Encoded]>>(
        &self,
        chunks: impl IntoIterator<Item = Result<C, EncodeError>>,
        queued: impl FnOnce(),
    ) -> Result<usize, ConnError> {
        let session = self.session().await?;
        let bundle_id = self.owner.next_bundle_id.fetch_add(1, Ordering::Relaxed);
        let flags = bundle_flags::ATOMIC | bundle_flags::ORDERED;
        self.bundle_on(&session, bundle_id, flags, chunks, queued)
            .await
    }

    /// Opens, fills and commits bundle `bundle_id` on `session`: the open, then each chunk of
    /// adds as it is produced (yielding between chunks, so the writer sends one while the next
    /// is encoded), then a barrier; the commit follows only if the open and every add
    /// succeeded and every chunk encoded (otherwise the bundle is discarded), so a rejected
    /// message is never committed.
    async fn bundle_on<C: AsRef<[Encoded]>>(
        &self,
        session: &Arc<Session>,
        bundle_id: u32,
        flags: u16,
        chunks: impl IntoIterator<Item = Result<C, EncodeError>>,
        queued: impl FnOnce(),
    ) -> Result<usize, ConnError> {
        let bundle_control = |ctrl_type: BundleCtrlType| async move {
            let xid = self.shared().next_xid();
            session
                .request(
                    xid,
                    BundleControl::new(bundle_id, ctrl_type, flags).to_bytes(xid)?,
                )
                .await?
                .parse::<BundleControl>()
        };
        let as_bundle_error = |e: ConnError, rejections: Vec<Rejection>| match e {
            ConnError::Rejected(control) => ConnError::BundleRejected {
                rejections,
                control: Some(control),
            },
            other => other,
        };

        let open_xid = self.shared().next_xid();
        let open =
            BundleControl::new(bundle_id, BundleCtrlType::OpenRequest, flags).to_bytes(open_xid)?;
        let opened = session.expect_reply(open_xid)?;
        session.write(open)?;
        let collected = Collected::default();
        // Each chunk's xids and the index of its first message; the registrations collect the
        // errors until the commit is answered.
        let mut sent: Vec<(std::ops::Range<u32>, usize)> = Vec::new();
        let mut registrations = Vec::new();
        let mut count = 0;
        let mut unencoded = None;
        for chunk in chunks {
            let msgs = match chunk {
                Ok(chunk) => chunk,
                Err(e) => {
                    unencoded = Some(e);
                    break;
                }
            };
            let msgs = msgs.as_ref();
            let (xids, out) = match self.encode_all(Vec::new(), msgs, |xid, msg, out| {
                emit_bundle_add(bundle_id, flags, msg.as_bytes(), xid, out)
            }) {
                Ok(encoded) => encoded,
                Err(ConnError::Encode(e)) => {
                    unencoded = Some(e);
                    break;
                }
                Err(other) => return Err(other),
            };
            registrations.push(session.collect_errors(xids.clone(), &collected)?);
            session.write(out)?;
            sent.push((xids, count));
            count += msgs.len();
            tokio::task::yield_now().await;
        }
        if unencoded.is_none() {
            queued();
        }
        // The switch handles messages in order, so the barrier reply means the open's reply and
        // every add error are in.
        let barrier_xid = self.shared().next_xid();
        let mut barrier = Vec::with_capacity(HEADER_LEN);
        BarrierRequest.emit(barrier_xid, &mut barrier)?;
        session.request(barrier_xid, barrier).await?;
        let opened = opened
            .wait()
            .await
            .and_then(|reply| reply.parse::<BundleControl>());
        let added = rejections(&sent, &collected);
        if opened.is_err() || !added.is_empty() || unencoded.is_some() {
            // Discard even when the open failed: a switch may create the bundle on the first add.
            if let Err(e) = bundle_control(BundleCtrlType::DiscardRequest).await {
                tracing::warn!(bundle_id, error = %e, "discarding a failed bundle failed");
            }
            return Err(match (opened, unencoded) {
                (Err(e), _) => as_bundle_error(e, added),
                (Ok(_), Some(e)) if added.is_empty() => ConnError::Encode(e),
                (Ok(_), _) => ConnError::BundleRejected {
                    rejections: added,
                    control: None,
                },
            });
        }
        let committed = bundle_control(BundleCtrlType::CommitRequest).await;
        drop(registrations);
        committed
            .map(|_| count)
            .map_err(|e| as_bundle_error(e, rejections(&sent, &collected)))
    }

    /// Gives the messages consecutive fresh xids and appends each with `emit(xid, msg, out)`
    /// to `out` (grown for them plus a barrier); returns the xids and the buffer.
    fn encode_all(
        &self,
        mut out: Vec<u8>,
        msgs: &[Encoded],
        emit: impl Fn(u32, &Encoded, &mut Vec<u8>) -> Result<(), EncodeError>,
    ) -> Result<(std::ops::Range<u32>, Vec<u8>), ConnError> {
        let n = u32::try_from(msgs.len()).map_err(|_| EncodeError {
            msg_type: 0,
            len: msgs.len(),
            max: u32::MAX as usize,
        })?;
        let xids = self.shared().next_xids(n);
        // Room for a bundle-add header per message and the closing barrier.
        out.reserve(msgs.iter().map(|m| m.0.len() + 16).sum::<usize>() + HEADER_LEN);
        for (xid, msg) in xids.clone().zip(msgs) {
            emit(xid, msg, &mut out)?;
        }
        Ok((xids, out))
    }
}

/// The collected errors as rejections, with each message's index in the batch (in arrival
/// order, which is the switch's processing order): `sent` gives each chunk's xids and the index
/// of its first message.
fn rejections(sent: &[(std::ops::Range<u32>, usize)], collected: &Collected) -> Vec<Rejection> {
    let collected = collected.lock().map(|c| c.clone()).unwrap_or_default();
    collected
        .into_iter()
        .filter_map(|(xid, error)| {
            let (xids, first) = sent.iter().find(|(xids, _)| xids.contains(&xid))?;
            Some(Rejection {
                index: first + (xid - xids.start) as usize,
                xid,
                error,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::echo::EchoRequest;
    use crate::msg::error::ErrorMsg;

    #[test]
    fn encoded_messages_get_their_xid_filled_in() {
        let encoded = Encoded::new(&EchoRequest { payload: vec![7] }).unwrap();
        assert_eq!(encoded.msg_type(), crate::header::msg_type::ECHO_REQUEST);
        let mut out = vec![0xee];
        encoded.emit_with_xid(0x0a0b0c0d, &mut out);
        assert_eq!(out, [0xee, 6, 2, 0, 9, 0x0a, 0x0b, 0x0c, 0x0d, 7]);
        assert!(
            Encoded::new(&EchoRequest {
                payload: vec![0; 65528]
            })
            .is_err()
        );
    }

    #[test]
    fn encoded_from_bytes_checks_the_header() {
        assert!(Encoded::from_bytes(vec![6, 2, 0, 8, 0, 0, 0, 1]).is_ok());
        assert!(matches!(
            Encoded::from_bytes(vec![6, 2, 0, 8]),
            Err(DecodeError::Truncated { .. })
        ));
        assert!(matches!(
            Encoded::from_bytes(vec![6, 2, 0, 9, 0, 0, 0, 1]),
            Err(DecodeError::BadLength { len: 9, .. })
        ));
    }

    #[test]
    fn rejections_keep_batch_order_and_ignore_foreign_xids() {
        let error = |code| ErrorMsg {
            kind: crate::msg::error::ErrorKind::Standard { err_type: 2, code },
            data: vec![],
        };
        let collected = Collected::default();
        collected
            .lock()
            .unwrap()
            .extend([(12, error(4)), (99, error(1)), (10, error(5))]);
        let r = rejections(&[(10..13, 0)], &collected);
        assert_eq!(
            r.iter().map(|r| (r.index, r.xid)).collect::<Vec<_>>(),
            [(2, 12), (0, 10)]
        );
        assert_eq!(
            ConnError::BatchRejected(r).error_names(),
            ["OFPBAC_BAD_OUT_PORT", "OFPBAC_BAD_ARGUMENT"]
        );
    }
}
