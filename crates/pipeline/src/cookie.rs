//! Flow cookies and rounds.
//!
//! `cookie = round << 48 | category << 40 | owner id`: the top 16 bits are the round (one per
//! agent start), 8 bits say which kind of owner installed the flow, 8 bits are reserved (zero),
//! and the low 32 bits identify the owner (a stable hash of its name, for reading dumps; the
//! cache, not the cookie, is what decides ownership). A flow several owners share carries the
//! cookie of the owner that installed it (see `crate::cache`).
//!
//! A new round replaces the previous one without a gap: install every desired flow with the new
//! round in one bundle (an `add` whose table, priority and match equal an existing flow's
//! replaces that flow, cookie included), then delete what still carries the old round — only
//! flows that are no longer desired. Groups and meters have no cookie: the same bundle replaces
//! groups in place by id (add-or-modify, before the flows), meters are set before it, and the
//! ones no longer desired are deleted with the old round's flows (`crate::cache::installer`).

use std::fmt;

use openflow::msg::flow_mod::{FlowMod, FlowModCommand, TABLE_ALL};

use crate::error::ModelError;

/// Bits of the cookie holding the round.
pub const ROUND_MASK: u64 = 0xffff << ROUND_SHIFT;
const ROUND_SHIFT: u32 = 48;
const CATEGORY_SHIFT: u32 = 40;
/// Bits of the cookie holding the category.
pub const CATEGORY_MASK: u64 = 0xff << CATEGORY_SHIFT;

/// The bridge `external_ids` key under which the agent keeps the round of the installed flows
/// (Antrea's key, so tools that read it keep working).
pub const ROUND_EXTERNAL_ID: &str = "roundNum";

/// An agent round: flows installed by one agent run. Never 0, so flows added by hand with
/// cookie 0 are never mistaken for a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Round(u16);

impl Round {
    /// The round used when the bridge has none recorded.
    pub const FIRST: Round = Round(1);

    /// `n` as a round; `None` for 0.
    pub fn new(n: u16) -> Option<Round> {
        (n != 0).then_some(Round(n))
    }

    pub fn get(self) -> u16 {
        self.0
    }

    /// The round after this one (65535 wraps to 1).
    pub fn next(self) -> Round {
        Round(if self.0 == u16::MAX { 1 } else { self.0 + 1 })
    }

    /// The round for this agent run, given the bridge's recorded value (`None` when absent):
    /// [`Round::FIRST`] without a record, otherwise the one after it.
    pub fn for_new_run(recorded: Option<&str>) -> Result<Round, ModelError> {
        match recorded {
            None => Ok(Round::FIRST),
            Some(text) => Ok(Round::parse_external_id(text)?.next()),
        }
    }

    /// Parses the value stored under [`ROUND_EXTERNAL_ID`].
    pub fn parse_external_id(text: &str) -> Result<Round, ModelError> {
        text.trim()
            .parse::<u16>()
            .ok()
            .and_then(Round::new)
            .ok_or_else(|| ModelError::BadRound(text.to_owned()))
    }

    /// The value to store under [`ROUND_EXTERNAL_ID`].
    pub fn to_external_id(self) -> String {
        self.0.to_string()
    }

    /// The cookie bits of this round.
    pub fn cookie_bits(self) -> u64 {
        u64::from(self.0) << ROUND_SHIFT
    }

    /// Deletes every flow of this round, in any table (`cookie=ROUND/ROUND_MASK`).
    pub fn delete_all(self) -> FlowMod {
        let mut fm = FlowMod::new(FlowModCommand::Delete);
        fm.table_id = TABLE_ALL;
        fm.cookie = self.cookie_bits();
        fm.cookie_mask = ROUND_MASK;
        fm
    }

    /// The round a cookie belongs to, if any.
    pub fn of_cookie(cookie: u64) -> Option<Round> {
        Round::new((cookie >> ROUND_SHIFT) as u16)
    }
}

impl fmt::Display for Round {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "round {}", self.0)
    }
}

/// What kind of owner installed a flow: 8 bits of the cookie. Each owner kind picks its own
/// ([`crate::cache::OwnerKind`]); the pipeline's are in [`crate::owners`] (1 node, 2 pod,
/// 3 peer, 4 networkpolicy). The cache refuses two kinds that claim the same category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Category(u8);

impl Category {
    /// Category `n`.
    pub const fn new(n: u8) -> Category {
        Category(n)
    }

    pub fn get(self) -> u8 {
        self.0
    }

    /// The category bits of the cookie.
    pub fn cookie_bits(self) -> u64 {
        u64::from(self.0) << CATEGORY_SHIFT
    }
}

/// The cookie of a flow of `category`, owned by the owner with id `owner_id`, in `round`.
pub fn cookie(round: Round, category: Category, owner_id: u32) -> u64 {
    round.cookie_bits() | category.cookie_bits() | u64::from(owner_id)
}

/// A stable 32-bit id for an owner name (FNV-1a), written into the low cookie bits.
pub fn owner_id(name: &str) -> u32 {
    name.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn external_id_parser_never_panics(s in "\\PC{0,24}|[0-9 +-]{0,8}") {
            let _ = Round::parse_external_id(&s);
        }
    }

    #[test]
    fn cookie_layout() {
        let r = Round::new(3).unwrap();
        let c = cookie(r, Category::new(2), 0xdead_beef);
        assert_eq!(c, 0x0003_0200_dead_beef);
        assert_eq!(Round::of_cookie(c), Some(r));
        assert_eq!(c & CATEGORY_MASK, Category::new(2).cookie_bits());
        assert_eq!(c & ROUND_MASK, r.cookie_bits());
        assert_eq!(Round::of_cookie(0x1234), None);
    }

    #[test]
    fn rounds_advance_and_wrap() {
        assert_eq!(Round::new(0), None);
        assert_eq!(Round::for_new_run(None), Ok(Round::FIRST));
        assert_eq!(Round::for_new_run(Some("7")).unwrap().get(), 8);
        assert_eq!(Round::for_new_run(Some("65535")), Ok(Round::FIRST));
        for bad in ["", "0", "65536", "-1", "x"] {
            assert_eq!(
                Round::parse_external_id(bad),
                Err(ModelError::BadRound(bad.into()))
            );
        }
        assert_eq!(Round::new(42).unwrap().to_external_id(), "42");
    }

    #[test]
    fn delete_round_text() {
        let del = Round::new(2).unwrap().delete_all();
        assert_eq!(del.to_string(), "cookie=0x2000000000000/0xffff000000000000");
    }

    #[test]
    fn owner_ids_are_stable() {
        // FNV-1a reference values.
        assert_eq!(owner_id(""), 0x811c_9dc5);
        assert_eq!(owner_id("a"), 0xe40c_292c);
        assert_ne!(owner_id("pod:default/p1"), owner_id("pod:default/p2"));
    }
}
