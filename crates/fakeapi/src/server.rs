//! The fake server handle: shared state plus the control hooks tests use to seed objects,
//! simulate outages, force compaction and inspect requests and watches.

use crate::error::StoreError;
use crate::resource::ResourceType;
use crate::review::{BoundPod, TokenBook, TokenUser};
use crate::store::{DEFAULT_HISTORY_LIMIT, Store};
use bytes::Bytes;
use http::Method;
use k8s_openapi::api::core::v1::{Node, Pod, ServiceAccount};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// One request as received, for assertions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    /// HTTP method.
    pub method: Method,
    /// URL path.
    pub path: String,
    /// Raw query string ("" if none).
    pub query: String,
    /// `Content-Type` header ("" if none).
    pub content_type: String,
    /// `Accept` header ("" if none).
    pub accept: String,
    /// Request body.
    pub body: Bytes,
}

impl RecordedRequest {
    /// Whether the query has parameter `key` with value `value`.
    pub fn has_param(&self, key: &str, value: &str) -> bool {
        form_urlencoded::parse(self.query.as_bytes()).any(|(k, v)| k == key && v == value)
    }
}

/// State shared by the handle, the transports and open watch streams.
#[derive(Debug)]
pub(crate) struct Shared {
    store: Mutex<Store>,
    pub(crate) available: AtomicBool,
    requests: Mutex<Vec<RecordedRequest>>,
    tokens: Mutex<TokenBook>,
    record_requests: bool,
    pub(crate) bookmark_interval: Option<Duration>,
    /// Whether the EndpointSlice controller was started.
    pub(crate) endpointslice_controller: AtomicBool,
}

impl Shared {
    /// A new token of ServiceAccount `namespace/name` (what `kubectl create token` gives), which
    /// TokenReview accepts from now on; the user's uid is the stored ServiceAccount's, if any.
    pub(crate) fn issue_service_account_token(&self, namespace: &str, name: &str) -> String {
        let uid = self
            .stored::<ServiceAccount>(namespace, name)
            .map(|sa| text_at(&sa, "/metadata/uid"))
            .unwrap_or_default();
        let mut tokens = self.tokens();
        let id = tokens.next_id();
        let token = format!("{id}.{namespace}.{name}");
        tokens.add(
            &token,
            TokenUser::service_account(namespace, name, &uid, &id),
        );
        token
    }

    /// A new token of ServiceAccount `namespace/service_account` bound to the stored Pod
    /// `namespace/pod` (what `kubectl create token SA --bound-object-kind Pod
    /// --bound-object-name POD` gives, and what kubelet mounts into a Pod): the user carries the
    /// extras `authentication.kubernetes.io/pod-name` and `pod-uid`, and, when the Pod is
    /// scheduled and its Node object exists, `node-name` and `node-uid` (as Kubernetes 1.32 and
    /// later add them). TokenReview accepts the token while that Pod (same uid) exists. Errors as
    /// the API server refuses: the Pod does not exist (`NotFound`), or it runs as another
    /// ServiceAccount (`BadRequest`).
    pub(crate) fn issue_pod_bound_token(
        &self,
        namespace: &str,
        service_account: &str,
        pod: &str,
    ) -> Result<String, StoreError> {
        let stored = self
            .stored::<Pod>(namespace, pod)
            .ok_or_else(|| StoreError::NotFound {
                kind: "pods".to_owned(),
                name: pod.to_owned(),
            })?;
        let runs_as = stored
            .pointer("/spec/serviceAccountName")
            .and_then(Value::as_str)
            .unwrap_or("default");
        if runs_as != service_account {
            return Err(StoreError::BadRequest(format!(
                "cannot bind a token of ServiceAccount {service_account:?} to Pod {pod:?}, which runs as {runs_as:?}"
            )));
        }
        let pod_uid = text_at(&stored, "/metadata/uid");
        let node = Some(text_at(&stored, "/spec/nodeName"))
            .filter(|name| !name.is_empty())
            .and_then(|name| {
                let node = self.stored::<Node>("", &name)?;
                Some((name, text_at(&node, "/metadata/uid")))
            });
        let sa_uid = self
            .stored::<ServiceAccount>(namespace, service_account)
            .map(|sa| text_at(&sa, "/metadata/uid"))
            .unwrap_or_default();

        let mut tokens = self.tokens();
        let id = tokens.next_id();
        let token = format!("{id}.{namespace}.{service_account}.{pod}");
        let mut user = TokenUser::service_account(namespace, service_account, &sa_uid, &id);
        let mut extra = |key: &str, value: String| {
            user.extra
                .insert(format!("authentication.kubernetes.io/{key}"), vec![value]);
        };
        extra("pod-name", pod.to_owned());
        extra("pod-uid", pod_uid.clone());
        if let Some((node_name, node_uid)) = node {
            extra("node-name", node_name);
            extra("node-uid", node_uid);
        }
        tokens.add_bound(
            &token,
            user,
            BoundPod {
                namespace: namespace.to_owned(),
                name: pod.to_owned(),
                uid: pod_uid,
            },
        );
        Ok(token)
    }

    /// The store, locked. A panic while it was held cannot leave it half-written (every write is
    /// one `commit`), so a poisoned lock is still usable.
    pub(crate) fn store(&self) -> MutexGuard<'_, Store> {
        self.store.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The stored object `namespace/name` of kind `K`.
    pub(crate) fn stored<K: k8s_openapi::Resource>(
        &self,
        namespace: &str,
        name: &str,
    ) -> Option<Arc<Value>> {
        let store = self.store();
        let resource = store.resource(&ResourceType::id_of::<K>()).ok()?;
        store.get(resource, namespace, name)
    }

    /// The tokens TokenReview accepts.
    pub(crate) fn tokens(&self) -> MutexGuard<'_, TokenBook> {
        self.tokens.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn record(&self, request: RecordedRequest) {
        if self.record_requests {
            self.requests
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(request);
        }
    }
}

/// Settings of a new fake server.
#[derive(Debug, Clone)]
pub struct FakeApiServerBuilder {
    history_limit: usize,
    bookmark_interval: Option<Duration>,
    record_requests: bool,
    resources: Vec<ResourceType>,
}

impl Default for FakeApiServerBuilder {
    fn default() -> Self {
        Self {
            history_limit: DEFAULT_HISTORY_LIMIT,
            bookmark_interval: None,
            record_requests: true,
            resources: ResourceType::builtin(),
        }
    }
}

impl FakeApiServerBuilder {
    /// How many changes are kept for watch resumption (older versions get 410 Gone).
    pub fn history_limit(mut self, changes: usize) -> Self {
        self.history_limit = changes;
        self
    }

    /// Send a BOOKMARK on every watch that allows bookmarks this often (default: only on
    /// [`FakeApiServer::send_bookmarks`]).
    pub fn bookmark_interval(mut self, every: Duration) -> Self {
        self.bookmark_interval = Some(every);
        self
    }

    /// Whether to keep the request log (default on; turn off for large benchmarks).
    pub fn record_requests(mut self, on: bool) -> Self {
        self.record_requests = on;
        self
    }

    /// Serve one more resource type (e.g. a CRD) besides the built-in table.
    pub fn resource(mut self, resource: ResourceType) -> Self {
        self.resources.retain(|r| r.id() != resource.id());
        self.resources.push(resource);
        self
    }

    /// The server.
    pub fn build(self) -> FakeApiServer {
        FakeApiServer {
            shared: Arc::new(Shared {
                store: Mutex::new(Store::new(self.resources, self.history_limit)),
                available: AtomicBool::new(true),
                requests: Mutex::new(Vec::new()),
                tokens: Mutex::new(TokenBook::default()),
                record_requests: self.record_requests,
                bookmark_interval: self.bookmark_interval,
                endpointslice_controller: AtomicBool::new(false),
            }),
        }
    }
}

/// An in-memory Kubernetes API server. Cloning gives another handle to the same server.
#[derive(Debug, Clone)]
pub struct FakeApiServer {
    pub(crate) shared: Arc<Shared>,
}

impl Default for FakeApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl FakeApiServer {
    /// A server with default settings.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// Settings for a new server.
    pub fn builder() -> FakeApiServerBuilder {
        FakeApiServerBuilder::default()
    }

    /// The resource type serving `K`.
    pub fn resource_of<K: k8s_openapi::Resource>(&self) -> Result<ResourceType, StoreError> {
        self.shared
            .store()
            .resource(&ResourceType::id_of::<K>())
            .cloned()
    }

    /// Creates `object`, or replaces the stored one unconditionally; server-owned metadata
    /// (uid, creationTimestamp, resourceVersion) is assigned. Returns the stored object.
    pub fn insert<K>(&self, object: &K) -> Result<K, StoreError>
    where
        K: k8s_openapi::Resource + Serialize + DeserializeOwned,
    {
        let stored = self.insert_json(&self.resource_of::<K>()?, serde_json::to_value(object)?)?;
        Ok(serde_json::from_value(stored)?)
    }

    /// [`FakeApiServer::insert`] for a raw JSON object of `resource`.
    pub fn insert_json(&self, resource: &ResourceType, object: Value) -> Result<Value, StoreError> {
        Ok(self.shared.store().put(resource, object)?.as_ref().clone())
    }

    /// The stored object (`namespace` is ignored for cluster-scoped kinds).
    pub fn get<K>(&self, namespace: &str, name: &str) -> Result<Option<K>, StoreError>
    where
        K: k8s_openapi::Resource + DeserializeOwned,
    {
        let resource = self.resource_of::<K>()?;
        let stored = self.shared.store().get(&resource, namespace, name);
        Ok(stored
            .map(|v| serde_json::from_value(v.as_ref().clone()))
            .transpose()?)
    }

    /// [`FakeApiServer::get`] as raw JSON.
    pub fn get_json(&self, resource: &ResourceType, namespace: &str, name: &str) -> Option<Value> {
        self.shared
            .store()
            .get(resource, namespace, name)
            .map(|v| v.as_ref().clone())
    }

    /// Deletes the object; watches see DELETED. Returns its last state.
    pub fn delete<K>(&self, namespace: &str, name: &str) -> Result<K, StoreError>
    where
        K: k8s_openapi::Resource + DeserializeOwned,
    {
        let deleted = self.delete_json(&self.resource_of::<K>()?, namespace, name)?;
        Ok(serde_json::from_value(deleted)?)
    }

    /// [`FakeApiServer::delete`] for any resource, returning raw JSON.
    pub fn delete_json(
        &self,
        resource: &ResourceType,
        namespace: &str,
        name: &str,
    ) -> Result<Value, StoreError> {
        Ok(self
            .shared
            .store()
            .delete(resource, namespace, name, None)?
            .as_ref()
            .clone())
    }

    /// Number of stored objects of `K`.
    pub fn count<K: k8s_openapi::Resource>(&self) -> Result<usize, StoreError> {
        let resource = self.resource_of::<K>()?;
        Ok(self.shared.store().count(&resource))
    }

    /// The latest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.store().resource_version()
    }

    /// `false`: every request fails at the transport level (the in-process service returns
    /// [`crate::Unavailable`], a TCP connection is closed without a response) and every open watch
    /// body fails, like an apiserver that went away. Not a 503 response: kube-rs clients built from
    /// a kubeconfig retry 503 for minutes, which hides the outage from watchers. `true`: serve again.
    pub fn set_available(&self, available: bool) {
        self.shared.available.store(available, Ordering::SeqCst);
        if !available {
            self.shared.store().break_watches();
        }
        tracing::info!(available, "fakeapi availability changed");
    }

    /// Drops all change history: resuming a watch or continuing a list from any older version
    /// gets 410 Gone, and open watches end with a 410 ERROR event, so clients relist.
    pub fn compact(&self) {
        self.shared.store().compact();
    }

    /// Changes how many changes are kept for watch resumption.
    pub fn set_history_limit(&self, changes: usize) {
        self.shared.store().set_history_limit(changes);
    }

    /// Sends a BOOKMARK at the current resourceVersion on every watch that allows bookmarks.
    pub fn send_bookmarks(&self) {
        self.shared.store().bookmark_all();
    }

    /// Number of open watch streams.
    pub fn active_watches(&self) -> usize {
        self.shared.store().active_watches(None)
    }

    /// Number of open watch streams on `K`.
    pub fn active_watches_of<K: k8s_openapi::Resource>(&self) -> usize {
        self.shared
            .store()
            .active_watches(Some(&ResourceType::id_of::<K>()))
    }

    /// A new token of ServiceAccount `namespace/name` (what `kubectl create token` gives), which
    /// TokenReview accepts from now on; the user's uid is the stored ServiceAccount's, if any.
    pub fn issue_service_account_token(&self, namespace: &str, name: &str) -> String {
        self.shared.issue_service_account_token(namespace, name)
    }

    /// A new token of ServiceAccount `namespace/service_account` bound to the stored Pod
    /// `namespace/pod` (what `kubectl create token SA --bound-object-kind Pod
    /// --bound-object-name POD` gives, and what kubelet mounts into a Pod): the user carries the
    /// extras `authentication.kubernetes.io/pod-name` and `pod-uid`, and, when the Pod is
    /// scheduled and its Node object exists, `node-name` and `node-uid` (as Kubernetes 1.32 and
    /// later add them). TokenReview accepts the token while that Pod (same uid) exists. Errors as
    /// the API server refuses: the Pod does not exist (`NotFound`), or it runs as another
    /// ServiceAccount (`BadRequest`).
    pub fn issue_pod_bound_token(
        &self,
        namespace: &str,
        service_account: &str,
        pod: &str,
    ) -> Result<String, StoreError> {
        self.shared
            .issue_pod_bound_token(namespace, service_account, pod)
    }

    /// TokenReview accepts `token` as `user` from now on.
    pub fn add_token(&self, token: &str, user: TokenUser) {
        self.shared.tokens().add(token, user);
    }

    /// TokenReview accepts `token` no more; whether it was known.
    pub fn revoke_token(&self, token: &str) -> bool {
        self.shared.tokens().revoke(token)
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Empties the request log.
    pub fn clear_requests(&self) {
        self.shared
            .requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// The string at `pointer` in `object`, or "".
fn text_at(object: &Value, pointer: &str) -> String {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}
