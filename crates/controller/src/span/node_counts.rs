//! [`NodeCounts`]: a count per Node name, told when a Node's count leaves or reaches zero —
//! how many applied-to members of a policy run on each Node, how many of a Node's policies
//! read a group.

use std::collections::BTreeMap;

/// Counts per Node; Nodes with a count of zero are not kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeCounts(BTreeMap<String, usize>);

impl NodeCounts {
    /// Adds one for `node`; true when it was zero.
    pub fn add(&mut self, node: &str) -> bool {
        match self.0.get_mut(node) {
            Some(n) => {
                *n += 1;
                false
            }
            None => {
                self.0.insert(node.to_owned(), 1);
                true
            }
        }
    }

    /// Takes one from `node`; true when it reaches zero. A Node with no count stays at zero.
    pub fn remove(&mut self, node: &str) -> bool {
        match self.0.get_mut(node) {
            Some(1) => {
                self.0.remove(node);
                true
            }
            Some(n) => {
                *n -= 1;
                false
            }
            None => false,
        }
    }

    pub fn contains(&self, node: &str) -> bool {
        self.0.contains_key(node)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The Nodes with a count above zero.
    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_the_first_and_the_last() {
        let mut c = NodeCounts::default();
        assert!(c.add("a"));
        assert!(!c.add("a"));
        assert!(!c.remove("a"));
        assert!(c.contains("a"));
        assert!(c.remove("a"));
        assert!(!c.contains("a") && c.is_empty());
        assert!(!c.remove("a"));
    }
}
