//! The crate's error types: bad model input, changes the cache refuses (conflicts between
//! owners, dangling references, …), and failures to apply a change to the switch.

use openflow::conn::ConnError;

/// Malformed input to the model.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    #[error("invalid round number {0:?} in the bridge's external_ids (expected 1..65535)")]
    BadRound(String),
}

/// A change the cache refuses; nothing was sent and nothing stored.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CacheError {
    /// Two owners want the same key with different content.
    #[error("{object} of {owner} has the key of, but differs from, the one {holder} wants")]
    Conflict {
        /// The object refused, in `ovs-ofctl` syntax (`flow table=…`, `group 5`, …).
        object: String,
        /// The owner whose update was refused.
        owner: String,
        /// The owner that wants the key with other content.
        holder: String,
    },
    #[error("{owner} lists {object} twice (same key)")]
    Duplicate { object: String, owner: String },
    #[error("the change updates {owner} twice")]
    OwnerTwice { owner: String },
    #[error("{owner} lets go of {object}, which it does not hold")]
    NotHeld { object: String, owner: String },
    #[error("{owner} both sets and lets go of {object} in one patch")]
    SetAndRemoved { object: String, owner: String },
    /// An object uses a group or meter no owner wants.
    #[error("{object} of {owner} uses {target}, which no owner wants")]
    MissingTarget {
        object: String,
        owner: String,
        target: String,
    },
    /// The last holder lets go of a group or meter that flows or groups still use (the switch
    /// would delete them with it).
    #[error("{owner} lets go of {object}, but {users} flow(s) or group(s) still use it")]
    StillUsed {
        object: String,
        owner: String,
        users: u32,
    },
    #[error("{object} of {owner} would forward to itself through its groups")]
    Cycle { object: String, owner: String },
    /// Two owner kinds claim the same name or cookie category.
    #[error(
        "owner kind {kind} (category {category}) clashes with kind {other}, known with category {other_category}"
    )]
    KindClash {
        kind: &'static str,
        category: u8,
        other: &'static str,
        other_category: u8,
    },
}

/// Why applying a change failed. Neither the switch nor the cache changed.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error("the switch did not apply {what}: {source}")]
    Switch {
        /// What was being applied: `the objects of pod:ns/name`, `all objects of round N`, …
        what: String,
        #[source]
        source: ConnError,
    },
}
