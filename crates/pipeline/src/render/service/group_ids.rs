//! [`GroupIds`]: the OpenFlow group id of each Service port. A port keeps its id while it
//! exists, so an endpoint change modifies its group in place and touches no flow; ids of
//! removed ports are reused. Picking ids costs the number picked, not the number in use.

use std::collections::BTreeSet;

/// The group ids in use: every id below `next` except the `freed` ones.
#[derive(Debug, Clone)]
pub(super) struct GroupIds {
    next: u32,
    freed: BTreeSet<u32>,
}

impl Default for GroupIds {
    fn default() -> GroupIds {
        GroupIds {
            next: 1,
            freed: BTreeSet::new(),
        }
    }
}

impl GroupIds {
    /// `n` ids not in use, freed ones first; nothing is taken until [`GroupIds::take`].
    pub(super) fn free(&self, n: usize) -> Vec<u32> {
        self.freed
            .iter()
            .copied()
            .chain(self.next..)
            .take(n)
            .collect()
    }

    /// Marks `id` (one [`GroupIds::free`] gave) as in use.
    pub(super) fn take(&mut self, id: u32) {
        if !self.freed.remove(&id) {
            self.next = self.next.max(id + 1);
        }
    }

    pub(super) fn release(&mut self, id: u32) {
        self.freed.insert(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_ids_are_reused_first() {
        let mut ids = GroupIds::default();
        for id in ids.free(3) {
            ids.take(id);
        }
        ids.release(2);
        let again = ids.free(2);
        assert_eq!(again, [2, 4]);
        for id in again {
            ids.take(id);
        }
        assert_eq!(ids.free(1), [5]);
    }
}
