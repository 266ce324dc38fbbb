//! [`PolicyEngine`]: the Node's NetworkPolicy result, kept up to date incrementally.
//!
//! Every selector a policy uses — its applied-to `podSelector`, each peer's selectors — is a
//! [`GroupKey`]; equal selectors share one group. A group keeps its member Pods and the policies
//! that use it. Groups are indexed by Namespace (a group of one Namespace) or listed as
//! cluster-wide (a `namespaceSelector` group), so a Pod change evaluates only the groups of its
//! Namespace and the cluster-wide ones, and a Namespace label change only the cluster-wide ones
//! for that Namespace's Pods. A membership change — or a member's IP, Node or named ports
//! changing — marks the group's policies dirty; [`PolicyEngine::sync`] recomputes just those
//! policies from their groups' members and updates the [`Snapshot`].
//!
//! Each sync also says what changed, as a [`PolicyDelta`]: putting a policy's new output in
//! place compares it with the policy's old output rule by rule, and the isolation counts say
//! when a Pod IP becomes or stops being isolated, so the delta costs what the recomputed
//! policies cost, not a comparison of whole snapshots.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::Ipv4Addr;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;

use crate::delta::PolicyDelta;
use crate::error::PolicyError;
use crate::input::{
    CompiledPolicy, CompiledRule, GroupKey, Peer, PodInfo, PortSpec, Scope, namespace_labels,
};
use crate::selector::Labels;
use model::policy::{
    AddressSet, Direction, Peers, PodKey, PolicyKey, PortMatch, Ports, Protocol, Rule, RuleId,
    RulePart, Snapshot,
};

#[derive(Debug, Default)]
struct Group {
    /// Member Pods (only Pods with an IP), with their IP: a rule's peers are read from here,
    /// without a lookup per member.
    members: BTreeMap<PodKey, Ipv4Addr>,
    /// Policies reading this group.
    users: BTreeSet<PolicyKey>,
}

/// What one policy contributes to the snapshot.
#[derive(Debug, Default)]
struct PolicyOutput {
    rules: Vec<RuleId>,
    ingress: BTreeSet<Ipv4Addr>,
    egress: BTreeSet<Ipv4Addr>,
}

/// What a [`PolicyEngine::sync`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Policies recomputed.
    pub policies: usize,
    /// How the snapshot changed since the previous `sync` (a [`PolicyEngine::snapshot`] in
    /// between syncs too, and its changes are in here).
    pub delta: PolicyDelta,
}

impl SyncReport {
    /// Whether the snapshot changed.
    pub fn changed(&self) -> bool {
        !self.delta.is_empty()
    }
}

/// NetworkPolicy state for the Pods of one Node.
#[derive(Debug)]
pub struct PolicyEngine {
    node: String,
    pods: BTreeMap<PodKey, PodInfo>,
    namespaces: BTreeMap<String, Labels>,
    policies: BTreeMap<PolicyKey, CompiledPolicy>,
    groups: HashMap<GroupKey, Group>,
    /// Groups of one Namespace, by Namespace.
    by_namespace: HashMap<String, BTreeSet<GroupKey>>,
    /// Groups with a Namespace selector.
    cluster_wide: BTreeSet<GroupKey>,
    outputs: BTreeMap<PolicyKey, PolicyOutput>,
    snapshot: Snapshot,
    /// How many policies isolate each local Pod IP, per direction.
    isolating: [BTreeMap<Ipv4Addr, usize>; 2],
    dirty: BTreeSet<PolicyKey>,
    /// How the snapshot changed since the last [`PolicyEngine::sync`] returned.
    delta: PolicyDelta,
    recomputed: u64,
}

impl PolicyEngine {
    /// An empty engine for the Pods running on Node `node`.
    pub fn new(node: impl Into<String>) -> PolicyEngine {
        PolicyEngine {
            node: node.into(),
            pods: BTreeMap::new(),
            namespaces: BTreeMap::new(),
            policies: BTreeMap::new(),
            groups: HashMap::new(),
            by_namespace: HashMap::new(),
            cluster_wide: BTreeSet::new(),
            outputs: BTreeMap::new(),
            snapshot: Snapshot::default(),
            isolating: [BTreeMap::new(), BTreeMap::new()],
            dirty: BTreeSet::new(),
            delta: PolicyDelta::default(),
            recomputed: 0,
        }
    }

    /// The Node this engine computes for.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Adds or updates a Pod.
    pub fn upsert_pod(&mut self, pod: &Pod) -> Result<(), PolicyError> {
        self.set_pod(PodInfo::from_k8s(pod)?);
        Ok(())
    }

    /// Adds or updates a Pod given as [`PodInfo`].
    pub fn set_pod(&mut self, info: PodInfo) {
        let key = info.key.clone();
        let old = self.pods.insert(key.clone(), info);
        let new = &self.pods[&key];
        if old.as_ref() == Some(new) {
            return;
        }
        // A member whose address, Node or named ports change changes its groups' output.
        let details_changed = old.as_ref().is_none_or(|o| {
            o.ip != new.ip || o.node != new.node || o.named_ports != new.named_ports
        });
        let candidates = self.candidate_groups(&key.namespace);
        for g in candidates {
            let now = self.group_matches(&g, &key);
            let Some(group) = self.groups.get_mut(&g) else {
                continue;
            };
            let was = group.members.contains_key(&key);
            let changed = match (was, new.ip.filter(|_| now)) {
                (_, Some(ip)) => {
                    group.members.insert(key.clone(), ip) != Some(ip) || details_changed
                }
                (true, None) => group.members.remove(&key).is_some(),
                (false, None) => false,
            };
            if changed {
                self.dirty.extend(group.users.iter().cloned());
            }
        }
    }

    /// Removes a Pod.
    pub fn remove_pod(&mut self, key: &PodKey) {
        if self.pods.remove(key).is_none() {
            return;
        }
        for g in self.candidate_groups(&key.namespace) {
            if let Some(group) = self.groups.get_mut(&g)
                && group.members.remove(key).is_some()
            {
                self.dirty.extend(group.users.iter().cloned());
            }
        }
    }

    /// Adds or updates a Namespace.
    pub fn upsert_namespace(&mut self, ns: &Namespace) -> Result<(), PolicyError> {
        let (name, labels) = namespace_labels(ns)?;
        self.set_namespace(&name, Some(labels));
        Ok(())
    }

    /// Removes a Namespace.
    pub fn remove_namespace(&mut self, name: &str) {
        self.set_namespace(name, None);
    }

    /// Sets (`Some`) or removes (`None`) a Namespace's labels; only Namespace-selector groups
    /// are re-evaluated, for the Pods of that Namespace.
    pub fn set_namespace(&mut self, name: &str, labels: Option<Labels>) {
        let old = match &labels {
            Some(l) => self.namespaces.insert(name.to_owned(), l.clone()),
            None => self.namespaces.remove(name),
        };
        if old == labels {
            return;
        }
        let pods: Vec<PodKey> = self.pods_of(name).cloned().collect();
        for g in self.cluster_wide.clone() {
            for key in &pods {
                let now = self.group_matches(&g, key);
                let ip = self.pods.get(key).and_then(|p| p.ip);
                let Some(group) = self.groups.get_mut(&g) else {
                    continue;
                };
                let changed = match ip.filter(|_| now) {
                    Some(ip) => group.members.insert(key.clone(), ip) != Some(ip),
                    None => group.members.remove(key).is_some(),
                };
                if changed {
                    self.dirty.extend(group.users.iter().cloned());
                }
            }
        }
    }

    /// Adds or updates a NetworkPolicy. On error the previous version (if any) stays in force.
    pub fn upsert_policy(&mut self, policy: &NetworkPolicy) -> Result<(), PolicyError> {
        self.set_policy(CompiledPolicy::from_k8s(policy)?);
        Ok(())
    }

    /// Adds or updates a compiled policy.
    pub fn set_policy(&mut self, policy: CompiledPolicy) {
        if self.policies.get(&policy.key) == Some(&policy) {
            return;
        }
        let key = policy.key.clone();
        self.release_groups(&key);
        for g in policy.groups() {
            self.use_group(g, &key);
        }
        self.policies.insert(key.clone(), policy);
        self.dirty.insert(key);
    }

    /// Removes a NetworkPolicy.
    pub fn remove_policy(&mut self, key: &PolicyKey) {
        self.release_groups(key);
        self.policies.remove(key);
        self.dirty.insert(key.clone());
    }

    /// Recomputes the policies changes made dirty; reports how many, and how the snapshot
    /// changed since the previous `sync`.
    pub fn sync(&mut self) -> SyncReport {
        let policies = self.recompute();
        SyncReport {
            policies,
            delta: std::mem::take(&mut self.delta),
        }
    }

    /// The current result (recomputing first; what changed is still reported by the next
    /// [`PolicyEngine::sync`]).
    pub fn snapshot(&mut self) -> &Snapshot {
        self.recompute();
        &self.snapshot
    }

    /// Recomputes the dirty policies, adding what changed to the pending delta; returns how
    /// many policies it recomputed.
    fn recompute(&mut self) -> usize {
        let dirty = std::mem::take(&mut self.dirty);
        for key in &dirty {
            self.recomputed += 1;
            let output = self
                .policies
                .get(key)
                .map(|p| self.compute(p))
                .unwrap_or_default();
            self.replace_output(key, output);
        }
        dirty.len()
    }

    /// What the engine knows of a Pod.
    pub fn pod(&self, key: &PodKey) -> Option<&PodInfo> {
        self.pods.get(key)
    }

    /// How many policy recomputations all syncs did so far (for tests and metrics).
    pub fn recomputed(&self) -> u64 {
        self.recomputed
    }

    /// Number of Pod groups (distinct selectors in use).
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    fn pods_of<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a PodKey> + 'a {
        self.pods
            .range(PodKey::new(namespace, "")..)
            .map(|(k, _)| k)
            .take_while(move |k| k.namespace == namespace)
    }

    fn candidate_groups(&self, namespace: &str) -> Vec<GroupKey> {
        self.by_namespace
            .get(namespace)
            .into_iter()
            .flatten()
            .chain(&self.cluster_wide)
            .cloned()
            .collect()
    }

    fn group_matches(&self, group: &GroupKey, key: &PodKey) -> bool {
        let Some(pod) = self.pods.get(key) else {
            return false;
        };
        let in_scope = match &group.scope {
            Scope::Namespace(ns) => *ns == key.namespace,
            Scope::Namespaces(sel) => self
                .namespaces
                .get(&key.namespace)
                .is_some_and(|labels| sel.matches(labels)),
        };
        pod.ip.is_some() && in_scope && group.pods.matches(&pod.labels)
    }

    fn use_group(&mut self, g: GroupKey, user: &PolicyKey) {
        if !self.groups.contains_key(&g) {
            let members: BTreeMap<PodKey, Ipv4Addr> = match &g.scope {
                Scope::Namespace(ns) => self.pods_of(ns).cloned().collect::<Vec<_>>(),
                Scope::Namespaces(_) => self.pods.keys().cloned().collect(),
            }
            .into_iter()
            .filter(|k| self.group_matches(&g, k))
            .filter_map(|k| {
                let ip = self.pods.get(&k)?.ip?;
                Some((k, ip))
            })
            .collect();
            match &g.scope {
                Scope::Namespace(ns) => {
                    self.by_namespace
                        .entry(ns.clone())
                        .or_default()
                        .insert(g.clone());
                }
                Scope::Namespaces(_) => {
                    self.cluster_wide.insert(g.clone());
                }
            }
            self.groups.insert(
                g.clone(),
                Group {
                    members,
                    users: BTreeSet::new(),
                },
            );
        }
        if let Some(group) = self.groups.get_mut(&g) {
            group.users.insert(user.clone());
        }
    }

    fn release_groups(&mut self, user: &PolicyKey) {
        let Some(policy) = self.policies.get(user) else {
            return;
        };
        for g in policy.groups() {
            let Some(group) = self.groups.get_mut(&g) else {
                continue;
            };
            group.users.remove(user);
            if group.users.is_empty() {
                self.groups.remove(&g);
                match &g.scope {
                    Scope::Namespace(ns) => {
                        if let Some(set) = self.by_namespace.get_mut(ns) {
                            set.remove(&g);
                            if set.is_empty() {
                                self.by_namespace.remove(ns);
                            }
                        }
                    }
                    Scope::Namespaces(_) => {
                        self.cluster_wide.remove(&g);
                    }
                }
            }
        }
    }

    fn members<'a>(&'a self, g: &GroupKey) -> impl Iterator<Item = &'a PodInfo> + 'a {
        self.groups
            .get(g)
            .into_iter()
            .flat_map(|group| group.members.keys())
            .filter_map(|k| self.pods.get(k))
    }

    /// A policy's rules and isolation from its groups' current members.
    fn compute(&self, policy: &CompiledPolicy) -> (Vec<Rule>, [BTreeSet<Ipv4Addr>; 2]) {
        let applied: Vec<&PodInfo> = self
            .members(&policy.applied_to)
            .filter(|p| p.node.as_deref() == Some(self.node.as_str()))
            .collect();
        let mut rules = Vec::new();
        let mut isolation = [BTreeSet::new(), BTreeSet::new()];
        if applied.is_empty() {
            return (rules, isolation);
        }
        let applied_ips: BTreeSet<Ipv4Addr> = applied.iter().filter_map(|p| p.ip).collect();
        for direction in [Direction::Ingress, Direction::Egress] {
            let Some(list) = policy.rules(direction) else {
                continue;
            };
            isolation[direction as usize] = applied_ips.clone();
            for (index, rule) in list.iter().enumerate() {
                let id = |part| RuleId {
                    policy: policy.key.clone(),
                    direction,
                    index,
                    part,
                };
                self.compute_rule(rule, direction, &applied, &applied_ips, id, &mut rules);
            }
        }
        (rules, isolation)
    }

    fn compute_rule(
        &self,
        rule: &CompiledRule,
        direction: Direction,
        applied: &[&PodInfo],
        applied_ips: &BTreeSet<Ipv4Addr>,
        id: impl Fn(RulePart) -> RuleId,
        out: &mut Vec<Rule>,
    ) {
        let peers = match &rule.peers {
            None => Peers::Any,
            Some(list) => {
                let mut set = AddressSet::default();
                let mut ips = Vec::new();
                for peer in list {
                    match peer {
                        Peer::Pods(g) => {
                            let group = self.groups.get(g).into_iter();
                            ips.extend(group.flat_map(|group| group.members.values()));
                        }
                        Peer::Block(cidrs) => set.cidrs.extend(cidrs.iter().copied()),
                    }
                }
                // Collected, then built at once (sorted in bulk, not inserted one by one).
                set.ips = ips.into_iter().collect();
                Peers::Set(set)
            }
        };
        let mut push = |part, applied_to: BTreeSet<Ipv4Addr>, peers: Peers, ports| {
            let empty_peers = matches!(&peers, Peers::Set(s) if s.is_empty());
            if !applied_to.is_empty() && !empty_peers {
                out.push(Rule {
                    id: id(part),
                    applied_to,
                    peers,
                    ports,
                });
            }
        };
        let Some(specs) = &rule.ports else {
            push(RulePart::Numeric, applied_ips.clone(), peers, Ports::Any);
            return;
        };
        let numeric: BTreeSet<PortMatch> = specs
            .iter()
            .filter_map(|s| match s {
                PortSpec::Numbers(m) => Some(*m),
                PortSpec::Named { .. } => None,
            })
            .collect();
        let named: Vec<(Protocol, &str)> = specs
            .iter()
            .filter_map(|s| match s {
                PortSpec::Named { protocol, name } => Some((*protocol, name.as_str())),
                PortSpec::Numbers(_) => None,
            })
            .collect();
        if !numeric.is_empty() {
            push(
                RulePart::Numeric,
                applied_ips.clone(),
                peers.clone(),
                Ports::Set(numeric),
            );
        }
        if named.is_empty() {
            return;
        }
        let resolve = |pod: &PodInfo| -> BTreeSet<PortMatch> {
            named
                .iter()
                .flat_map(|(protocol, name)| {
                    pod.resolve(*protocol, name)
                        .map(|port| PortMatch::single(*protocol, port))
                })
                .collect()
        };
        // Named ports resolve on the destination Pod: the applied-to Pod for ingress, the peer
        // Pod for egress (addresses outside Pods have no named ports).
        let mut by_ports: BTreeMap<BTreeSet<PortMatch>, BTreeSet<Ipv4Addr>> = BTreeMap::new();
        match direction {
            Direction::Ingress => {
                for pod in applied {
                    if let Some(ip) = pod.ip {
                        by_ports.entry(resolve(pod)).or_default().insert(ip);
                    }
                }
            }
            Direction::Egress => {
                let destinations: Vec<&PodInfo> = match &rule.peers {
                    None => self.members(&GroupKey::all_pods()).collect(),
                    Some(list) => list
                        .iter()
                        .filter_map(|p| match p {
                            Peer::Pods(g) => Some(g),
                            Peer::Block(_) => None,
                        })
                        .flat_map(|g| self.members(g))
                        .collect(),
                };
                for pod in destinations {
                    if let Some(ip) = pod.ip {
                        by_ports.entry(resolve(pod)).or_default().insert(ip);
                    }
                }
            }
        }
        for (ports, ips) in by_ports {
            if ports.is_empty() {
                continue;
            }
            let part = RulePart::Named(ports.clone());
            match direction {
                Direction::Ingress => push(part, ips, peers.clone(), Ports::Set(ports)),
                Direction::Egress => push(
                    part,
                    applied_ips.clone(),
                    Peers::Set(AddressSet {
                        ips,
                        cidrs: BTreeSet::new(),
                    }),
                    Ports::Set(ports),
                ),
            }
        }
    }

    /// Puts a policy's new output into the snapshot, recording what changed in the pending
    /// delta.
    fn replace_output(
        &mut self,
        key: &PolicyKey,
        (rules, isolation): (Vec<Rule>, [BTreeSet<Ipv4Addr>; 2]),
    ) {
        let old = self.outputs.remove(key).unwrap_or_default();
        let new_ids: BTreeSet<&RuleId> = rules.iter().map(|r| &r.id).collect();
        for id in &old.rules {
            if !new_ids.contains(id) && self.snapshot.rules.remove(id).is_some() {
                self.delta.remove_rule(id.clone());
            }
        }
        let mut output = PolicyOutput {
            rules: rules.iter().map(|r| r.id.clone()).collect(),
            ..PolicyOutput::default()
        };
        for rule in rules {
            match self.snapshot.rules.get(&rule.id) {
                Some(current) if *current == rule => continue,
                Some(_) => self.delta.change_rule(rule.clone()),
                None => self.delta.add_rule(rule.clone()),
            }
            self.snapshot.rules.insert(rule.id.clone(), rule);
        }
        let [ingress, egress] = isolation;
        self.isolate(Direction::Ingress, &old.ingress, &ingress);
        self.isolate(Direction::Egress, &old.egress, &egress);
        output.ingress = ingress;
        output.egress = egress;
        if !output.rules.is_empty() || !output.ingress.is_empty() || !output.egress.is_empty() {
            self.outputs.insert(key.clone(), output);
        }
    }

    /// Moves one policy's isolated IPs of `direction` from `old` to `new`; an IP is isolated
    /// while at least one policy isolates it.
    fn isolate(
        &mut self,
        direction: Direction,
        old: &BTreeSet<Ipv4Addr>,
        new: &BTreeSet<Ipv4Addr>,
    ) {
        let counts = &mut self.isolating[direction as usize];
        let set = match direction {
            Direction::Ingress => &mut self.snapshot.isolation.ingress,
            Direction::Egress => &mut self.snapshot.isolation.egress,
        };
        for ip in old.difference(new) {
            if let Some(n) = counts.get_mut(ip) {
                *n -= 1;
                if *n == 0 {
                    counts.remove(ip);
                    set.remove(ip);
                    self.delta.release(direction, *ip);
                }
            }
        }
        for ip in new.difference(old) {
            let n = counts.entry(*ip).or_insert(0);
            *n += 1;
            if *n == 1 {
                set.insert(*ip);
                self.delta.isolate(direction, *ip);
            }
        }
    }
}
