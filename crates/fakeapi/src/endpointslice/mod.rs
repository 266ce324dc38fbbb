//! The EndpointSlice controller kube-controller-manager runs, inside the fake: for every Service
//! with a selector it keeps the `discovery.k8s.io/v1` EndpointSlices of the Pods it selects.
//!
//! It runs on a thread of its own, reading the store's change stream ([`Store::observe`]): at
//! start it reconciles every Service (and every managed slice, so slices of Services that went
//! away go too), then, for each batch of changes, the Services they concern: the changed
//! Service, the Services whose selector matched a changed Pod before or after the change, and
//! the Service a changed managed slice belongs to. Its writes are ordinary store commits, so
//! watches see them. It holds the server only weakly and ends when the server is dropped. What it
//! computes is in `desired`, how it writes in `sync`; `docs/fakeapi.md` lists what differs from
//! upstream.

mod desired;
mod sync;

use crate::error::StoreError;
use crate::resource::ResourceType;
use crate::server::{FakeApiServer, Shared};
use crate::store::{Observed, Store};
use k8s_openapi::api::core::v1::{Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Weak};
use sync::ServiceKey;

/// Why the EndpointSlice controller could not start.
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// A kind it reads or writes is not served.
    #[error("the EndpointSlice controller cannot run without its kinds: {0}")]
    Kind(#[from] StoreError),
    /// Its thread could not be created.
    #[error("cannot start the EndpointSlice controller thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// The resource types the controller reads and writes.
#[derive(Debug)]
pub(crate) struct Kinds {
    pods: ResourceType,
    services: ResourceType,
    slices: ResourceType,
}

impl Kinds {
    fn of(store: &Store) -> Result<Self, StoreError> {
        let kind = |id: String| store.resource(&id).cloned();
        Ok(Self {
            pods: kind(ResourceType::id_of::<Pod>())?,
            services: kind(ResourceType::id_of::<Service>())?,
            slices: kind(ResourceType::id_of::<EndpointSlice>())?,
        })
    }
}

impl FakeApiServer {
    /// Starts the EndpointSlice controller (see `docs/fakeapi.md`): from now on every Service
    /// with a selector gets the EndpointSlices of the Pods it selects, kept up to date on a
    /// thread of the server's own (no Tokio runtime needed). Starting it again does nothing.
    pub fn start_endpointslice_controller(&self) -> Result<(), ControllerError> {
        if self
            .shared
            .endpointslice_controller
            .swap(true, Ordering::SeqCst)
        {
            return Ok(());
        }
        let started = start(&self.shared);
        if started.is_err() {
            self.shared
                .endpointslice_controller
                .store(false, Ordering::SeqCst);
        }
        started
    }
}

fn start(shared: &Arc<Shared>) -> Result<(), ControllerError> {
    let (kinds, changes) = {
        let mut store = shared.store();
        (Kinds::of(&store)?, store.observe())
    };
    let shared = Arc::downgrade(shared);
    std::thread::Builder::new()
        .name("endpointslice-controller".into())
        .spawn(move || run(&shared, &kinds, &changes))?;
    tracing::info!("EndpointSlice controller started");
    Ok(())
}

/// The controller loop: a full resync, then one reconcile per batch of changes, until the server
/// is gone. The server is held only while working, never while waiting for changes.
fn run(shared: &Weak<Shared>, kinds: &Kinds, changes: &Receiver<Observed>) {
    let mut dirty = match shared.upgrade() {
        Some(server) => everything(&server.store(), kinds),
        None => return,
    };
    loop {
        match shared.upgrade() {
            Some(server) => {
                for key in &dirty {
                    sync::service(&mut server.store(), kinds, key);
                }
            }
            None => return,
        }
        let Ok(first) = changes.recv() else {
            return;
        };
        let Some(server) = shared.upgrade() else {
            return;
        };
        let store = server.store();
        dirty = BTreeSet::new();
        concerned(&store, kinds, &first, &mut dirty);
        while let Ok(next) = changes.try_recv() {
            concerned(&store, kinds, &next, &mut dirty);
        }
    }
}

/// Every Service, and every Service a managed slice names (so orphaned slices are deleted).
fn everything(store: &Store, kinds: &Kinds) -> BTreeSet<ServiceKey> {
    let all = |resource: &ResourceType| {
        store
            .list(resource, &crate::selector::ObjectFilter::default(), 0, None)
            .map(|page| page.items)
            .unwrap_or_default()
    };
    let mut keys: BTreeSet<ServiceKey> = all(&kinds.services)
        .iter()
        .map(|service| key(service, meta(service, "name")))
        .collect();
    keys.extend(
        all(&kinds.slices)
            .iter()
            .filter_map(|slice| sync::managed_for(slice).map(|service| key(slice, service))),
    );
    keys
}

/// Adds the Services `change` concerns to `dirty`.
fn concerned(store: &Store, kinds: &Kinds, change: &Observed, dirty: &mut BTreeSet<ServiceKey>) {
    let states = || change.before.iter().chain(change.after.iter());
    if change.resource_id == kinds.services.id() {
        dirty.extend(states().map(|service| key(service, meta(service, "name"))));
    } else if change.resource_id == kinds.slices.id() {
        dirty.extend(
            states().filter_map(|slice| sync::managed_for(slice).map(|svc| key(slice, svc))),
        );
    } else if change.resource_id == kinds.pods.id() {
        let Some(pod) = states().next() else {
            return;
        };
        let namespace = meta(pod, "namespace");
        for service in sync::in_namespace(store, &kinds.services, namespace) {
            let Some(selector) = service
                .pointer("/spec/selector")
                .and_then(|s| serde_json::from_value::<BTreeMap<String, String>>(s.clone()).ok())
            else {
                continue;
            };
            if states().any(|pod| desired::labels_match(&selector, pod)) {
                dirty.insert(key(&service, meta(&service, "name")));
            }
        }
    }
}

fn key(object: &Value, service: &str) -> ServiceKey {
    (meta(object, "namespace").to_owned(), service.to_owned())
}

fn meta<'a>(object: &'a Value, field: &str) -> &'a str {
    crate::store::meta::meta_str(object, field)
}
