//! Open watches: their filters and channels, and which event a change becomes for a watch.
//!
//! A change is turned into an event per watch from whether the object matched the watch's filter
//! before and after it: newly matching → ADDED, still matching → MODIFIED, no longer matching or
//! deleted → DELETED (what the apiserver does for selector-filtered watches).

use crate::selector::ObjectFilter;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchStart {
    /// Changes after this resourceVersion (410 if it is older than the history).
    From(u64),
    /// Synthetic ADDED events for the current state first (resourceVersion unset or "0"); with
    /// `end_bookmark` (sendInitialEvents) a BOOKMARK annotated `k8s.io/initial-events-end` follows.
    InitialState {
        /// Send the initial-events-end bookmark.
        end_bookmark: bool,
    },
}

/// Watch event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// Object appeared (or started matching).
    Added,
    /// Object changed.
    Modified,
    /// Object went away (or stopped matching).
    Deleted,
}

impl EventKind {
    /// The `type` field of the watch event.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One item on a watch channel.
#[derive(Debug, Clone)]
pub enum WatchItem {
    /// An object event.
    Event {
        /// ADDED/MODIFIED/DELETED.
        kind: EventKind,
        /// The object (for DELETED, its last state at the deletion's resourceVersion).
        object: Arc<Value>,
    },
    /// A BOOKMARK at `rv`.
    Bookmark {
        /// The bookmark's resourceVersion.
        rv: u64,
        /// Carries the `k8s.io/initial-events-end` annotation.
        initial_events_end: bool,
    },
    /// The watch cannot continue: its version is compacted (ERROR event with 410, then end).
    Expired {
        /// The version the watch was at.
        requested: u64,
        /// Oldest version still in history.
        oldest: u64,
    },
    /// The server went unavailable: the response body fails.
    Broken,
}

#[derive(Debug)]
struct Watch {
    resource_id: String,
    filter: ObjectFilter,
    bookmarks: bool,
    tx: UnboundedSender<WatchItem>,
    rx: Option<UnboundedReceiver<WatchItem>>,
}

/// The registry of open watches.
#[derive(Debug, Default)]
pub struct Watches {
    next_id: u64,
    open: BTreeMap<u64, Watch>,
}

impl Watches {
    /// Registers a watch; its receiver is taken with [`Watches::receiver`].
    pub fn open(
        &mut self,
        resource_id: &str,
        filter: ObjectFilter,
        bookmarks: bool,
    ) -> (u64, UnboundedSender<WatchItem>) {
        self.next_id += 1;
        let (tx, rx) = unbounded_channel();
        let watch = Watch {
            resource_id: resource_id.to_owned(),
            filter,
            bookmarks,
            tx: tx.clone(),
            rx: Some(rx),
        };
        self.open.insert(self.next_id, watch);
        (self.next_id, tx)
    }

    /// Takes the receiver of a just-opened watch.
    pub fn receiver(&mut self, id: u64) -> UnboundedReceiver<WatchItem> {
        match self.open.get_mut(&id).and_then(|w| w.rx.take()) {
            Some(rx) => rx,
            None => unbounded_channel().1,
        }
    }

    /// Hands a committed change to every watch of `resource_id` it concerns.
    pub fn deliver(
        &mut self,
        resource_id: &str,
        before: Option<&Arc<Value>>,
        after: Option<&Arc<Value>>,
    ) {
        self.open.retain(|_, w| {
            if w.resource_id != resource_id {
                return true;
            }
            match event_for(&w.filter, before, after) {
                Some(item) => w.tx.send(item).is_ok(),
                None => !w.tx.is_closed(),
            }
        });
    }

    /// Sends a bookmark at `rv` to watch `id` (or all watches) that asked for bookmarks.
    pub fn bookmark(&mut self, id: Option<u64>, rv: u64) {
        for (_, w) in self
            .open
            .iter()
            .filter(|(wid, w)| w.bookmarks && id.is_none_or(|id| id == **wid))
        {
            let _ = w.tx.send(WatchItem::Bookmark {
                rv,
                initial_events_end: false,
            });
        }
    }

    /// Ends every watch with a 410 ERROR event.
    pub fn expire_all(&mut self, oldest: u64) {
        for (_, w) in std::mem::take(&mut self.open) {
            let _ = w.tx.send(WatchItem::Expired {
                requested: oldest.saturating_sub(1),
                oldest,
            });
        }
    }

    /// Breaks every watch.
    pub fn break_all(&mut self) {
        for (_, w) in std::mem::take(&mut self.open) {
            let _ = w.tx.send(WatchItem::Broken);
        }
    }

    /// Forgets watch `id`.
    pub fn close(&mut self, id: u64) {
        self.open.remove(&id);
    }

    /// Number of open watches (of one resource id if given).
    pub fn count(&self, resource_id: Option<&str>) -> usize {
        self.open
            .values()
            .filter(|w| resource_id.is_none_or(|r| r == w.resource_id) && !w.tx.is_closed())
            .count()
    }
}

/// The event a change is for a watch with `filter`, if any.
pub fn event_for(
    filter: &ObjectFilter,
    before: Option<&Arc<Value>>,
    after: Option<&Arc<Value>>,
) -> Option<WatchItem> {
    let matched = |o: Option<&Arc<Value>>| o.is_some_and(|o| filter.matches(o));
    let (kind, object) = match (matched(before), matched(after), after) {
        (false, true, Some(a)) => (EventKind::Added, a),
        (true, true, Some(a)) => (EventKind::Modified, a),
        (true, false, Some(a)) => (EventKind::Deleted, a),
        (true, false, None) => (EventKind::Deleted, before?),
        _ => return None,
    };
    Some(WatchItem::Event {
        kind,
        object: object.clone(),
    })
}
