//! A Service port's endpoint group: a `select` group with one bucket per usable endpoint, each
//! loading the endpoint's IP into `reg3` and its port into `reg4[0..15]` and continuing at
//! `EndpointDNAT` (under ClientIP affinity at `ServiceLB`, which learns the choice first). The
//! switch picks a bucket per connection by a hash of the packet's 5-tuple: by default in the
//! datapath (`dp_hash`); under ClientIP affinity in the translation (`selection_method=hash`
//! over the addresses and ports), so the datapath's cached flow for a client's first connection
//! matches that connection's source port and a second connection is translated anew, after its
//! learned flow (with `dp_hash` the second one could take the first one's cached flow, which
//! predates the learned flow, and be hashed to another endpoint).

use openflow::action::Action;
use openflow::msg::group_mod::{Bucket, GroupDesc, GroupType, SelectionMethod};
use openflow::oxm::Field;

use crate::layout::TableGraph;
use crate::layout::regs::{ENDPOINT_IP_REG, ENDPOINT_PORT_MASK, ENDPOINT_REG};
use crate::layout::tables::{ENDPOINT_DNAT, SERVICE_LB};
use crate::render::set_ipv4;
use model::{Endpoint, Protocol, SessionAffinity};

/// Every bucket weighs the same (`ovs-ofctl`'s default weight).
const WEIGHT: u16 = 100;

/// Group `id` over `endpoints` (not empty; a port without endpoints has no group) of a
/// `protocol` port.
pub(super) fn endpoint_group(
    g: &TableGraph,
    id: u32,
    protocol: Protocol,
    endpoints: &[&Endpoint],
    affinity: SessionAffinity,
) -> GroupDesc {
    let (then, selection) = match affinity {
        SessionAffinity::None => (ENDPOINT_DNAT, None),
        SessionAffinity::ClientIp { .. } => (SERVICE_LB, Some(hashed_in_translation(protocol))),
    };
    let buckets = (0u32..)
        .zip(endpoints)
        .map(|(bucket_id, ep)| Bucket {
            bucket_id,
            weight: WEIGHT,
            watch_port: None,
            watch_group: None,
            actions: vec![
                set_ipv4(Field::Reg(ENDPOINT_IP_REG), ep.ip),
                Action::set_field_masked(
                    Field::Reg(ENDPOINT_REG),
                    u128::from(ep.port),
                    u128::from(ENDPOINT_PORT_MASK),
                ),
                Action::resubmit_table(g.id(then)),
            ],
        })
        .collect();
    GroupDesc {
        group_type: GroupType::Select,
        group_id: id,
        buckets,
        selection,
    }
}

/// `selection_method=hash` over the addresses and the `protocol` ports: the switch hashes while
/// translating, and the cached datapath flow matches every hashed field.
fn hashed_in_translation(protocol: Protocol) -> SelectionMethod {
    let (src, dst) = match protocol {
        Protocol::Tcp => (Field::TcpSrc, Field::TcpDst),
        Protocol::Udp => (Field::UdpSrc, Field::UdpDst),
        Protocol::Sctp => (Field::SctpSrc, Field::SctpDst),
    };
    SelectionMethod {
        method: "hash".into(),
        param: 0,
        fields: [Field::Ipv4Src, Field::Ipv4Dst, src, dst]
            .into_iter()
            .map(|field| (field, None))
            .collect(),
    }
}
