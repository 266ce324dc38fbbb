//! [`ConjIds`]: a stable conjunction id per NetworkPolicy rule. A rule keeps its id while it
//! exists, so an update that leaves a rule alone leaves its flows alone; ids of removed rules
//! are not reused until the 32-bit space runs out, so counters never mix two rules.

use std::collections::{BTreeSet, HashMap};

use netpol::RuleId;

/// Conjunction ids by rule.
#[derive(Debug, Clone, Default)]
pub struct ConjIds {
    ids: HashMap<RuleId, u32>,
    next: u32,
    free: BTreeSet<u32>,
}

impl ConjIds {
    /// The id of `rule`, allocating one for a new rule.
    pub fn id(&mut self, rule: &RuleId) -> u32 {
        if let Some(id) = self.ids.get(rule) {
            return *id;
        }
        let id = if self.next < u32::MAX {
            self.next += 1;
            self.next
        } else {
            // After four billion rules, reuse the smallest released id.
            self.free.pop_first().unwrap_or(u32::MAX)
        };
        self.free.remove(&id);
        self.ids.insert(rule.clone(), id);
        id
    }

    /// The id of `rule`, if it has one.
    pub fn get(&self, rule: &RuleId) -> Option<u32> {
        self.ids.get(rule).copied()
    }

    /// Releases the id of `rule` (it is not reused until the space runs out); returns it.
    pub fn release(&mut self, rule: &RuleId) -> Option<u32> {
        let id = self.ids.remove(rule)?;
        self.free.insert(id);
        Some(id)
    }

    /// Gives `rule` back the `id` [`ConjIds::release`] took from it.
    pub fn restore(&mut self, rule: RuleId, id: u32) {
        self.free.remove(&id);
        self.ids.insert(rule, id);
    }

    /// Releases the ids of rules `keep` does not accept.
    pub fn retain(&mut self, mut keep: impl FnMut(&RuleId) -> bool) {
        let free = &mut self.free;
        self.ids.retain(|rule, id| {
            let kept = keep(rule);
            if !kept {
                free.insert(*id);
            }
            kept
        });
    }
}

#[cfg(test)]
mod tests {
    use netpol::{Direction, PolicyKey, RulePart};

    use super::*;

    fn rule(i: usize) -> RuleId {
        RuleId {
            policy: PolicyKey::new("ns", "p"),
            direction: Direction::Ingress,
            index: i,
            part: RulePart::Numeric,
        }
    }

    #[test]
    fn stable_and_not_reused() {
        let mut ids = ConjIds::default();
        assert_eq!(ids.id(&rule(0)), 1);
        assert_eq!(ids.id(&rule(1)), 2);
        assert_eq!(ids.id(&rule(0)), 1);
        ids.retain(|r| r.index == 1);
        assert_eq!(ids.id(&rule(2)), 3);
        assert_eq!(ids.id(&rule(0)), 4);
        assert_eq!(ids.id(&rule(1)), 2);
    }

    #[test]
    fn a_released_id_comes_back_only_by_restore() {
        let mut ids = ConjIds::default();
        assert_eq!(ids.id(&rule(0)), 1);
        assert_eq!(ids.release(&rule(0)), Some(1));
        assert_eq!(ids.get(&rule(0)), None);
        assert_eq!(ids.release(&rule(0)), None);
        ids.restore(rule(0), 1);
        assert_eq!(ids.id(&rule(0)), 1);
        assert_eq!(ids.id(&rule(1)), 2);
    }
}
