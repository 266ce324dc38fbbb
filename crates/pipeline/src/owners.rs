//! The owner kinds of the pipeline's features: the Node, its Pods, the peer Nodes, the
//! NetworkPolicy rules and the Services. A new feature declares its own kind next to its code
//! (say `pub const EGRESS: OwnerKind = OwnerKind::new("egress", Category::new(6));`) with a
//! category no other kind uses; nothing here or in the cache needs editing.

use crate::cache::OwnerKind;
use crate::cookie::Category;

/// The Node's own flows (one owner: `node`).
pub const NODE: OwnerKind = OwnerKind::new("node", Category::new(1));
/// A local Pod's flows (`pod:NAMESPACE/NAME`).
pub const POD: OwnerKind = OwnerKind::new("pod", Category::new(2));
/// A peer Node's flows (`peer:NODE`).
pub const PEER: OwnerKind = OwnerKind::new("peer", Category::new(3));
/// The NetworkPolicy rules and default drops of the Node's Pods (one owner, `networkpolicy`:
/// rules share flows, and one update of all of them is one atomic bundle).
pub const NETWORK_POLICY: OwnerKind = OwnerKind::new("networkpolicy", Category::new(4));
/// A Service's flows and endpoint groups (`service:NAMESPACE/NAME`); endpoint DNAT flows that
/// two Services share are held by both.
pub const SERVICE: OwnerKind = OwnerKind::new("service", Category::new(5));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Owner;
    use model::PodKey;

    #[test]
    fn owners_print_as_before() {
        assert_eq!(Owner::from(NODE).to_string(), "node");
        assert_eq!(
            Owner::new(POD, PodKey::new("ns", "name")).to_string(),
            "pod:ns/name"
        );
        assert_eq!(Owner::new(PEER, "n2").to_string(), "peer:n2");
        assert_eq!(Owner::from(NETWORK_POLICY).to_string(), "networkpolicy");
        assert_eq!(
            Owner::new(SERVICE, model::ServiceKey::new("ns", "web")).to_string(),
            "service:ns/web"
        );
    }

    #[test]
    fn kinds_are_distinct() {
        let kinds = [NODE, POD, PEER, NETWORK_POLICY, SERVICE];
        for (i, a) in kinds.iter().enumerate() {
            for b in &kinds[i + 1..] {
                assert_ne!(a.name(), b.name());
                assert_ne!(a.category(), b.category());
            }
        }
    }
}
