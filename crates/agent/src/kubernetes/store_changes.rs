//! [`ChangeJournal`]: which objects of one kind a reflector's store changed since its reader
//! last asked, so that the reader reconciles only those (kube-runtime's way: a controller is
//! told the keys of the objects the watch events touched, and reads the objects from the
//! store). The reflector's task records each watch event once the store has applied it; the
//! reader takes what was recorded ([`StoreChanges`]), then reads the store, so the store already
//! holds every change taken (and possibly later ones, whose keys the next take repeats).
//!
//! A re-list (the first list, or a new one after a watch error or `410 Gone`) replaces the
//! store whole: it is recorded as [`StoreChanges::Everything`], and the reader compares the
//! whole store with what it holds, so objects deleted while the watch was down go too. Until
//! the reader takes changes for the first time nothing is recorded (a kind nobody reads keeps
//! no journal); that first take is [`StoreChanges::Everything`].

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::Event;

/// What changed in a store since its reader last asked.
#[derive(Debug, PartialEq, Eq)]
pub enum StoreChanges<K: Resource<DynamicType = ()>> {
    /// Compare the whole store: the first take, or the store was re-listed since.
    Everything,
    /// These objects were applied or deleted (an object absent from the store now was deleted);
    /// the others are as the reader last saw them.
    Objects(HashSet<ObjectRef<K>>),
}

/// The journal's state.
#[derive(Debug)]
enum Journal<K: Resource<DynamicType = ()>> {
    /// No reader has taken changes yet: nothing is recorded.
    Unread,
    /// Recording for the reader since its last take.
    Recording {
        keys: HashSet<ObjectRef<K>>,
        relisted: bool,
    },
}

/// The changes of one kind's store, for one reader. Clones share the journal.
#[derive(Debug)]
pub struct ChangeJournal<K: Resource<DynamicType = ()>> {
    journal: Arc<Mutex<Journal<K>>>,
}

impl<K: Resource<DynamicType = ()>> Clone for ChangeJournal<K> {
    fn clone(&self) -> Self {
        ChangeJournal {
            journal: self.journal.clone(),
        }
    }
}

impl<K: Resource<DynamicType = ()>> Default for ChangeJournal<K> {
    fn default() -> Self {
        ChangeJournal {
            journal: Arc::new(Mutex::new(Journal::Unread)),
        }
    }
}

impl<K: Resource<DynamicType = ()>> ChangeJournal<K> {
    /// Notes `event`, which the store has applied: an applied or deleted object's key, or the
    /// end of a list (the store replaced whole). The events of a list in progress change
    /// nothing in the store yet.
    pub fn record(&self, event: &Event<K>) {
        let mut journal = self.journal.lock().unwrap_or_else(PoisonError::into_inner);
        let Journal::Recording { keys, relisted } = &mut *journal else {
            return;
        };
        match event {
            Event::Apply(object) | Event::Delete(object) => {
                if !*relisted {
                    keys.insert(ObjectRef::from_obj(object));
                }
            }
            Event::InitDone => {
                *relisted = true;
                keys.clear();
            }
            Event::Init | Event::InitApply(_) => {}
        }
    }

    /// What changed since the last take (everything at the first), recording anew from now.
    pub fn take(&self) -> StoreChanges<K> {
        let mut journal = self.journal.lock().unwrap_or_else(PoisonError::into_inner);
        let recording = Journal::Recording {
            keys: HashSet::new(),
            relisted: false,
        };
        match std::mem::replace(&mut *journal, recording) {
            Journal::Unread | Journal::Recording { relisted: true, .. } => StoreChanges::Everything,
            Journal::Recording { keys, .. } => StoreChanges::Objects(keys),
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::discovery::v1::EndpointSlice;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn slice(name: &str) -> EndpointSlice {
        EndpointSlice {
            metadata: ObjectMeta {
                namespace: Some("default".into()),
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            address_type: "IPv4".into(),
            ..EndpointSlice::default()
        }
    }

    fn keys(names: &[&str]) -> StoreChanges<EndpointSlice> {
        StoreChanges::Objects(
            names
                .iter()
                .map(|n| ObjectRef::new(n).within("default"))
                .collect(),
        )
    }

    #[test]
    fn the_first_take_is_everything_then_the_applied_and_deleted_keys_each_once() {
        let journal = ChangeJournal::default();
        journal.record(&Event::Apply(slice("before-any-reader")));
        assert_eq!(journal.take(), StoreChanges::Everything);
        assert_eq!(journal.take(), keys(&[]), "nothing since");
        journal.record(&Event::Apply(slice("a")));
        journal.record(&Event::Apply(slice("a")));
        journal.record(&Event::Delete(slice("b")));
        assert_eq!(journal.take(), keys(&["a", "b"]));
        assert_eq!(journal.take(), keys(&[]));
    }

    #[test]
    fn a_relist_is_everything_whatever_came_before_or_after_it() {
        let journal = ChangeJournal::default();
        journal.take();
        journal.record(&Event::Apply(slice("a")));
        journal.record(&Event::Init);
        journal.record(&Event::InitApply(slice("b")));
        assert_eq!(
            journal.take(),
            keys(&["a"]),
            "a list in progress changes nothing in the store"
        );
        journal.record(&Event::Init);
        journal.record(&Event::InitApply(slice("b")));
        journal.record(&Event::InitDone);
        journal.record(&Event::Apply(slice("c")));
        assert_eq!(journal.take(), StoreChanges::Everything);
        assert_eq!(journal.take(), keys(&[]));
    }
}
