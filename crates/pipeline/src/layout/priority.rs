//! Flow priorities. Within a table, a more specific job gets a higher priority; `MISS` is the
//! table's default.

/// Exceptions to the exceptions: in `ServiceLB`, the Node's own traffic to a frontend whose
/// traffic from outside has flows of its own (`externalTrafficPolicy: Local`); in `SNATMark`,
/// Service traffic to the host network, whatever source NAT its frontend asked for.
pub const HIGHER: u16 = 220;
/// Exceptions that must win over the table's normal flows (noEncap receive before host
/// pass-through, replies and gateway-IP traffic in `L3Forwarding`, host-routed packets in
/// `L3DecTTL`).
pub const HIGH: u16 = 210;
/// The table's normal per-object flows.
pub const NORMAL: u16 = 200;
/// Broader flows below the per-object ones (Pod classification, ARP forwarding, Pod egress to
/// the gateway).
pub const LOW: u16 = 190;
/// The table-miss flow.
pub const MISS: u16 = 0;
/// Policy tables: traffic that passes whatever the rules say (established and related
/// connections, the Node's own traffic to its Pods).
pub const POLICY_BYPASS: u16 = 64990;
