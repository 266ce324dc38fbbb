//! [`OwnerKind`] and [`Owner`]: who wants an object. A feature declares its kind (a name and a
//! cookie category) as a constant next to its code — the cache knows no kind by name — and makes
//! owners of it: `Owner::new(POD, "ns/name")` prints `pod:ns/name`, `Owner::from(NODE)` prints
//! `node`.

use std::fmt;
use std::sync::Arc;

use crate::cookie::{Category, Round, cookie, owner_id};

/// A kind of owner: its name (the prefix of its owners' names) and the cookie category of the
/// flows it installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OwnerKind {
    name: &'static str,
    category: Category,
}

impl OwnerKind {
    /// The kind `name` (lowercase, no `:`), whose flows carry `category` in their cookies.
    pub const fn new(name: &'static str, category: Category) -> OwnerKind {
        OwnerKind { name, category }
    }

    pub fn name(self) -> &'static str {
        self.name
    }

    pub fn category(self) -> Category {
        self.category
    }
}

/// An owner of desired objects: a kind, and the name of one owner of that kind (a Pod's
/// `ns/name`, a peer's Node name), or no name for a kind that has a single owner (the Node, the
/// NetworkPolicy rules). Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Owner {
    kind: OwnerKind,
    id: Option<Arc<str>>,
}

impl Owner {
    /// The owner `id` of `kind`, printed `kind:id`.
    pub fn new(kind: OwnerKind, id: impl fmt::Display) -> Owner {
        Owner {
            kind,
            id: Some(id.to_string().into()),
        }
    }

    pub fn kind(&self) -> OwnerKind {
        self.kind
    }

    /// The owner's name within its kind (`None` for the single owner of a kind).
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    /// The cookie of the flows this owner installs in `round`.
    pub fn cookie(&self, round: Round) -> u64 {
        cookie(round, self.kind.category, owner_id(&self.to_string()))
    }
}

impl From<OwnerKind> for Owner {
    /// The single owner of `kind`, printed as the kind's name.
    fn from(kind: OwnerKind) -> Owner {
        Owner { kind, id: None }
    }
}

impl fmt::Display for Owner {
    /// `node`, `pod:NAMESPACE/NAME`, `peer:NODE`, `networkpolicy`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.id {
            None => f.write_str(self.kind.name),
            Some(id) => write!(f, "{}:{id}", self.kind.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST: OwnerKind = OwnerKind::new("test", Category::new(9));

    #[test]
    fn names_and_cookies() {
        let single = Owner::from(TEST);
        let named = Owner::new(TEST, "a/b");
        assert_eq!(single.to_string(), "test");
        assert_eq!(named.to_string(), "test:a/b");
        assert_eq!(named.id(), Some("a/b"));
        assert_eq!(single.id(), None);
        assert_eq!(named.kind(), TEST);
        let round = Round::new(3).unwrap();
        assert_eq!(
            named.cookie(round),
            cookie(round, Category::new(9), owner_id("test:a/b"))
        );
        assert_ne!(named.cookie(round), single.cookie(round));
        assert!(single < named);
    }
}
