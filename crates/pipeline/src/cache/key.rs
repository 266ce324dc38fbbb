//! [`FlowKey`]: what identifies a flow in a switch — table, priority and match. An `add` with
//! an existing key replaces that flow; `modify_strict`/`delete_strict` address exactly one key.
//!
//! A key is packed into one shared allocation (table, priority, then the match's OXM TLVs as the
//! switch receives them), so a clone is a reference count: the cache, each owner's holdings and
//! the policy renderer's rules all hold the same key without copying it, at tens of bytes a key.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use openflow::oxm::Match;

/// Bytes before the match: the table id and the big-endian priority.
const HEADER: usize = 3;

/// Table, priority and match of a flow, in a form that can be sorted, hashed and cloned
/// cheaply. Keys sort by table, then priority, then match bytes.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey(Arc<[u8]>);

impl FlowKey {
    /// The key of `fm`.
    pub fn of(fm: &FlowMod) -> FlowKey {
        FlowKey::new(fm.table_id, fm.priority, &fm.flow_match)
    }

    /// The key of a flow in table `table_id` at `priority` with `flow_match` (e.g. a flow of a
    /// dump).
    pub fn new(table_id: u8, priority: u16, flow_match: &Match) -> FlowKey {
        let mut bytes = Vec::with_capacity(HEADER + 8 * flow_match.entries().len());
        FlowKey::encode(table_id, priority, flow_match, &mut bytes);
        FlowKey::from_encoded(&bytes)
    }

    /// Writes the bytes of the key [`FlowKey::new`] would make into `out` (cleared first), so
    /// that a map of keys can be searched by them ([`FlowKey`] borrows as `[u8]`) before any
    /// key is allocated.
    pub(crate) fn encode(table_id: u8, priority: u16, flow_match: &Match, out: &mut Vec<u8>) {
        out.clear();
        out.push(table_id);
        out.extend_from_slice(&priority.to_be_bytes());
        flow_match.emit_oxms(out);
    }

    /// The key whose bytes [`FlowKey::encode`] wrote.
    pub(crate) fn from_encoded(bytes: &[u8]) -> FlowKey {
        FlowKey(bytes.into())
    }

    pub fn table_id(&self) -> u8 {
        self.0[0]
    }

    pub fn priority(&self) -> u16 {
        u16::from_be_bytes([self.0[1], self.0[2]])
    }

    /// The match. The bytes are this module's own encoding of a valid [`Match`], which the
    /// codec decodes back to the same match (the OpenFlow crate's round-trip tests).
    pub fn flow_match(&self) -> Match {
        Match::parse_oxms(&self.0[HEADER..])
            .expect("a FlowKey holds the OXM encoding of a valid match")
    }

    /// An `add` of a flow with this key and no instructions (cookie 0).
    pub fn add(&self) -> FlowMod {
        self.flow_mod(FlowModCommand::Add)
    }

    /// `delete_strict` of this key, whatever the flow's cookie.
    pub fn delete_strict(&self) -> FlowMod {
        self.flow_mod(FlowModCommand::DeleteStrict)
    }

    fn flow_mod(&self, command: FlowModCommand) -> FlowMod {
        let mut fm = FlowMod::new(command);
        fm.table_id = self.table_id();
        fm.priority = self.priority();
        fm.flow_match = self.flow_match();
        fm
    }
}

/// A key compares, hashes and sorts as its bytes, so maps of keys can be searched by the bytes
/// of [`FlowKey::encode`].
impl Borrow<[u8]> for FlowKey {
    fn borrow(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Display for FlowKey {
    /// `table=1,priority=5,ip,nw_dst=10.0.0.1`, as `ovs-ofctl del-flows --strict` takes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.delete_strict())
    }
}

impl fmt::Debug for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FlowKey({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delete_strict_addresses_the_key() {
        let fm: FlowMod =
            "table=3,cookie=0x5,priority=7,ip,reg0=0x1/0xf,nw_dst=10.0.0.0/24 actions=drop"
                .parse()
                .unwrap();
        let key = FlowKey::of(&fm);
        let del = key.delete_strict();
        assert_eq!(del.command, FlowModCommand::DeleteStrict);
        assert_eq!(FlowKey::of(&del), key);
        assert_eq!((key.table_id(), key.priority()), (3, 7));
        assert_eq!(key.flow_match(), fm.flow_match);
        assert_eq!(
            key.to_string(),
            "table=3,priority=7,ip,reg0=0x1/0xf,nw_dst=10.0.0.0/24"
        );
        let add = key.add();
        assert_eq!(add.command, FlowModCommand::Add);
        assert_eq!(FlowKey::of(&add), key);
    }

    #[test]
    fn a_map_of_keys_is_searched_by_encoded_bytes() {
        let fm: FlowMod = "table=4,priority=9,ip,nw_src=10.0.0.7 actions=drop"
            .parse()
            .unwrap();
        let key = FlowKey::of(&fm);
        let mut scratch = vec![0xff; 40];
        FlowKey::encode(4, 9, &fm.flow_match, &mut scratch);
        assert_eq!(FlowKey::from_encoded(&scratch), key);
        let map = std::collections::BTreeMap::from([(key.clone(), 1)]);
        assert_eq!(map.get(scratch.as_slice()), Some(&1));
        FlowKey::encode(4, 8, &fm.flow_match, &mut scratch);
        assert_eq!(map.get(scratch.as_slice()), None);
    }

    #[test]
    fn keys_differ_by_table_priority_and_match_and_sort_by_table_first() {
        let key = |text: &str| FlowKey::of(&text.parse::<FlowMod>().unwrap());
        let a = key("table=1,priority=9,ip,nw_src=10.0.0.1 actions=drop");
        assert_eq!(
            a,
            key("table=1,priority=9,ip,nw_src=10.0.0.1 actions=output:1")
        );
        assert_ne!(a, key("table=2,priority=9,ip,nw_src=10.0.0.1 actions=drop"));
        assert_ne!(a, key("table=1,priority=8,ip,nw_src=10.0.0.1 actions=drop"));
        assert_ne!(a, key("table=1,priority=9,ip,nw_src=10.0.0.2 actions=drop"));
        assert_ne!(
            a,
            key("table=1,priority=9,ip,nw_src=10.0.0.0/31 actions=drop")
        );
        assert!(a < key("table=2,priority=1 actions=drop"));
        assert!(a < key("table=1,priority=10 actions=drop"));
        assert!(a > key("table=1,priority=8,ip,nw_src=10.0.0.9 actions=drop"));
    }
}
