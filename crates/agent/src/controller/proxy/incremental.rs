//! [`Translations`]: the stores' Services translated ([`super::translate`]) and kept, so that a
//! wake-up translates again only what changed. The reflector stores hand out the same `Arc`
//! for an object until it changes, so a Service whose object and EndpointSlices are the same
//! `Arc`s as at the last wake-up keeps its translation, and a slice its parsed endpoints. A
//! wake-up still walks every object (pointer comparisons and map lookups), but translates and
//! compares only the changed ones: it reports the keys whose wanted value may have changed.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service as ApiService;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use model::{Service, ServiceKey};

use super::translate::{
    Problem, SliceEndpoints, Translated, object_key, service_of, slice_endpoints,
};

/// One Service's translation and the objects it was made from.
#[derive(Debug)]
struct Memo {
    service: Arc<ApiService>,
    /// Its EndpointSlices, in address order.
    slices: Vec<Arc<EndpointSlice>>,
    /// The Service to install; `None`: this proxy skips it (or it is a problem).
    outcome: Result<Option<Service>, Problem>,
}

/// An EndpointSlice's parse, with the object (kept, so its address is not reused).
#[derive(Debug)]
struct SliceMemo {
    slice: Arc<EndpointSlice>,
    parsed: Result<Option<SliceEndpoints>, Problem>,
}

/// The address identifying an object's `Arc` while the memo holds it.
fn id<T>(object: &Arc<T>) -> usize {
    Arc::as_ptr(object) as usize
}

/// The translations of one proxy, for Node `node_name`.
#[derive(Debug)]
pub struct Translations {
    node_name: String,
    services: BTreeMap<ServiceKey, Memo>,
    slices: HashMap<usize, SliceMemo>,
}

impl Translations {
    /// Nothing translated yet, for Node `node_name`.
    pub fn new(node_name: &str) -> Translations {
        Translations {
            node_name: node_name.to_owned(),
            services: BTreeMap::new(),
            slices: HashMap::new(),
        }
    }

    /// Brings the translations to `services` and `slices`; returns the keys whose wanted
    /// value may differ from the last call's (translated again, or gone), and every object
    /// that cannot be translated.
    pub fn update(
        &mut self,
        services: &[Arc<ApiService>],
        slices: &[Arc<EndpointSlice>],
    ) -> (BTreeSet<ServiceKey>, BTreeMap<String, Problem>) {
        let mut problems = BTreeMap::new();
        let mut note = |problem: &Problem| {
            problems.insert(
                format!("{} {}", problem.kind, problem.object),
                problem.clone(),
            );
        };
        let mut kept_slices = HashMap::with_capacity(slices.len());
        let mut by_service: HashMap<ServiceKey, Vec<Arc<EndpointSlice>>> = HashMap::new();
        for slice in slices {
            let memo = self.slices.remove(&id(slice)).unwrap_or_else(|| SliceMemo {
                slice: slice.clone(),
                parsed: slice_endpoints(slice),
            });
            match &memo.parsed {
                Ok(Some(found)) => by_service
                    .entry(found.service.clone())
                    .or_default()
                    .push(slice.clone()),
                Ok(None) => {}
                Err(problem) => note(problem),
            }
            kept_slices.insert(id(&memo.slice), memo);
        }
        self.slices = kept_slices;

        let mut changed = BTreeSet::new();
        let mut kept = BTreeMap::new();
        for service in services {
            let key = object_key(&service.metadata);
            let mut own = by_service.remove(&key).unwrap_or_default();
            own.sort_by_key(id);
            let same = |memo: &Memo| {
                Arc::ptr_eq(&memo.service, service)
                    && memo.slices.len() == own.len()
                    && memo.slices.iter().zip(&own).all(|(a, b)| Arc::ptr_eq(a, b))
            };
            let memo = match self.services.remove(&key).filter(same) {
                Some(memo) => memo,
                None => {
                    changed.insert(key.clone());
                    self.translate(service, own)
                }
            };
            if let Err(problem) = &memo.outcome {
                note(problem);
            }
            kept.insert(key, memo);
        }
        changed.extend(std::mem::take(&mut self.services).into_keys());
        self.services = kept;
        for orphans in by_service.into_values() {
            for slice in orphans {
                if let Some(Ok(Some(found))) = self.slices.get(&id(&slice)).map(|m| &m.parsed) {
                    note(&Problem {
                        kind: "EndpointSlice",
                        object: found.slice.clone(),
                        reason: format!("its Service {} does not exist", found.service),
                    });
                }
            }
        }
        (changed, problems)
    }

    /// `service` translated with the parsed endpoints of `slices`.
    fn translate(&self, service: &Arc<ApiService>, slices: Vec<Arc<EndpointSlice>>) -> Memo {
        let parsed: Vec<&SliceEndpoints> = slices
            .iter()
            .filter_map(|s| self.slices.get(&id(s))?.parsed.as_ref().ok()?.as_ref())
            .collect();
        let outcome = match service_of(service, &parsed, &self.node_name) {
            Ok(Translated::Service(model)) => Ok(Some(model)),
            Ok(Translated::Skipped(skip)) => {
                tracing::debug!(
                    "Service {} not load-balanced here: {skip:?}",
                    object_key(&service.metadata)
                );
                Ok(None)
            }
            Err(problem) => Err(problem),
        };
        Memo {
            service: service.clone(),
            slices,
            outcome,
        }
    }

    /// The Service to install for `key`, if any.
    pub fn wanted(&self, key: &ServiceKey) -> Option<&Service> {
        self.services.get(key)?.outcome.as_ref().ok()?.as_ref()
    }

    /// Every Service to install.
    pub fn all_wanted(&self) -> impl Iterator<Item = &Service> {
        self.services
            .values()
            .filter_map(|m| m.outcome.as_ref().ok()?.as_ref())
    }
}
