//! [`Translations`]: the stores' Services translated ([`super::translate`]) and kept, with an
//! index from each Service to its EndpointSlices (a slice names its Service by the
//! `kubernetes.io/service-name` label), so that a change costs the objects it touches. Each
//! update is given, per kind, either the objects that changed ([`ObjectChanges::Touched`], from
//! the reflectors' watch events) or the whole kind ([`ObjectChanges::Whole`], at the first
//! sync and after a re-list: what is absent is gone). A slice is parsed again only when it
//! changed, and a Service translated again only when its object or one of its slices changed
//! (an object counts as unchanged when it is the same `Arc` or has the same
//! `resourceVersion`); the update reports the keys whose wanted value may have changed.
//! Problems are kept per object ([`Problems`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Service as ApiService;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use model::{Service, ServiceKey};

use super::problems::{Problems, problem_id};
use super::translate::{Problem, SliceEndpoints, Translated, service_of, slice_endpoints};
use crate::cluster::ObjectKey;

/// What changed of one kind since the last update.
#[derive(Debug, Clone)]
pub enum ObjectChanges<K> {
    /// Every object of the kind as it is now: an object not listed is gone.
    Whole(Vec<Arc<K>>),
    /// These objects as they are now (`None`: gone); the others are as at the last update.
    Touched(Vec<(ObjectKey, Option<Arc<K>>)>),
}

/// The key of the object named by `meta` (its namespace empty when it has none).
pub fn key_of(meta: &ObjectMeta) -> ObjectKey {
    ObjectKey::new(
        meta.namespace.clone().unwrap_or_default(),
        meta.name.clone().unwrap_or_default(),
    )
}

/// Whether `old` and `new` are the same version of an object: the same `Arc`, or the same
/// `resourceVersion` (a re-list brings new `Arc`s of the same versions).
fn same_version<K: Resource>(old: Option<&Arc<K>>, new: Option<&Arc<K>>) -> bool {
    match (old, new) {
        (None, None) => true,
        (Some(old), Some(new)) => {
            Arc::ptr_eq(old, new)
                || (old.meta().resource_version.is_some()
                    && old.meta().resource_version == new.meta().resource_version)
        }
        _ => false,
    }
}

/// An EndpointSlice and its parse.
#[derive(Debug)]
struct SliceMemo {
    object: Arc<EndpointSlice>,
    parsed: Result<Option<SliceEndpoints>, Problem>,
}

/// The translations of one proxy, for Node `node_name`.
#[derive(Debug)]
pub struct Translations {
    node_name: String,
    /// Every Service object.
    services: HashMap<ServiceKey, Arc<ApiService>>,
    /// Every EndpointSlice, parsed.
    slices: HashMap<ObjectKey, SliceMemo>,
    /// The slices naming each Service (whether the Service exists or not).
    slices_of: HashMap<ServiceKey, BTreeSet<ObjectKey>>,
    /// The Services to install.
    wanted: BTreeMap<ServiceKey, Service>,
    problems: Problems,
    /// Services translated since the start.
    translated: u64,
}

impl Translations {
    /// Nothing translated yet, for Node `node_name`.
    pub fn new(node_name: &str) -> Translations {
        Translations {
            node_name: node_name.to_owned(),
            services: HashMap::new(),
            slices: HashMap::new(),
            slices_of: HashMap::new(),
            wanted: BTreeMap::new(),
            problems: Problems::default(),
            translated: 0,
        }
    }

    /// Brings the translations to the whole stores `services` and `slices`; returns the keys
    /// whose wanted value may differ from the last call's (translated again, or gone), and
    /// every object that cannot be translated.
    pub fn update(
        &mut self,
        services: &[Arc<ApiService>],
        slices: &[Arc<EndpointSlice>],
    ) -> (BTreeSet<ServiceKey>, BTreeMap<String, Problem>) {
        let changed = self.apply(
            ObjectChanges::Whole(services.to_vec()),
            ObjectChanges::Whole(slices.to_vec()),
        );
        (changed, self.problems.all().clone())
    }

    /// Applies the changes of both kinds: the slices that changed are parsed again, then the
    /// Services they or a changed Service object concern are translated again. Returns those
    /// Services' keys (their wanted value may have changed, or gone).
    pub fn apply(
        &mut self,
        services: ObjectChanges<ApiService>,
        slices: ObjectChanges<EndpointSlice>,
    ) -> BTreeSet<ServiceKey> {
        let mut affected = BTreeSet::new();
        let slices = touched(slices, self.slices.keys());
        for (key, slice) in slices {
            self.set_slice(key, slice, &mut affected);
        }
        let known: Vec<ObjectKey> = match &services {
            ObjectChanges::Whole(_) => self
                .services
                .keys()
                .map(|k| ObjectKey::new(k.namespace.clone(), k.name.clone()))
                .collect(),
            ObjectChanges::Touched(_) => Vec::new(),
        };
        for (key, service) in touched(services, known.iter()) {
            self.set_service(
                ServiceKey::new(key.namespace, key.name),
                service,
                &mut affected,
            );
        }
        for key in &affected {
            self.translate(key);
        }
        affected
    }

    /// Records `slice` (`None`: gone) as the slice `key`; the Services it named before and
    /// names now go to `affected`.
    fn set_slice(
        &mut self,
        key: ObjectKey,
        slice: Option<Arc<EndpointSlice>>,
        affected: &mut BTreeSet<ServiceKey>,
    ) {
        if same_version(self.slices.get(&key).map(|m| &m.object), slice.as_ref()) {
            return;
        }
        if let Some(old) = self.slices.remove(&key)
            && let Ok(Some(found)) = &old.parsed
        {
            if let Some(named) = self.slices_of.get_mut(&found.service) {
                named.remove(&key);
                if named.is_empty() {
                    self.slices_of.remove(&found.service);
                }
            }
            affected.insert(found.service.clone());
        }
        self.problems
            .clear(&problem_id("EndpointSlice", &key.to_string()));
        let Some(object) = slice else { return };
        let parsed = slice_endpoints(&object);
        match &parsed {
            Ok(Some(found)) => {
                self.slices_of
                    .entry(found.service.clone())
                    .or_default()
                    .insert(key.clone());
                affected.insert(found.service.clone());
            }
            Ok(None) => {}
            Err(problem) => self.problems.set(problem.clone()),
        }
        self.slices.insert(key, SliceMemo { object, parsed });
    }

    /// Records `service` (`None`: gone) as the Service `key`, which goes to `affected` when it
    /// changed.
    fn set_service(
        &mut self,
        key: ServiceKey,
        service: Option<Arc<ApiService>>,
        affected: &mut BTreeSet<ServiceKey>,
    ) {
        if same_version(self.services.get(&key), service.as_ref()) {
            return;
        }
        match service {
            Some(object) => self.services.insert(key.clone(), object),
            None => self.services.remove(&key),
        };
        affected.insert(key);
    }

    /// Translates the Service `key` again with its slices' parsed endpoints; without the
    /// Service, its slices are problems.
    fn translate(&mut self, key: &ServiceKey) {
        self.wanted.remove(key);
        self.problems
            .clear(&problem_id("Service", &key.to_string()));
        let slices = self.slices_of.get(key).into_iter().flatten();
        let Some(service) = self.services.get(key) else {
            for slice in slices {
                if let Some(Ok(Some(found))) = self.slices.get(slice).map(|m| &m.parsed) {
                    self.problems.set(Problem {
                        kind: "EndpointSlice",
                        object: found.slice.clone(),
                        reason: format!("its Service {} does not exist", found.service),
                    });
                }
            }
            return;
        };
        let mut parsed: Vec<&SliceEndpoints> = Vec::new();
        for slice in slices {
            self.problems
                .clear(&problem_id("EndpointSlice", &slice.to_string()));
            if let Some(Ok(Some(found))) = self.slices.get(slice).map(|m| &m.parsed) {
                parsed.push(found);
            }
        }
        self.translated += 1;
        match service_of(service, &parsed, &self.node_name) {
            Ok(Translated::Service(model)) => {
                self.wanted.insert(key.clone(), model);
            }
            Ok(Translated::Skipped(skip)) => {
                tracing::debug!("Service {key} not load-balanced here: {skip:?}");
            }
            Err(problem) => self.problems.set(problem),
        }
    }

    /// The Service to install for `key`, if any.
    pub fn wanted(&self, key: &ServiceKey) -> Option<&Service> {
        self.wanted.get(key)
    }

    /// Every Service to install, in key order.
    pub fn all_wanted(&self) -> impl Iterator<Item = &Service> {
        self.wanted.values()
    }

    /// The API object of the Service `key`, if the stores have it.
    pub fn service_object(&self, key: &ServiceKey) -> Option<&Arc<ApiService>> {
        self.services.get(key)
    }

    /// Every object that cannot be translated now, by `"{kind} {namespace}/{name}"`.
    pub fn problems(&self) -> &BTreeMap<String, Problem> {
        self.problems.all()
    }

    /// The problems that appeared or changed since the last call.
    pub fn take_fresh_problems(&mut self) -> Vec<Problem> {
        self.problems.take_fresh()
    }

    /// How many Service translations were made since the start (a Service translated again
    /// counts again).
    pub fn translated(&self) -> u64 {
        self.translated
    }
}

/// `changes` as (key, object now) pairs: as given when touched; for a whole kind, every object
/// listed and, as gone, each of `known` not listed.
fn touched<'a, K: Resource>(
    changes: ObjectChanges<K>,
    known: impl Iterator<Item = &'a ObjectKey>,
) -> Vec<(ObjectKey, Option<Arc<K>>)> {
    match changes {
        ObjectChanges::Touched(touched) => touched,
        ObjectChanges::Whole(objects) => {
            let mut listed: Vec<(ObjectKey, Option<Arc<K>>)> = objects
                .into_iter()
                .map(|object| (key_of(object.meta()), Some(object)))
                .collect();
            let present: HashSet<&ObjectKey> = listed.iter().map(|(key, _)| key).collect();
            let gone: Vec<ObjectKey> = known
                .filter(|key| !present.contains(key))
                .cloned()
                .collect();
            listed.extend(gone.into_iter().map(|key| (key, None)));
            listed
        }
    }
}
