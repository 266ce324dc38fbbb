//! The OVSDB client: a cloneable handle over one supervised connection. Requests are correlated
//! by id; the server's echo requests are answered; an inactivity probe detects dead peers; the
//! connection is re-established after a loss and monitors are re-sent (their streams see a
//! `Disconnected` event, then a fresh `Snapshot`). Requests outstanding when a connection ends
//! fail with [`Error::Disconnected`]; requests made while reconnecting fail with
//! [`Error::NotConnected`].

mod config;
mod connection;
mod monitor_stream;
mod shared;
mod supervisor;

use std::sync::Arc;

use localipc::Endpoint;
use serde_json::{Map, Value as Json};
use tokio::sync::{broadcast, oneshot, watch};

pub use config::ClientConfig;
pub use monitor_stream::Monitor;

use crate::error::{DisconnectReason, Error};
use crate::monitor::{MonitorEvent, MonitorRequest};
use crate::schema::DatabaseSchema;
use crate::txn::{TransactOutcome, Transaction};
use connection::Pending;
use shared::Shared;

/// Where the client stands with its server.
#[derive(Debug, Clone)]
pub enum ConnectionState {
    /// Before the first connection is up.
    Connecting,
    /// Connected; `generation` counts connections (1 for the first).
    Connected {
        /// Connection number.
        generation: u64,
    },
    /// The connection was lost; reconnecting.
    Reconnecting(DisconnectReason),
    /// Finished (client dropped, or connection lost with reconnection disabled).
    Closed(DisconnectReason),
}

/// A lock notification (`locked` / `stolen`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockEvent {
    /// A lock this session waited for is now owned.
    Locked(String),
    /// Another session stole a lock this session owned.
    Stolen(String),
}

/// A handle to an OVSDB connection. Clones share the connection; it closes when the last clone
/// drops.
#[derive(Debug, Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    shared: Arc<Shared>,
    /// Dropped with the last handle, which stops the supervisor.
    _shutdown: watch::Sender<()>,
}

/// A transaction sent but not yet answered; its id can be passed to [`Client::cancel`].
#[derive(Debug)]
pub struct InFlightTransact {
    id: u64,
    transaction: Transaction,
    reply: oneshot::Receiver<Result<Json, Error>>,
}

impl InFlightTransact {
    /// The JSON-RPC id of the `transact` request.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Waits for the outcome.
    pub async fn outcome(self) -> Result<TransactOutcome, Error> {
        let json = receive("transact", self.reply).await?;
        match TransactOutcome::parse(self.transaction.operations(), &json) {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(failure)) => Err(Error::Transaction(failure)),
            Err(reason) => Err(Error::bad_reply("transact", reason)),
        }
    }
}

impl Client {
    /// Connects to `endpoint` (see [`ClientConfig`] for the attempts made).
    pub async fn connect(endpoint: Endpoint, config: ClientConfig) -> Result<Client, Error> {
        let shared = Arc::new(Shared::new(
            Some(endpoint.clone()),
            endpoint.to_string(),
            config,
        ));
        let stream = supervisor::connect_first(&shared).await?;
        Ok(Client::start(shared, stream).await)
    }

    /// Runs the protocol over an already connected `stream` (any transport, e.g. an in-memory
    /// pipe); `peer` names it in errors. There is no endpoint to redial, so the client does not
    /// reconnect.
    pub async fn over_stream(stream: localipc::Stream, peer: &str, config: ClientConfig) -> Client {
        Client::start(Arc::new(Shared::new(None, peer.to_owned(), config)), stream).await
    }

    async fn start(shared: Arc<Shared>, stream: localipc::Stream) -> Client {
        let (shutdown, shutdown_rx) = watch::channel(());
        let mut state = shared.state.subscribe();
        tokio::spawn(supervisor::supervise(shared.clone(), stream, shutdown_rx));
        // Return once the connection is installed, so the first request finds it.
        let _ = state
            .wait_for(|s| !matches!(s, ConnectionState::Connecting))
            .await;
        Client {
            inner: Arc::new(Inner {
                shared,
                _shutdown: shutdown,
            }),
        }
    }

    /// The server's address (`None` for a client made with [`Client::over_stream`]).
    pub fn endpoint(&self) -> Option<&Endpoint> {
        self.inner.shared.endpoint.as_ref()
    }

    /// The server's name in messages.
    pub fn peer(&self) -> &str {
        &self.inner.shared.peer
    }

    /// Connection state changes.
    pub fn connection_state(&self) -> watch::Receiver<ConnectionState> {
        self.inner.shared.state.subscribe()
    }

    /// `locked` / `stolen` notifications.
    pub fn lock_events(&self) -> broadcast::Receiver<LockEvent> {
        self.inner.shared.lock_events.subscribe()
    }

    /// Sends any request and returns its raw result.
    pub async fn call(&self, method: &'static str, params: Vec<Json>) -> Result<Json, Error> {
        let (reply, rx) = oneshot::channel();
        self.inner
            .shared
            .conn()?
            .request(method, params, Pending::Call { method, reply })?;
        receive(method, rx).await
    }

    /// `list_dbs`: the databases the server has.
    pub async fn list_dbs(&self) -> Result<Vec<String>, Error> {
        let json = self.call("list_dbs", vec![]).await?;
        json.as_array()
            .and_then(|a| a.iter().map(|d| d.as_str().map(str::to_owned)).collect())
            .ok_or_else(|| {
                Error::bad_reply(
                    "list_dbs",
                    format!("expected an array of names, got {json}"),
                )
            })
    }

    /// `get_schema`, parsed.
    pub async fn get_schema(&self, database: &str) -> Result<DatabaseSchema, Error> {
        let json = self.call("get_schema", vec![Json::from(database)]).await?;
        Ok(DatabaseSchema::parse(&json)?)
    }

    /// `transact`: runs the transaction and returns one typed result per operation, or
    /// [`Error::Transaction`] naming the failing operation with the server's error and details.
    pub async fn transact(&self, transaction: &Transaction) -> Result<TransactOutcome, Error> {
        self.start_transact(transaction.clone())?.outcome().await
    }

    /// Sends a transaction without waiting, so that it can be cancelled.
    pub fn start_transact(&self, transaction: Transaction) -> Result<InFlightTransact, Error> {
        let (reply, rx) = oneshot::channel();
        let id = self.inner.shared.conn()?.request(
            "transact",
            transaction.to_params(),
            Pending::Call {
                method: "transact",
                reply,
            },
        )?;
        Ok(InFlightTransact {
            id,
            transaction,
            reply: rx,
        })
    }

    /// `cancel`: asks the server to abandon the outstanding request `id` (a transaction blocked
    /// in a `wait`); that request fails with [`Error::Canceled`]. Unknown or finished ids are
    /// ignored.
    pub fn cancel(&self, id: u64) -> Result<(), Error> {
        self.inner.shared.conn()?.cancel(id)
    }

    /// `echo`: the server returns `params`.
    pub async fn echo(&self, params: Vec<Json>) -> Result<Vec<Json>, Error> {
        match self.call("echo", params).await? {
            Json::Array(a) => Ok(a),
            other => Err(Error::bad_reply(
                "echo",
                format!("expected an array, got {other}"),
            )),
        }
    }

    /// `monitor` (RFC 7047): the stream starts with the current contents as a `Snapshot`, then
    /// delivers `Update`s.
    pub async fn monitor<'a>(
        &self,
        database: &str,
        tables: impl IntoIterator<Item = (&'a str, MonitorRequest)>,
    ) -> Result<Monitor, Error> {
        self.start_monitor(database, tables, false).await
    }

    /// `monitor_cond`: like [`Client::monitor`] with per-table conditions and `update2` diffs.
    pub async fn monitor_cond<'a>(
        &self,
        database: &str,
        tables: impl IntoIterator<Item = (&'a str, MonitorRequest)>,
    ) -> Result<Monitor, Error> {
        self.start_monitor(database, tables, true).await
    }

    async fn start_monitor<'a>(
        &self,
        database: &str,
        tables: impl IntoIterator<Item = (&'a str, MonitorRequest)>,
        v2: bool,
    ) -> Result<Monitor, Error> {
        let requests: Map<String, Json> = tables
            .into_iter()
            .map(|(t, r)| (t.to_owned(), r.to_json(v2)))
            .collect();
        let shared = &self.inner.shared;
        let (id, events) = shared.register_monitor(database, v2, Json::Object(requests));
        let started = async {
            let (method, params, v2) =
                shared
                    .monitor_request(&id)
                    .ok_or_else(|| Error::NotConnected {
                        endpoint: shared.peer.clone(),
                    })?;
            let (ack, ack_rx) = oneshot::channel();
            shared.conn()?.request(
                method,
                params,
                Pending::Monitor {
                    monitor_id: id.clone(),
                    v2,
                    ack: Some(ack),
                },
            )?;
            match ack_rx.await {
                Ok(result) => result,
                Err(_) => Err(Error::Disconnected {
                    method: method.to_owned(),
                    reason: DisconnectReason::Shutdown,
                }),
            }
        };
        match started.await {
            Ok(()) => Ok(Monitor::new(id, events, self.inner.shared.clone())),
            Err(e) => {
                shared.unregister_monitor(&id);
                Err(e)
            }
        }
    }

    /// `lock`: true if the lock is now owned; otherwise a `Locked` event follows when it is.
    pub async fn lock(&self, lock: &str) -> Result<bool, Error> {
        let json = self.call("lock", vec![Json::from(lock)]).await?;
        locked_flag("lock", &json)
    }

    /// `steal`: takes the lock from its owner (who gets a `Stolen` event).
    pub async fn steal(&self, lock: &str) -> Result<bool, Error> {
        let json = self.call("steal", vec![Json::from(lock)]).await?;
        locked_flag("steal", &json)
    }

    /// `unlock`: releases (or stops waiting for) the lock.
    pub async fn unlock(&self, lock: &str) -> Result<(), Error> {
        self.call("unlock", vec![Json::from(lock)]).await.map(drop)
    }
}

fn locked_flag(method: &str, json: &Json) -> Result<bool, Error> {
    json.get("locked").and_then(Json::as_bool).ok_or_else(|| {
        Error::bad_reply(method, format!("expected {{\"locked\": bool}}, got {json}"))
    })
}

async fn receive(method: &str, rx: oneshot::Receiver<Result<Json, Error>>) -> Result<Json, Error> {
    rx.await.unwrap_or_else(|_| {
        Err(Error::Disconnected {
            method: method.to_owned(),
            reason: DisconnectReason::Shutdown,
        })
    })
}
