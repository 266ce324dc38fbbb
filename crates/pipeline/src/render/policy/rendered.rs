//! [`Rendered`]: the NetworkPolicy owner's flows as the renderer holds them between changes.
//! Each flow knows who needs it — a clause flow the conjunction actions of the rules sharing
//! it, any other flow how many rules (or isolated Pods) need it — and each rule knows the flows
//! it contributes to. A [`PolicyDelta`] then re-renders only the entries its rules gained or
//! lost — an edited rule's straight from its edit, so a rule of many entries that gained one
//! costs one; a changed one's by comparing versions; all entries of a rule that is new, gone or
//! changes shape — and the flows whose content changed make the [`PolicyPatch`].
//!
//! Every change is written to a [`Journal`] (the state it replaced) until the caller knows the
//! switch took the patch; [`Rendered::undo`] puts the state back after a refused one, so the
//! renderer never runs ahead of the switch. Both cost what the change touched.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use netpol::{Direction, PolicyDelta, Rule, RuleEdit, RuleId, Snapshot};
use openflow::action::Action;
use openflow::msg::flow_mod::FlowMod;
use openflow::oxm::{Field, Match};

use super::conj_ids::ConjIds;
use super::entries::{
    Entry, Shape, changed_entries, complete, complete_after, edited_entries, entries, put,
};
use super::{PolicyFlows, PolicyPatch, RuleFlows, Tables, tables};
use crate::cache::FlowKey;
use crate::layout::TableGraph;
use crate::layout::priority::{HIGH, NORMAL};
use crate::render::{flow, ip, ipv4};

/// A flow's part in a conjunction: (id, clause, number of clauses).
type Clause = (u32, u8, u8);

/// The clause number a rule's `conj_id` flow has among its parts.
const DECISION: u8 = 0;

/// A rule's part in one flow: its clause there ([`DECISION`] for its `conj_id` flow), and how
/// many of its entries yield the flow (the blocks of two port ranges may coincide).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Part {
    clause: u8,
    entries: u32,
}

/// What the renderer keeps of a rule.
#[derive(Debug, Clone)]
struct RuleState {
    rule: Rule,
    /// Its conjunction id (0 for a single-dimension rule or one without flows).
    conj_id: u32,
    /// The flows it contributes to.
    parts: BTreeMap<FlowKey, Part>,
    /// Distinct flows per clause (index: clause − 1).
    per_clause: [usize; 3],
}

/// How a rule needs a flow.
#[derive(Debug, Clone, Copy)]
enum Role {
    /// As it is: a single-dimension rule's flow, a `conj_id` flow, an isolated Pod's drop.
    Fixed,
    /// With this conjunction action among the flow's others.
    Clause(Clause),
}

impl RuleState {
    fn new(rule: Rule) -> RuleState {
        RuleState {
            rule,
            conj_id: 0,
            parts: BTreeMap::new(),
            per_clause: [0; 3],
        }
    }

    fn role(&self, clause: u8) -> Role {
        let n = Shape::of(&self.rule).dimensions();
        if clause == DECISION || n == 1 {
            Role::Fixed
        } else {
            Role::Clause((self.conj_id, clause, n))
        }
    }

    /// One more entry of the rule yields the flow `key` (shared with the owner's, see
    /// [`OwnerFlows::key`]), which `flow` makes should the owner need it whole; `before` keeps
    /// the part's previous value (for a rule patched in place).
    fn add(
        &mut self,
        key: FlowKey,
        flow: impl FnOnce() -> FlowMod,
        clause: u8,
        owner: &mut OwnerFlows,
        journal: &mut Journal,
        before: Option<&mut BTreeMap<FlowKey, Option<Part>>>,
    ) {
        let role = self.role(clause);
        if let Some(before) = before {
            before
                .entry(key.clone())
                .or_insert_with(|| self.parts.get(&key).copied());
        }
        let part = self
            .parts
            .entry(key.clone())
            .or_insert(Part { clause, entries: 0 });
        part.entries += 1;
        if part.entries == 1 {
            if clause != DECISION {
                self.per_clause[usize::from(clause) - 1] += 1;
            }
            owner.add(key, flow, role, journal);
        }
    }

    /// One entry fewer of the rule yields the flow `key`.
    fn drop(
        &mut self,
        key: &FlowKey,
        owner: &mut OwnerFlows,
        journal: &mut Journal,
        before: Option<&mut BTreeMap<FlowKey, Option<Part>>>,
    ) {
        let Some(part) = self.parts.get(key).copied() else {
            return;
        };
        if let Some(before) = before {
            before.entry(key.clone()).or_insert(Some(part));
        }
        if part.entries > 1 {
            self.parts.insert(
                key.clone(),
                Part {
                    entries: part.entries - 1,
                    ..part
                },
            );
            return;
        }
        self.parts.remove(key);
        if part.clause != DECISION {
            self.per_clause[usize::from(part.clause) - 1] -= 1;
        }
        owner.drop(key, self.role(part.clause), journal);
    }

    /// What the rule costs, if it has flows.
    fn flows(&self) -> Option<RuleFlows> {
        if self.parts.is_empty() {
            return None;
        }
        let n = usize::from(Shape::of(&self.rule).dimensions());
        let counted = self
            .parts
            .iter()
            .filter(|(_, part)| n == 1 || part.clause == DECISION)
            .map(|(key, _)| key.clone())
            .collect();
        Some(RuleFlows {
            conj_id: if n == 1 { 0 } else { self.conj_id },
            flows: self.parts.len(),
            without_conjunction: self.per_clause[..n].iter().product(),
            counted,
        })
    }
}

/// The conjunction actions of the rules sharing a clause flow, in (id, clause) order, each
/// once. Boxed to its length: a Node's clause flows are most of its policy flows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Conjunctions(Box<[Clause]>);

impl Conjunctions {
    fn insert(&mut self, clause: Clause) {
        if let Err(at) = self.0.binary_search(&clause) {
            let mut clauses = std::mem::take(&mut self.0).into_vec();
            clauses.insert(at, clause);
            self.0 = clauses.into_boxed_slice();
        }
    }

    fn remove(&mut self, clause: &Clause) {
        if let Ok(at) = self.0.binary_search(clause) {
            let mut clauses = std::mem::take(&mut self.0).into_vec();
            clauses.remove(at);
            self.0 = clauses.into_boxed_slice();
        }
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The owner's flows, each with who needs it.
#[derive(Debug, Clone, Default)]
struct OwnerFlows {
    /// Flows whose actions do not depend on who needs them, with how many do.
    fixed: BTreeMap<FlowKey, (FlowMod, u32)>,
    /// Clause flows, by key alone (a clause flow is its key and its conjunction actions), with
    /// the conjunction actions of the rules sharing each.
    clauses: BTreeMap<FlowKey, Conjunctions>,
}

impl OwnerFlows {
    /// The key of the flow in `table_id` at `priority` with `flow_match`: the equal key already
    /// held if there is one, so that every rule needing a flow shares one key, found without
    /// allocating (`scratch` holds the bytes); else a new key.
    fn key(
        &self,
        table_id: u8,
        priority: u16,
        flow_match: &Match,
        scratch: &mut Vec<u8>,
    ) -> FlowKey {
        FlowKey::encode(table_id, priority, flow_match, scratch);
        let bytes = scratch.as_slice();
        let held = self.clauses.get_key_value(bytes).map(|(k, _)| k);
        match held.or_else(|| self.fixed.get_key_value(bytes).map(|(k, _)| k)) {
            Some(held) => held.clone(),
            None => FlowKey::from_encoded(bytes),
        }
    }

    /// One more user of the flow `key` in `role`; `flow` makes it whole if it is new and fixed.
    fn add(
        &mut self,
        key: FlowKey,
        flow: impl FnOnce() -> FlowMod,
        role: Role,
        journal: &mut Journal,
    ) {
        match role {
            Role::Fixed => {
                journal.touch_fixed(&self.fixed, &key);
                self.fixed.entry(key).or_insert_with(|| (flow(), 0)).1 += 1;
            }
            Role::Clause(clause) => {
                journal.touch_clause(&self.clauses, &key);
                self.clauses.entry(key).or_default().insert(clause);
            }
        }
    }

    fn drop(&mut self, key: &FlowKey, role: Role, journal: &mut Journal) {
        match role {
            Role::Fixed => {
                journal.touch_fixed(&self.fixed, key);
                if let Some((_, users)) = self.fixed.get_mut(key) {
                    *users -= 1;
                    if *users == 0 {
                        self.fixed.remove(key);
                    }
                }
            }
            Role::Clause(clause) => {
                journal.touch_clause(&self.clauses, key);
                if let Some(clauses) = self.clauses.get_mut(key) {
                    clauses.remove(&clause);
                    if clauses.is_empty() {
                        self.clauses.remove(key);
                    }
                }
            }
        }
    }
}

/// The clause flow `key` with its conjunction actions, in (id, clause) order.
fn with_conjunctions(key: &FlowKey, clauses: &Conjunctions) -> FlowMod {
    let mut fm = key.add();
    fm.instructions.apply = clauses
        .0
        .iter()
        .map(|&(id, clause, n_clauses)| Action::Conjunction {
            id,
            clause,
            n_clauses,
        })
        .collect();
    fm
}

/// What a rule was before a change, for [`Rendered::undo`].
#[derive(Debug)]
enum RuleBefore {
    /// Not there.
    Absent,
    /// This state, replaced whole (the rule was removed or changed shape).
    Whole(RuleState),
    /// Patched in place: the entries it gained and lost, and the previous value of each part
    /// touched.
    Patched {
        added: Vec<Entry>,
        removed: Vec<Entry>,
        per_clause: [usize; 3],
        parts: BTreeMap<FlowKey, Option<Part>>,
    },
}

/// A conjunction id the change allocated or released.
#[derive(Debug)]
enum IdChange {
    Allocated(RuleId),
    Released(RuleId, u32),
}

/// What one change did: the previous value of everything it touched, and how much it
/// rendered. A journal that does not record (a whole render) only counts.
#[derive(Debug, Default)]
pub(super) struct Journal {
    recording: bool,
    fixed: BTreeMap<FlowKey, Option<(FlowMod, u32)>>,
    clauses: BTreeMap<FlowKey, Option<Conjunctions>>,
    rules: Vec<(RuleId, RuleBefore)>,
    /// Isolation switched: direction, Pod IP, whether isolated after.
    isolation: Vec<(Direction, Ipv4Addr, bool)>,
    ids: Vec<IdChange>,
    /// Rules whose entries were rendered.
    pub(super) rules_rendered: usize,
    /// Entries rendered (an address or a port range).
    pub(super) entries_rendered: usize,
}

impl Journal {
    /// A journal that keeps what a change replaces.
    pub(super) fn recording() -> Journal {
        Journal {
            recording: true,
            ..Journal::default()
        }
    }

    fn touch_fixed(&mut self, fixed: &BTreeMap<FlowKey, (FlowMod, u32)>, key: &FlowKey) {
        if self.recording && !self.fixed.contains_key(key) {
            self.fixed.insert(key.clone(), fixed.get(key).cloned());
        }
    }

    fn touch_clause(&mut self, clauses: &BTreeMap<FlowKey, Conjunctions>, key: &FlowKey) {
        if self.recording && !self.clauses.contains_key(key) {
            self.clauses.insert(key.clone(), clauses.get(key).cloned());
        }
    }

    fn rule(&mut self, id: &RuleId, before: RuleBefore) {
        if self.recording {
            self.rules.push((id.clone(), before));
        }
    }

    fn id(&mut self, change: IdChange) {
        if self.recording {
            self.ids.push(change);
        }
    }

    fn isolation(&mut self, direction: Direction, ip: Ipv4Addr, isolated: bool) {
        if self.recording {
            self.isolation.push((direction, ip, isolated));
        }
    }
}

/// The owner's flows, the rules behind them and the isolated Pods, kept between changes.
#[derive(Debug, Clone)]
pub(super) struct Rendered {
    egress: Tables<'static>,
    ingress: Tables<'static>,
    ids: ConjIds,
    owner: OwnerFlows,
    rules: BTreeMap<RuleId, RuleState>,
    /// Isolated Pod IPs, per direction (index: `Direction as usize`).
    isolated: [BTreeSet<Ipv4Addr>; 2],
}

impl Default for Rendered {
    fn default() -> Rendered {
        Rendered {
            egress: tables(TableGraph::standard(), Direction::Egress),
            ingress: tables(TableGraph::standard(), Direction::Ingress),
            ids: ConjIds::default(),
            owner: OwnerFlows::default(),
            rules: BTreeMap::new(),
            isolated: [BTreeSet::new(), BTreeSet::new()],
        }
    }
}

impl Rendered {
    /// Takes the tables' ids from `g` from now on (before the first render).
    pub(super) fn set_graph(&mut self, g: &'static TableGraph) {
        self.egress = tables(g, Direction::Egress);
        self.ingress = tables(g, Direction::Ingress);
    }

    fn tables(&self, direction: Direction) -> &Tables<'static> {
        match direction {
            Direction::Egress => &self.egress,
            Direction::Ingress => &self.ingress,
        }
    }

    /// Makes the state `snapshot`'s from scratch; rules of the snapshot keep their
    /// conjunction ids, the others' are released.
    pub(super) fn reset(&mut self, snapshot: &Snapshot, journal: &mut Journal) {
        self.ids.retain(|id| snapshot.rules.contains_key(id));
        self.owner = OwnerFlows::default();
        self.rules.clear();
        self.isolated = [BTreeSet::new(), BTreeSet::new()];
        for rule in snapshot.rules.values() {
            self.upsert(rule, journal);
        }
        for direction in [Direction::Ingress, Direction::Egress] {
            for pod in snapshot.isolation.of(direction) {
                self.set_isolated(direction, *pod, true, journal);
            }
        }
    }

    /// Applies `delta`: removed rules first, then added and changed ones, then isolation.
    pub(super) fn apply(&mut self, delta: &PolicyDelta, journal: &mut Journal) {
        for id in &delta.removed {
            self.remove(id, journal);
        }
        for rule in delta.upserted() {
            self.upsert(rule, journal);
        }
        for (id, edit) in &delta.edited {
            self.edit(id, edit, journal);
        }
        for direction in [Direction::Ingress, Direction::Egress] {
            for pod in delta.released.of(direction) {
                self.set_isolated(direction, *pod, false, journal);
            }
            for pod in delta.isolated.of(direction) {
                self.set_isolated(direction, *pod, true, journal);
            }
        }
    }

    fn remove(&mut self, id: &RuleId, journal: &mut Journal) {
        let Some(old) = self.rules.remove(id) else {
            return;
        };
        self.unrender(&old, journal);
        if let Some(conj_id) = self.ids.release(id) {
            journal.id(IdChange::Released(id.clone(), conj_id));
        }
        journal.rule(id, RuleBefore::Whole(old));
    }

    /// Puts `rule` in the state: a rule of the same shape patched in place by the entries the
    /// two versions differ in (a walk of both), any other rendered anew.
    fn upsert(&mut self, rule: &Rule, journal: &mut Journal) {
        let Some(state) = self.rules.get(&rule.id) else {
            journal.rule(&rule.id, RuleBefore::Absent);
            let state = self.render(rule.clone(), journal);
            self.rules.insert(rule.id.clone(), state);
            return;
        };
        if state.rule == *rule {
            return;
        }
        let in_place =
            Shape::of(&state.rule) == Shape::of(rule) && complete(&state.rule) && complete(rule);
        if in_place {
            let (added, removed) = changed_entries(&state.rule, rule);
            self.patch_rule(&rule.id, added, removed, journal);
            return;
        }
        self.rerender(rule, journal);
    }

    /// Edits rule `id` by `edit` (from a delta: the rule's shape stays), at the cost of the
    /// edit: only the entries it adds that the rule lacks and removes that it has are rendered,
    /// so an edit the state already reflects changes nothing.
    fn edit(&mut self, id: &RuleId, edit: &RuleEdit, journal: &mut Journal) {
        let Some(state) = self.rules.get(id) else {
            return;
        };
        let (added, removed) = edited_entries(&state.rule, edit);
        if added.is_empty() && removed.is_empty() {
            return;
        }
        if complete(&state.rule) && complete_after(&state.rule, &added, &removed) {
            self.patch_rule(id, added, removed, journal);
            return;
        }
        // A dimension empties or fills: the rule loses or gains all its flows.
        let mut rule = state.rule.clone();
        put(&mut rule, &added, &removed);
        self.rerender(&rule, journal);
    }

    /// Renders the entries a rule with flows gains and loses (its shape and completeness
    /// unchanged), and puts them in its copy of the rule.
    fn patch_rule(
        &mut self,
        id: &RuleId,
        added: Vec<Entry>,
        removed: Vec<Entry>,
        journal: &mut Journal,
    ) {
        let Some(state) = self.rules.get_mut(id) else {
            return;
        };
        let direction = id.direction;
        let t = match direction {
            Direction::Egress => &self.egress,
            Direction::Ingress => &self.ingress,
        };
        let shape = Shape::of(&state.rule);
        let n = shape.dimensions();
        journal.rules_rendered += 1;
        journal.entries_rendered += added.len() + removed.len();
        let mut parts = BTreeMap::new();
        let per_clause = state.per_clause;
        let mut scratch = Vec::new();
        for entry in &removed {
            for m in entry.matches(direction) {
                let key = entry_key(&self.owner, t, n, &m, &mut scratch);
                state.drop(&key, &mut self.owner, journal, Some(&mut parts));
            }
        }
        for entry in &added {
            let clause = shape.clause(entry);
            for m in entry.matches(direction) {
                let key = entry_key(&self.owner, t, n, &m, &mut scratch);
                let flow = || entry_flow(t, n, m);
                state.add(
                    key,
                    flow,
                    clause,
                    &mut self.owner,
                    journal,
                    Some(&mut parts),
                );
            }
        }
        put(&mut state.rule, &added, &removed);
        journal.rule(
            id,
            RuleBefore::Patched {
                added,
                removed,
                per_clause,
                parts,
            },
        );
    }

    /// Takes a rule's flows back and renders `rule` anew.
    fn rerender(&mut self, rule: &Rule, journal: &mut Journal) {
        let Some(old) = self.rules.remove(&rule.id) else {
            return;
        };
        self.unrender(&old, journal);
        journal.rule(&rule.id, RuleBefore::Whole(old));
        let state = self.render(rule.clone(), journal);
        self.rules.insert(rule.id.clone(), state);
    }

    /// A rule's flows from scratch (a conjunctive rule keeps its id, or gets one).
    fn render(&mut self, rule: Rule, journal: &mut Journal) -> RuleState {
        let mut state = RuleState::new(rule);
        if !complete(&state.rule) {
            return state;
        }
        let direction = state.rule.direction();
        let shape = Shape::of(&state.rule);
        let n = shape.dimensions();
        let t = self.tables(direction).clone();
        if n > 1 {
            state.conj_id = match self.ids.get(&state.rule.id) {
                Some(id) => id,
                None => {
                    journal.id(IdChange::Allocated(state.rule.id.clone()));
                    self.ids.id(&state.rule.id)
                }
            };
            let decision = flow(
                t.graph,
                t.rule,
                NORMAL,
                ip().with(Field::ConjId, u128::from(state.conj_id)),
                vec![],
                Some(t.next),
            );
            let key = FlowKey::of(&decision);
            state.add(key, || decision, DECISION, &mut self.owner, journal, None);
        }
        let entries = entries(&state.rule);
        journal.rules_rendered += 1;
        journal.entries_rendered += entries.len();
        let mut scratch = Vec::new();
        for entry in &entries {
            let clause = shape.clause(entry);
            for m in entry.matches(direction) {
                let key = entry_key(&self.owner, &t, n, &m, &mut scratch);
                let flow = || entry_flow(&t, n, m);
                state.add(key, flow, clause, &mut self.owner, journal, None);
            }
        }
        state
    }

    /// Takes every flow of `state` back from the owner's flows.
    fn unrender(&mut self, state: &RuleState, journal: &mut Journal) {
        for (key, part) in &state.parts {
            self.owner.drop(key, state.role(part.clause), journal);
        }
    }

    fn set_isolated(
        &mut self,
        direction: Direction,
        pod: Ipv4Addr,
        isolated: bool,
        journal: &mut Journal,
    ) {
        let set = &mut self.isolated[direction as usize];
        let switched = if isolated {
            set.insert(pod)
        } else {
            set.remove(&pod)
        };
        if !switched {
            return;
        }
        journal.isolation(direction, pod, isolated);
        let field = match direction {
            Direction::Ingress => Field::Ipv4Dst,
            Direction::Egress => Field::Ipv4Src,
        };
        let drop = flow(
            self.tables(direction).graph,
            self.tables(direction).default,
            NORMAL,
            ipv4(field, ip(), pod),
            vec![],
            None,
        );
        if isolated {
            self.owner
                .add(FlowKey::of(&drop), || drop, Role::Fixed, journal);
        } else {
            self.owner.drop(&FlowKey::of(&drop), Role::Fixed, journal);
        }
    }

    /// The flows whose content `journal`'s change altered: new ones and those with other
    /// actions to upsert, gone ones to remove.
    pub(super) fn patch(&self, journal: &Journal) -> PolicyPatch {
        let mut patch = PolicyPatch::default();
        for (key, before) in &journal.fixed {
            match (before, self.owner.fixed.get(key)) {
                (None, Some((fm, _))) => patch.upsert.push(fm.clone()),
                (Some(_), None) => patch.remove.push(key.clone()),
                _ => {}
            }
        }
        for (key, before) in &journal.clauses {
            match (before, self.owner.clauses.get(key)) {
                (None, Some(clauses)) => patch.upsert.push(with_conjunctions(key, clauses)),
                (Some(was), Some(clauses)) if was != clauses => {
                    patch.upsert.push(with_conjunctions(key, clauses))
                }
                (Some(_), None) => patch.remove.push(key.clone()),
                _ => {}
            }
        }
        patch
    }

    /// Puts back everything `journal`'s change replaced.
    pub(super) fn undo(&mut self, journal: Journal) {
        for (key, before) in journal.fixed {
            match before {
                Some(value) => self.owner.fixed.insert(key, value),
                None => self.owner.fixed.remove(&key),
            };
        }
        for (key, before) in journal.clauses {
            match before {
                Some(value) => self.owner.clauses.insert(key, value),
                None => self.owner.clauses.remove(&key),
            };
        }
        for (id, before) in journal.rules.into_iter().rev() {
            match before {
                RuleBefore::Absent => {
                    self.rules.remove(&id);
                }
                RuleBefore::Whole(state) => {
                    self.rules.insert(id, state);
                }
                RuleBefore::Patched {
                    added,
                    removed,
                    per_clause,
                    parts,
                } => {
                    if let Some(state) = self.rules.get_mut(&id) {
                        put(&mut state.rule, &removed, &added);
                        state.per_clause = per_clause;
                        for (key, part) in parts {
                            match part {
                                Some(part) => state.parts.insert(key, part),
                                None => state.parts.remove(&key),
                            };
                        }
                    }
                }
            }
        }
        for (direction, pod, isolated) in journal.isolation.into_iter().rev() {
            let set = &mut self.isolated[direction as usize];
            if isolated {
                set.remove(&pod);
            } else {
                set.insert(pod);
            }
        }
        for change in journal.ids.into_iter().rev() {
            match change {
                IdChange::Allocated(id) => {
                    self.ids.release(&id);
                }
                IdChange::Released(id, conj_id) => self.ids.restore(id, conj_id),
            }
        }
    }

    /// Every flow of the owner, and what each rule with flows costs.
    pub(super) fn flows(&self) -> PolicyFlows {
        let mut flows: Vec<FlowMod> = self
            .owner
            .fixed
            .values()
            .map(|(fm, _)| fm.clone())
            .collect();
        flows.extend(
            self.owner
                .clauses
                .iter()
                .map(|(key, clauses)| with_conjunctions(key, clauses)),
        );
        let rules = self
            .rules
            .iter()
            .filter_map(|(id, state)| Some((id.clone(), state.flows()?)))
            .collect();
        PolicyFlows { flows, rules }
    }

    /// Rules with flows.
    pub(super) fn rule_count(&self) -> usize {
        self.rules.values().filter(|s| !s.parts.is_empty()).count()
    }
}

/// The flow of one entry's match in a rule of `n` clauses: a clause flow (actions added per
/// rule) or, for a single-dimension rule, a flow straight to the next table one priority up.
fn entry_flow(t: &Tables<'_>, n: u8, m: Match) -> FlowMod {
    flow(
        t.graph,
        t.rule,
        entry_priority(n),
        m,
        vec![],
        (n == 1).then_some(t.next),
    )
}

fn entry_priority(n: u8) -> u16 {
    if n == 1 { HIGH } else { NORMAL }
}

/// The key of [`entry_flow`]'s flow, shared with the owner's equal one ([`OwnerFlows::key`]).
fn entry_key(
    owner: &OwnerFlows,
    t: &Tables<'_>,
    n: u8,
    m: &Match,
    scratch: &mut Vec<u8>,
) -> FlowKey {
    owner.key(t.graph.id(t.rule), entry_priority(n), m, scratch)
}
