//! [`PolicyEngine`]: the Node's NetworkPolicy result, kept up to date incrementally.
//!
//! Every selector a policy uses — its applied-to `podSelector`, each peer's selectors — is a
//! selector group ([`crate::group`]); equal selectors share one group, which keeps its member
//! Pods and the policies that use it. [`Membership`] keeps the groups up to date as Pods and
//! Namespaces change; each member that enters or leaves a group (or whose Node or named ports
//! change) is a [`MemberChange`] passed to the group's policies.
//!
//! A policy applies a member change to what it built from the group ([`PolicyState`]): a rule
//! without named ports counts its peer IPs and the policy its local applied-to IPs, so the
//! change moves one IP in or out of each rule that reads the group, and only those rules are
//! patched at [`PolicyEngine::sync`] — the snapshot's rule edited in place, the delta given
//! the rule's [`RuleEdit`] (the entries gained and lost), not its content. A rule with named
//! ports resolves them per Pod, so it is recomputed whole, alone. A policy is recomputed whole
//! only when it is new or changed, or starts or stops applying to a local Pod.
//!
//! Each sync says what changed as a [`PolicyDelta`]: the same delta a recomputation of
//! everything would give (rules added, changed, removed; isolation gained and lost), found at
//! the cost of what changed.
//!
//! An engine made [`PolicyEngine::given`] evaluates no selector: an agent fed by a controller
//! gives it the groups with their members ([`PolicyEngine::give_group`] and the member
//! changes after it) and the compiled policies reading them, and everything from the member
//! changes on is the same.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::mem;
use std::net::Ipv4Addr;

use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;

use crate::counted::Counted;
use crate::delta::PolicyDelta;
use crate::edit::{RuleEdit, SetEdit};
use crate::error::PolicyError;
use crate::group::{Group, GroupId, MemberChange};
use crate::input::{
    CompiledPolicy, CompiledRule, GroupKey, Peer, PodInfo, PortSpec, namespace_labels,
};
use crate::membership::{Membership, OnMemberChange, Placement};
use crate::policy_state::PolicyState;
use crate::selector::Labels;
use model::policy::{
    AddressSet, Direction, Peers, PodKey, PolicyKey, PortMatch, Ports, Protocol, Rule, RuleId,
    RulePart, Snapshot,
};

/// What one policy contributes to the snapshot.
#[derive(Debug, Default)]
struct PolicyOutput {
    rules: BTreeSet<RuleId>,
    ingress: BTreeSet<Ipv4Addr>,
    egress: BTreeSet<Ipv4Addr>,
}

impl PolicyOutput {
    fn isolated_mut(&mut self, direction: Direction) -> &mut BTreeSet<Ipv4Addr> {
        match direction {
            Direction::Ingress => &mut self.ingress,
            Direction::Egress => &mut self.egress,
        }
    }

    fn is_empty(&self) -> bool {
        self.rules.is_empty() && self.ingress.is_empty() && self.egress.is_empty()
    }
}

/// What a [`PolicyEngine::sync`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Policies recomputed whole (new, changed or removed policies, and those that started or
    /// stopped applying to a local Pod).
    pub policies: usize,
    /// Rules patched by membership changes (or, with named ports, recomputed alone).
    pub rules: usize,
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

/// Where a member change happened, as the policies see it: whether the Pod ran on this Node
/// before and after.
#[derive(Debug, Clone, Copy)]
struct Locality {
    before: bool,
    after: bool,
}

/// NetworkPolicy state for the Pods of one Node.
#[derive(Debug)]
pub struct PolicyEngine {
    node: String,
    membership: Membership,
    policies: BTreeMap<PolicyKey, CompiledPolicy>,
    states: HashMap<PolicyKey, PolicyState>,
    outputs: BTreeMap<PolicyKey, PolicyOutput>,
    snapshot: Snapshot,
    /// How many policies isolate each local Pod IP, per direction.
    isolating: [BTreeMap<Ipv4Addr, usize>; 2],
    /// Policies to recompute whole.
    dirty: BTreeSet<PolicyKey>,
    /// Policies with member changes to patch in.
    touched: BTreeSet<PolicyKey>,
    /// How the snapshot changed since the last [`PolicyEngine::sync`] returned.
    delta: PolicyDelta,
    recomputed: u64,
    rules_patched: u64,
}

impl PolicyEngine {
    /// An empty engine for the Pods running on Node `node`.
    pub fn new(node: impl Into<String>) -> PolicyEngine {
        PolicyEngine {
            node: node.into(),
            membership: Membership::default(),
            policies: BTreeMap::new(),
            states: HashMap::new(),
            outputs: BTreeMap::new(),
            snapshot: Snapshot::default(),
            isolating: [BTreeMap::new(), BTreeMap::new()],
            dirty: BTreeSet::new(),
            touched: BTreeSet::new(),
            delta: PolicyDelta::default(),
            recomputed: 0,
            rules_patched: 0,
        }
    }

    /// An empty engine for the Pods of Node `node` whose groups and members are given
    /// ([`Membership::given`]), not evaluated from Pods and Namespaces.
    pub fn given(node: impl Into<String>) -> PolicyEngine {
        PolicyEngine {
            membership: Membership::given(),
            ..PolicyEngine::new(node)
        }
    }

    /// Gives group `key` with exactly `members` (Pods with their address, Node and named
    /// ports; labels are not read). It stays until [`Self::take_back_group`], read by a policy
    /// or not. Given mode only.
    pub fn give_group(&mut self, key: &GroupKey, members: impl IntoIterator<Item = PodInfo>) {
        self.membership_change(|m, reach| m.give_group(key, members, reach));
    }

    /// A given group gains `member`, or `member`'s details change. Given mode only.
    pub fn give_member(&mut self, key: &GroupKey, member: PodInfo) {
        self.membership_change(|m, reach| m.give_member(key, member, reach));
    }

    /// A given group loses Pod `pod`. Given mode only.
    pub fn take_member(&mut self, key: &GroupKey, pod: &PodKey) {
        self.membership_change(|m, reach| m.take_member(key, pod, reach));
    }

    /// A given group is taken back (its policies were removed first). Given mode only.
    pub fn take_back_group(&mut self, key: &GroupKey) {
        self.membership_change(|m, reach| m.take_back_group(key, reach));
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
        self.membership_change(|m, reach| m.set_pod(info, reach));
    }

    /// Removes a Pod.
    pub fn remove_pod(&mut self, key: &PodKey) {
        self.membership_change(|m, reach| m.remove_pod(key, reach));
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
        self.membership_change(|m, reach| m.set_namespace(name, labels, reach));
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
        let ids: BTreeMap<GroupKey, GroupId> = policy
            .groups()
            .into_iter()
            .map(|g| {
                let id = self.use_group(&g, &key);
                (g, id)
            })
            .collect();
        // Among them already: this only reads its id.
        let applied_to = self.use_group(&policy.applied_to, &key);
        self.states
            .insert(key.clone(), PolicyState::new(&policy, applied_to, &ids));
        self.policies.insert(key.clone(), policy);
        self.dirty.insert(key);
    }

    /// Removes a NetworkPolicy.
    pub fn remove_policy(&mut self, key: &PolicyKey) {
        self.release_groups(key);
        self.policies.remove(key);
        self.states.remove(key);
        self.dirty.insert(key.clone());
    }

    /// Recomputes the policies changes made dirty and patches the rules member changes
    /// touched; reports how many, and how the snapshot changed since the previous `sync`.
    pub fn sync(&mut self) -> SyncReport {
        let (policies, rules) = self.recompute();
        SyncReport {
            policies,
            rules,
            delta: mem::take(&mut self.delta),
        }
    }

    /// The current result (recomputing first; what changed is still reported by the next
    /// [`PolicyEngine::sync`]).
    pub fn snapshot(&mut self) -> &Snapshot {
        self.recompute();
        &self.snapshot
    }

    /// Recomputes the dirty policies and patches the touched ones, adding what changed to the
    /// pending delta; returns how many policies it recomputed and rules it patched.
    fn recompute(&mut self) -> (usize, usize) {
        let dirty = mem::take(&mut self.dirty);
        for key in &dirty {
            self.recomputed += 1;
            self.rebuild(key);
        }
        let mut patched = 0;
        for key in mem::take(&mut self.touched) {
            patched += self.patch(&key);
        }
        self.rules_patched += patched as u64;
        (dirty.len(), patched)
    }

    /// What the engine knows of a Pod.
    pub fn pod(&self, key: &PodKey) -> Option<&PodInfo> {
        self.membership.pod(key)
    }

    /// How many whole-policy recomputations all syncs did so far (for tests and metrics).
    pub fn recomputed(&self) -> u64 {
        self.recomputed
    }

    /// How many rules all syncs patched (or recomputed alone) for member changes so far.
    pub fn rules_patched(&self) -> u64 {
        self.rules_patched
    }

    /// Number of Pod groups (distinct selectors in use).
    pub fn group_count(&self) -> usize {
        self.membership.groups().len()
    }

    /// Runs one membership change, passing each member change to the policies it reaches.
    fn membership_change(&mut self, change: impl FnOnce(&mut Membership, &mut OnMemberChange<'_>)) {
        let PolicyEngine {
            node,
            membership,
            states,
            dirty,
            touched,
            ..
        } = self;
        let mut reached = Reached {
            node,
            states,
            dirty,
            touched,
        };
        change(membership, &mut |g, group, change, placement| {
            reached.member_moved(g, group, change, placement)
        });
    }

    fn use_group(&mut self, g: &GroupKey, user: &PolicyKey) -> GroupId {
        self.membership.use_group(g, user)
    }

    fn release_groups(&mut self, user: &PolicyKey) {
        let Some(policy) = self.policies.get(user) else {
            return;
        };
        for g in policy.groups() {
            self.membership.release(&g, user);
        }
    }

    fn members<'a>(&'a self, g: &GroupKey) -> impl Iterator<Item = &'a PodInfo> + 'a {
        self.membership.members(g)
    }

    /// The peer IPs of a rule's Pod peers (a group listed twice counts twice).
    fn peer_ips(&self, rule: &CompiledRule) -> Counted {
        rule.peers
            .iter()
            .flatten()
            .filter_map(|p| match p {
                Peer::Pods(g) => self.membership.groups().of(g),
                Peer::Block(_) => None,
            })
            .flat_map(|group| group.members.values().copied())
            .collect()
    }

    /// Recomputes a policy from its groups' members: its rules, isolation and the state its
    /// later patches start from.
    fn rebuild(&mut self, key: &PolicyKey) {
        let Some(policy) = self.policies.get(key) else {
            self.replace_output(key, Vec::new(), [BTreeSet::new(), BTreeSet::new()]);
            return;
        };
        let applied: Vec<&PodInfo> = self
            .members(&policy.applied_to)
            .filter(|p| p.node.as_deref() == Some(self.node.as_str()))
            .collect();
        let counted: Counted = applied.iter().filter_map(|p| p.ip).collect();
        let applied_ips: BTreeSet<Ipv4Addr> = counted.ips().collect();
        let mut rules = Vec::new();
        let mut isolation = [BTreeSet::new(), BTreeSet::new()];
        let mut peers = Vec::new();
        let active = !applied.is_empty();
        if active {
            for direction in [Direction::Ingress, Direction::Egress] {
                if policy.rules(direction).is_some() {
                    isolation[direction as usize] = applied_ips.clone();
                }
            }
            let slots = self.states.get(key).map(|s| &s.slots[..]).unwrap_or(&[]);
            for slot in slots {
                let Some(rule) = policy
                    .rules(slot.direction)
                    .and_then(|list| list.get(slot.index))
                else {
                    continue;
                };
                let id = |part| RuleId {
                    policy: key.clone(),
                    direction: slot.direction,
                    index: slot.index,
                    part,
                };
                if slot.resolved {
                    self.compute_rule(rule, slot.direction, &applied, &applied_ips, id, &mut rules);
                    peers.push(Counted::default());
                } else {
                    let counted_peers = self.peer_ips(rule);
                    rules.extend(counted_rule(
                        id(RulePart::Numeric),
                        &counted,
                        rule,
                        &counted_peers,
                    ));
                    peers.push(counted_peers);
                }
            }
        }
        if let Some(state) = self.states.get_mut(key) {
            state.applied = counted;
            state.applied_edit = SetEdit::default();
            state.active = active;
            state.touched = false;
            let mut peers = peers.into_iter();
            for slot in &mut state.slots {
                slot.peers = peers.next().unwrap_or_default();
                slot.edit = SetEdit::default();
                slot.stale = false;
            }
        }
        self.replace_output(key, rules, isolation);
    }

    /// Patches into the snapshot the member changes a policy's state holds since the last
    /// sync; returns the rules patched.
    fn patch(&mut self, key: &PolicyKey) -> usize {
        let Some(state) = self.states.get_mut(key) else {
            return 0;
        };
        if !state.touched {
            // Recomputed whole since.
            return 0;
        }
        state.touched = false;
        let applied_edit = mem::take(&mut state.applied_edit);
        let mut work = Vec::new();
        for (i, slot) in state.slots.iter_mut().enumerate() {
            let edit = mem::take(&mut slot.edit);
            let stale = mem::take(&mut slot.stale);
            let changed = if slot.resolved {
                stale || !applied_edit.is_empty()
            } else {
                !edit.is_empty() || !applied_edit.is_empty()
            };
            if changed {
                work.push((i, edit));
            }
        }
        // Taken out while its rules are patched (put back below).
        let Some(policy) = self.policies.remove(key) else {
            return 0;
        };
        let mut output = self.outputs.remove(key).unwrap_or_default();
        for direction in [Direction::Ingress, Direction::Egress] {
            if policy.rules(direction).is_none() {
                continue;
            }
            for ip in &applied_edit.removed {
                output.isolated_mut(direction).remove(ip);
                self.release_ip(direction, *ip);
            }
            for ip in &applied_edit.added {
                output.isolated_mut(direction).insert(*ip);
                self.isolate_ip(direction, *ip);
            }
        }
        let patched = work.len();
        for (i, peer_edit) in work {
            let state = &self.states[key];
            let slot = &state.slots[i];
            let (direction, index) = (slot.direction, slot.index);
            let Some(rule) = policy.rules(direction).and_then(|l| l.get(index)) else {
                continue;
            };
            if slot.resolved {
                let applied: Vec<&PodInfo> = self
                    .members(&policy.applied_to)
                    .filter(|p| p.node.as_deref() == Some(self.node.as_str()))
                    .collect();
                let applied_ips: BTreeSet<Ipv4Addr> = state.applied.ips().collect();
                let id = |part| RuleId {
                    policy: key.clone(),
                    direction,
                    index,
                    part,
                };
                let mut parts = Vec::new();
                self.compute_rule(rule, direction, &applied, &applied_ips, id, &mut parts);
                let old: Vec<RuleId> = output
                    .rules
                    .iter()
                    .filter(|id| id.direction == direction && id.index == index)
                    .cloned()
                    .collect();
                self.put_rules(&mut output, old, parts);
                continue;
            }
            let id = RuleId {
                policy: key.clone(),
                direction,
                index,
                part: RulePart::Numeric,
            };
            let complete = match &rule.peers {
                None => true,
                Some(list) => {
                    !slot.peers.is_empty()
                        || list
                            .iter()
                            .any(|p| matches!(p, Peer::Block(c) if !c.is_empty()))
                }
            };
            match (self.snapshot.rules.get_mut(&id), complete) {
                (Some(current), true) => {
                    let edit = RuleEdit {
                        applied_to: applied_edit.clone(),
                        peer_ips: peer_edit,
                        ..RuleEdit::default()
                    };
                    edit.apply(current);
                    self.delta.edit_rule(id, edit);
                }
                (Some(_), false) => {
                    self.snapshot.rules.remove(&id);
                    output.rules.remove(&id);
                    self.delta.remove_rule(id);
                }
                (None, true) => {
                    if let Some(new) = counted_rule(id.clone(), &state.applied, rule, &slot.peers) {
                        self.delta.add_rule(new.clone());
                        self.snapshot.rules.insert(id.clone(), new);
                        output.rules.insert(id);
                    }
                }
                (None, false) => {}
            }
        }
        if !output.is_empty() {
            self.outputs.insert(key.clone(), output);
        }
        self.policies.insert(key.clone(), policy);
        patched
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
                            let group = self.membership.groups().of(g).into_iter();
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
        rules: Vec<Rule>,
        [ingress, egress]: [BTreeSet<Ipv4Addr>; 2],
    ) {
        let mut old = self.outputs.remove(key).unwrap_or_default();
        let old_rules: Vec<RuleId> = mem::take(&mut old.rules).into_iter().collect();
        let mut output = PolicyOutput::default();
        self.put_rules(&mut output, old_rules, rules);
        for (direction, new) in [(Direction::Ingress, &ingress), (Direction::Egress, &egress)] {
            let was = old.isolated_mut(direction);
            for ip in was.difference(new) {
                self.release_ip(direction, *ip);
            }
            for ip in new.difference(was) {
                self.isolate_ip(direction, *ip);
            }
        }
        output.ingress = ingress;
        output.egress = egress;
        if !output.is_empty() {
            self.outputs.insert(key.clone(), output);
        }
    }

    /// Replaces the rules `old` of a policy's output by `new`: gone ones removed, new ones
    /// added, changed ones changed with their edit.
    fn put_rules(&mut self, output: &mut PolicyOutput, old: Vec<RuleId>, new: Vec<Rule>) {
        let new_ids: BTreeSet<&RuleId> = new.iter().map(|r| &r.id).collect();
        for id in old {
            if !new_ids.contains(&id) {
                output.rules.remove(&id);
                if self.snapshot.rules.remove(&id).is_some() {
                    self.delta.remove_rule(id);
                }
            }
        }
        for rule in new {
            output.rules.insert(rule.id.clone());
            match self.snapshot.rules.get(&rule.id) {
                Some(current) if *current == rule => continue,
                Some(current) => match RuleEdit::between(current, &rule) {
                    Some(edit) => self.delta.edit_rule(rule.id.clone(), edit),
                    None => self.delta.change_rule(rule.clone()),
                },
                None => self.delta.add_rule(rule.clone()),
            }
            self.snapshot.rules.insert(rule.id.clone(), rule);
        }
    }

    /// One more policy isolates `ip` in `direction`; an IP is isolated while one does.
    fn isolate_ip(&mut self, direction: Direction, ip: Ipv4Addr) {
        let n = self.isolating[direction as usize].entry(ip).or_insert(0);
        *n += 1;
        if *n == 1 {
            isolation_mut(&mut self.snapshot, direction).insert(ip);
            self.delta.isolate(direction, ip);
        }
    }

    /// One policy fewer isolates `ip` in `direction`.
    fn release_ip(&mut self, direction: Direction, ip: Ipv4Addr) {
        let counts = &mut self.isolating[direction as usize];
        let Some(n) = counts.get_mut(&ip) else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            counts.remove(&ip);
            isolation_mut(&mut self.snapshot, direction).remove(&ip);
            self.delta.release(direction, ip);
        }
    }
}

fn isolation_mut(snapshot: &mut Snapshot, direction: Direction) -> &mut BTreeSet<Ipv4Addr> {
    match direction {
        Direction::Ingress => &mut snapshot.isolation.ingress,
        Direction::Egress => &mut snapshot.isolation.egress,
    }
}

/// What a member change asks of a policy.
#[derive(Debug, PartialEq, Eq)]
enum Effect {
    None,
    /// Patch its rules at the next sync.
    Patch,
    /// Recompute it whole (it starts or stops applying to a local Pod).
    Recompute,
}

/// Applies a member change of group `g` to a policy's state: its local applied-to IPs if `g`
/// is its applied-to group, the peer IPs of its rules that read `g`.
/// What a member change reaches in the engine: the states of the policies using the group
/// and the work lists of the next sync.
struct Reached<'a> {
    node: &'a str,
    states: &'a mut HashMap<PolicyKey, PolicyState>,
    dirty: &'a mut BTreeSet<PolicyKey>,
    touched: &'a mut BTreeSet<PolicyKey>,
}

impl Reached<'_> {
    /// Passes a member change of group `g` to the policies using it: each patches what it
    /// built from the group, or is to be recomputed whole.
    fn member_moved(
        &mut self,
        g: GroupId,
        group: &Group,
        change: &MemberChange,
        placement: Placement<'_>,
    ) {
        let locality = Locality {
            before: placement.before == Some(self.node),
            after: placement.after == Some(self.node),
        };
        for user in &group.users {
            if self.dirty.contains(user) {
                continue;
            }
            let Some(state) = self.states.get_mut(user) else {
                continue;
            };
            match member_changed(state, g, change, locality) {
                Effect::None => {}
                Effect::Recompute => {
                    self.dirty.insert(user.clone());
                }
                Effect::Patch => {
                    if !state.touched {
                        state.touched = true;
                        self.touched.insert(user.clone());
                    }
                }
            }
        }
    }
}

fn member_changed(
    state: &mut PolicyState,
    g: GroupId,
    change: &MemberChange,
    locality: Locality,
) -> Effect {
    let mut effect = Effect::None;
    if g == state.applied_to {
        let before = change.before.filter(|_| locality.before);
        let after = change.after.filter(|_| locality.after);
        if before != after {
            if let Some(ip) = before
                && state.applied.remove(ip)
            {
                state.applied_edit.remove(ip);
            }
            if let Some(ip) = after
                && state.applied.add(ip)
            {
                state.applied_edit.add(ip);
            }
            if state.applied.is_empty() == state.active {
                return Effect::Recompute;
            }
        }
        if state.active && (before.is_some() || after.is_some()) {
            // Named ports of ingress rules resolve on the applied-to Pods.
            for slot in state.slots.iter_mut().filter(|s| s.resolved) {
                slot.stale = true;
                effect = Effect::Patch;
            }
            if before != after {
                effect = Effect::Patch;
            }
        }
    }
    if !state.active {
        return effect;
    }
    for &(reader, i) in &state.readers {
        if reader != g {
            continue;
        }
        let slot = &mut state.slots[i];
        if slot.resolved {
            slot.stale = true;
            effect = Effect::Patch;
            continue;
        }
        if change.before == change.after {
            continue;
        }
        if let Some(ip) = change.before
            && slot.peers.remove(ip)
        {
            slot.edit.remove(ip);
        }
        if let Some(ip) = change.after
            && slot.peers.add(ip)
        {
            slot.edit.add(ip);
        }
        effect = Effect::Patch;
    }
    effect
}

/// The rule (numeric ports or any) of a rule without named ports, from its counted applied-to
/// and peer IPs; `None` if a dimension is empty.
fn counted_rule(
    id: RuleId,
    applied: &Counted,
    rule: &CompiledRule,
    peers: &Counted,
) -> Option<Rule> {
    let peers = match &rule.peers {
        None => Peers::Any,
        Some(list) => {
            let cidrs = list
                .iter()
                .filter_map(|p| match p {
                    Peer::Block(cidrs) => Some(cidrs.iter().copied()),
                    Peer::Pods(_) => None,
                })
                .flatten()
                .collect();
            Peers::Set(AddressSet {
                ips: peers.ips().collect(),
                cidrs,
            })
        }
    };
    let ports = match &rule.ports {
        None => Ports::Any,
        Some(specs) => Ports::Set(
            specs
                .iter()
                .filter_map(|s| match s {
                    PortSpec::Numbers(m) => Some(*m),
                    PortSpec::Named { .. } => None,
                })
                .collect(),
        ),
    };
    let empty = applied.is_empty()
        || matches!(&peers, Peers::Set(s) if s.is_empty())
        || matches!(&ports, Ports::Set(s) if s.is_empty());
    (!empty).then(|| Rule {
        id,
        applied_to: applied.ips().collect(),
        peers,
        ports,
    })
}
