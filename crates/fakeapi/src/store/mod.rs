//! The object store: every object as JSON under (group/version/resource, namespace, name), a
//! global etcd-like resourceVersion, the bounded change history and the open watches.
//!
//! Every write goes through [`Store::commit`], which stamps the new resourceVersion, appends the
//! change to the history and hands it to the matching watches while the store lock is held, so
//! replay and live delivery can never reorder or miss a change. The same commit also hands each
//! change to the in-process observers ([`Store::observe`]), which the server's own controllers
//! read.

pub(crate) mod meta;
mod watch;

pub use watch::{WatchItem, WatchStart};

use crate::error::StoreError;
use crate::resource::ResourceType;
use crate::selector::ObjectFilter;
use meta::{meta_str, metadata_mut};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

/// Storage key: (resource id, namespace or "", name).
type Key = (String, String, String);

/// Default number of changes kept for watch resumption.
pub const DEFAULT_HISTORY_LIMIT: usize = 10_000;

/// One committed change. `after` is `None` for a deletion, `before` is `None` for a creation.
#[derive(Debug)]
struct Change {
    rv: u64,
    resource_id: String,
    before: Option<Arc<Value>>,
    after: Option<Arc<Value>>,
}

/// A committed change as an in-process observer sees it (see [`Store::observe`]).
#[derive(Debug, Clone)]
pub struct Observed {
    /// Id (`group/version/plural`) of the changed object's resource.
    pub resource_id: String,
    /// The object before the change (`None` for a creation).
    pub before: Option<Arc<Value>>,
    /// The object after the change (`None` for a deletion).
    pub after: Option<Arc<Value>>,
}

/// Which parts of an object a replace or patch may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateScope {
    /// The main resource: `status` is kept from the stored object when the kind has a status
    /// subresource.
    Main,
    /// The `status` subresource: only `status` changes.
    Status,
    /// Everything (control hooks).
    All,
}

/// Where the next page of a list continues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinueToken {
    /// resourceVersion of the first page; every page reports it.
    pub rv: u64,
    /// Namespace of the last item returned.
    pub namespace: String,
    /// Name of the last item returned.
    pub name: String,
}

impl ContinueToken {
    /// The opaque text form sent to clients.
    pub fn encode(&self) -> String {
        format!("{}:{}/{}", self.rv, self.namespace, self.name)
    }

    /// Parses a token produced by [`ContinueToken::encode`].
    pub fn decode(text: &str) -> Result<Self, StoreError> {
        let bad = || StoreError::BadRequest(format!("invalid continue token {text:?}"));
        let (rv, rest) = text.split_once(':').ok_or_else(bad)?;
        let (namespace, name) = rest.split_once('/').ok_or_else(bad)?;
        Ok(Self {
            rv: rv.parse().map_err(|_| bad())?,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        })
    }
}

/// One page of a list.
#[derive(Debug)]
pub struct Page {
    /// The list's resourceVersion.
    pub rv: u64,
    /// Matching objects in key order.
    pub items: Vec<Arc<Value>>,
    /// Set when more matching objects follow.
    pub next: Option<ContinueToken>,
}

/// All state of one fake API server.
#[derive(Debug)]
pub struct Store {
    resources: Vec<ResourceType>,
    objects: BTreeMap<Key, Arc<Value>>,
    rv: u64,
    history: VecDeque<Change>,
    history_limit: usize,
    /// Watches may resume from any version >= this one.
    oldest_rv: u64,
    next_uid: u64,
    watches: watch::Watches,
    observers: Vec<Sender<Observed>>,
}

impl Store {
    /// An empty store serving `resources`, keeping `history_limit` changes for watch resumption.
    pub fn new(resources: Vec<ResourceType>, history_limit: usize) -> Self {
        Self {
            resources,
            objects: BTreeMap::new(),
            rv: 1,
            history: VecDeque::new(),
            history_limit,
            oldest_rv: 1,
            next_uid: 1,
            watches: watch::Watches::default(),
            observers: Vec::new(),
        }
    }

    /// All served resource types.
    pub fn resources(&self) -> &[ResourceType] {
        &self.resources
    }

    /// The resource type with id `group/version/plural`.
    pub fn resource(&self, id: &str) -> Result<&ResourceType, StoreError> {
        self.resources
            .iter()
            .find(|r| r.id() == id)
            .ok_or_else(|| StoreError::UnknownResource(id.to_owned()))
    }

    /// The current (latest committed) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    /// The stored object, if any.
    pub fn get(&self, resource: &ResourceType, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.objects.get(&key(resource, namespace, name)).cloned()
    }

    /// The stored object, or NotFound.
    pub fn require(
        &self,
        resource: &ResourceType,
        namespace: &str,
        name: &str,
    ) -> Result<Arc<Value>, StoreError> {
        self.get(resource, namespace, name)
            .ok_or_else(|| StoreError::NotFound {
                kind: resource.plural.clone(),
                name: name.to_owned(),
            })
    }

    /// Number of stored objects of `resource`.
    pub fn count(&self, resource: &ResourceType) -> usize {
        let id = resource.id();
        self.objects
            .range(start_key(&id, None)..)
            .take_while(|(k, _)| k.0 == id)
            .count()
    }

    /// One page of matching objects. `limit` 0 means no limit.
    pub fn list(
        &self,
        resource: &ResourceType,
        filter: &ObjectFilter,
        limit: usize,
        token: Option<&ContinueToken>,
    ) -> Result<Page, StoreError> {
        let id = resource.id();
        let rv = match token {
            Some(t) if t.rv < self.oldest_rv => {
                return Err(StoreError::Expired {
                    requested: t.rv,
                    oldest: self.oldest_rv,
                });
            }
            Some(t) => t.rv,
            None => self.rv,
        };
        let start = match token {
            Some(t) => Bound::Excluded((id.clone(), t.namespace.clone(), t.name.clone())),
            None => Bound::Included(start_key(&id, filter.namespace.as_deref())),
        };
        let in_scope = |k: &Key| k.0 == id && filter.namespace.as_ref().is_none_or(|ns| &k.1 == ns);
        let mut matching = self
            .objects
            .range((start, Bound::Unbounded))
            .take_while(|(k, _)| in_scope(k))
            .filter(|(_, v)| filter.matches(v));
        let mut items = Vec::new();
        let mut last = None;
        for (k, v) in matching.by_ref() {
            items.push(v.clone());
            last = Some(k);
            if limit != 0 && items.len() == limit {
                break;
            }
        }
        let more = limit != 0 && items.len() == limit && matching.next().is_some();
        let next = match (more, last) {
            (true, Some(k)) => Some(ContinueToken {
                rv,
                namespace: k.1.clone(),
                name: k.2.clone(),
            }),
            _ => None,
        };
        Ok(Page { rv, items, next })
    }

    /// Creates an object (assigning uid, creationTimestamp, resourceVersion, and a name from
    /// `generateName` if needed). `namespace` comes from the URL.
    pub fn create(
        &mut self,
        resource: &ResourceType,
        namespace: Option<&str>,
        mut object: Value,
    ) -> Result<Arc<Value>, StoreError> {
        meta::normalize(resource, &mut object, namespace)?;
        self.fill_name(resource, &mut object)?;
        let k = key(
            resource,
            meta_str(&object, "namespace"),
            meta_str(&object, "name"),
        );
        if self.objects.contains_key(&k) {
            return Err(StoreError::AlreadyExists {
                kind: resource.plural.clone(),
                name: k.2,
            });
        }
        let uid = self.new_uid();
        let meta = metadata_mut(&mut object)?;
        meta.insert("uid".into(), Value::String(uid));
        meta.insert("creationTimestamp".into(), meta::now());
        meta.remove("resourceVersion");
        Ok(self.commit(resource, k, None, Some(object)))
    }

    /// Replaces an object. A non-empty `metadata.resourceVersion` in `object` must equal the stored
    /// one (409 Conflict otherwise); `scope` restricts what may change.
    pub fn replace(
        &mut self,
        resource: &ResourceType,
        namespace: &str,
        name: &str,
        object: Value,
        scope: UpdateScope,
    ) -> Result<Arc<Value>, StoreError> {
        self.modify(resource, namespace, name, scope, |_| Ok(object))
    }

    /// Changes an object with `change` (applied to a copy of the stored object) under the store
    /// lock; the same resourceVersion precondition and scope rules as [`Store::replace`] apply to
    /// its result.
    pub fn modify(
        &mut self,
        resource: &ResourceType,
        namespace: &str,
        name: &str,
        scope: UpdateScope,
        change: impl FnOnce(&Value) -> Result<Value, StoreError>,
    ) -> Result<Arc<Value>, StoreError> {
        let k = key(resource, namespace, name);
        let stored = self.require(resource, namespace, name)?;
        let mut object = change(&stored)?;
        meta::normalize(
            resource,
            &mut object,
            resource.namespaced.then_some(namespace),
        )?;
        let (body_ns, body_name) = (meta_str(&object, "namespace"), meta_str(&object, "name"));
        if body_name != name || body_ns != namespace {
            return Err(StoreError::BadRequest(format!(
                "the name/namespace of the object ({body_ns}/{body_name}) does not match the request ({namespace}/{name})"
            )));
        }
        let body_rv = meta_str(&object, "resourceVersion");
        let stored_rv = meta_str(&stored, "resourceVersion");
        if scope != UpdateScope::All && !body_rv.is_empty() && body_rv != stored_rv {
            return Err(StoreError::Conflict {
                kind: resource.plural.clone(),
                name: name.to_owned(),
                reason: format!(
                    "the object has been modified; please apply your changes to the latest version and try again (have {body_rv}, current {stored_rv})"
                ),
            });
        }
        let mut object = scoped(resource, scope, &stored, object);
        let meta = metadata_mut(&mut object)?;
        for field in ["uid", "creationTimestamp"] {
            match stored.get("metadata").and_then(|m| m.get(field)) {
                Some(v) => meta.insert(field.into(), v.clone()),
                None => meta.remove(field),
            };
        }
        Ok(self.commit(resource, k, Some(stored), Some(object)))
    }

    /// Creates the object or replaces it unconditionally (control hooks).
    pub fn put(
        &mut self,
        resource: &ResourceType,
        mut object: Value,
    ) -> Result<Arc<Value>, StoreError> {
        meta::normalize(resource, &mut object, None)?;
        let (ns, name) = (
            meta_str(&object, "namespace").to_owned(),
            meta_str(&object, "name").to_owned(),
        );
        if self.objects.contains_key(&key(resource, &ns, &name)) {
            self.replace(resource, &ns, &name, object, UpdateScope::All)
        } else {
            self.create(resource, None, object)
        }
    }

    /// Deletes an object; `expected_rv` is an optional resourceVersion precondition. Returns the
    /// object as last stored, carrying the deletion's resourceVersion.
    pub fn delete(
        &mut self,
        resource: &ResourceType,
        namespace: &str,
        name: &str,
        expected_rv: Option<&str>,
    ) -> Result<Arc<Value>, StoreError> {
        let k = key(resource, namespace, name);
        let stored = self.require(resource, namespace, name)?;
        if let Some(expected) = expected_rv
            && expected != meta_str(&stored, "resourceVersion")
        {
            return Err(StoreError::Conflict {
                kind: resource.plural.clone(),
                name: name.to_owned(),
                reason: format!("precondition failed: resourceVersion {expected}"),
            });
        }
        Ok(self.commit(resource, k, Some(stored), None))
    }

    /// Drops the change history: watches and continue tokens from any older version now get
    /// 410 Gone, and every open watch is ended with a 410 ERROR event so its client relists.
    pub fn compact(&mut self) {
        self.history.clear();
        self.oldest_rv = self.rv;
        self.watches.expire_all(self.rv);
    }

    /// Sets how many changes are kept for watch resumption, trimming now if needed.
    pub fn set_history_limit(&mut self, limit: usize) {
        self.history_limit = limit;
        self.trim_history();
    }

    /// Opens a watch; see [`WatchStart`]. The receiver yields the replayed and then live items.
    pub fn watch(
        &mut self,
        resource: &ResourceType,
        filter: ObjectFilter,
        start: WatchStart,
        bookmarks: bool,
    ) -> (u64, tokio::sync::mpsc::UnboundedReceiver<WatchItem>) {
        let id = resource.id();
        let (watch_id, tx, rx) = self.watches.open(&id, filter.clone(), bookmarks);
        let rv = self.rv;
        match start {
            WatchStart::From(from) if from < self.oldest_rv => {
                let _ = tx.send(WatchItem::Expired {
                    requested: from,
                    oldest: self.oldest_rv,
                });
            }
            WatchStart::From(from) => {
                let first = self.history.partition_point(|c| c.rv <= from);
                for change in self.history.range(first..).filter(|c| c.resource_id == id) {
                    if let Some(item) =
                        watch::event_for(&filter, change.before.as_ref(), change.after.as_ref())
                    {
                        let _ = tx.send(item);
                    }
                }
            }
            WatchStart::InitialState { end_bookmark } => {
                let page = self.list(resource, &filter, 0, None);
                for object in page.map(|p| p.items).unwrap_or_default() {
                    let _ = tx.send(WatchItem::Event {
                        kind: watch::EventKind::Added,
                        object,
                    });
                }
                if end_bookmark {
                    let _ = tx.send(WatchItem::Bookmark {
                        rv,
                        initial_events_end: true,
                    });
                }
            }
        }
        (watch_id, rx)
    }

    /// Every change committed from now on, of every kind, in commit order. Unlike a watch it never
    /// expires or breaks (compaction and outages concern clients); it ends when the store is
    /// dropped, and the store forgets it once the receiver is dropped.
    pub fn observe(&mut self) -> Receiver<Observed> {
        let (tx, rx) = channel();
        self.observers.push(tx);
        rx
    }

    /// Sends a BOOKMARK at the current version to one watch (if it asked for bookmarks).
    pub fn bookmark(&mut self, watch_id: u64) {
        self.watches.bookmark(Some(watch_id), self.rv);
    }

    /// Sends a BOOKMARK at the current version to every watch that asked for bookmarks.
    pub fn bookmark_all(&mut self) {
        self.watches.bookmark(None, self.rv);
    }

    /// Forgets a watch whose client went away.
    pub fn close_watch(&mut self, watch_id: u64) {
        self.watches.close(watch_id);
    }

    /// Breaks every open watch (outage).
    pub fn break_watches(&mut self) {
        self.watches.break_all();
    }

    /// Number of open watches, optionally only those of one resource id.
    pub fn active_watches(&self, resource_id: Option<&str>) -> usize {
        self.watches.count(resource_id)
    }

    fn commit(
        &mut self,
        resource: &ResourceType,
        k: Key,
        before: Option<Arc<Value>>,
        after: Option<Value>,
    ) -> Arc<Value> {
        self.rv += 1;
        let rv = Value::String(self.rv.to_string());
        let (after, result) = match after {
            Some(mut object) => {
                if let Ok(meta) = metadata_mut(&mut object) {
                    meta.insert("resourceVersion".into(), rv);
                }
                let object = Arc::new(object);
                self.objects.insert(k, object.clone());
                (Some(object.clone()), object)
            }
            None => {
                self.objects.remove(&k);
                let mut last = before.as_deref().cloned().unwrap_or(Value::Null);
                if let Ok(meta) = metadata_mut(&mut last) {
                    meta.insert("resourceVersion".into(), rv);
                }
                (None, Arc::new(last))
            }
        };
        // A deletion is delivered with the deletion's resourceVersion, like the apiserver does.
        let before = if after.is_none() {
            Some(result.clone())
        } else {
            before
        };
        let change = Change {
            rv: self.rv,
            resource_id: resource.id(),
            before,
            after,
        };
        self.watches.deliver(
            &change.resource_id,
            change.before.as_ref(),
            change.after.as_ref(),
        );
        self.observers.retain(|tx| {
            tx.send(Observed {
                resource_id: change.resource_id.clone(),
                before: change.before.clone(),
                after: change.after.clone(),
            })
            .is_ok()
        });
        self.history.push_back(change);
        self.trim_history();
        result
    }

    fn trim_history(&mut self) {
        while self.history.len() > self.history_limit {
            if let Some(old) = self.history.pop_front() {
                self.oldest_rv = old.rv;
            }
        }
    }

    fn new_uid(&mut self) -> String {
        let n = self.next_uid;
        self.next_uid += 1;
        format!("00000000-0000-4000-8000-{n:012x}")
    }

    fn fill_name(&mut self, resource: &ResourceType, object: &mut Value) -> Result<(), StoreError> {
        if !meta_str(object, "name").is_empty() {
            return Ok(());
        }
        let prefix = meta_str(object, "generateName").to_owned();
        if prefix.is_empty() {
            return Err(StoreError::Invalid {
                kind: resource.plural.clone(),
                name: String::new(),
                reason: "metadata.name or metadata.generateName is required".into(),
            });
        }
        let suffix = format!("{:05x}", self.next_uid % 0x100000);
        metadata_mut(object)?.insert("name".into(), Value::String(format!("{prefix}{suffix}")));
        Ok(())
    }
}

/// The object to store after a replace/patch restricted to `scope`.
fn scoped(resource: &ResourceType, scope: UpdateScope, stored: &Value, new: Value) -> Value {
    if !resource.has_status || scope == UpdateScope::All {
        return new;
    }
    let (mut base, status) = match scope {
        UpdateScope::Status => (stored.clone(), new.get("status").cloned()),
        _ => (new, stored.get("status").cloned()),
    };
    if let Some(map) = base.as_object_mut() {
        match status {
            Some(s) => map.insert("status".into(), s),
            None => map.remove("status"),
        };
    }
    base
}

fn key(resource: &ResourceType, namespace: &str, name: &str) -> Key {
    let ns = if resource.namespaced { namespace } else { "" };
    (resource.id(), ns.to_owned(), name.to_owned())
}

fn start_key(id: &str, namespace: Option<&str>) -> Key {
    (
        id.to_owned(),
        namespace.unwrap_or("").to_owned(),
        String::new(),
    )
}
