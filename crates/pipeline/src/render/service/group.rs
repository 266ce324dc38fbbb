//! A Service port's endpoint group: a `select` group with one bucket per usable endpoint, each
//! loading the endpoint's IP into `reg3` and its port into `reg4[0..15]` and continuing at
//! `EndpointDNAT` (under ClientIP affinity at `ServiceLB`, which learns the choice first). The
//! switch picks a bucket per connection by a hash of the packet's 5-tuple.

use openflow::action::Action;
use openflow::msg::group_mod::{Bucket, GroupDesc, GroupType};
use openflow::oxm::Field;

use crate::layout::TableGraph;
use crate::layout::regs::{ENDPOINT_IP_REG, ENDPOINT_PORT_MASK, ENDPOINT_REG};
use crate::layout::tables::{ENDPOINT_DNAT, SERVICE_LB};
use crate::render::set_ipv4;
use model::{Endpoint, SessionAffinity};

/// Every bucket weighs the same (`ovs-ofctl`'s default weight).
const WEIGHT: u16 = 100;

/// Group `id` over `endpoints` (not empty; a port without endpoints has no group).
pub(super) fn endpoint_group(
    g: &TableGraph,
    id: u32,
    endpoints: &[&Endpoint],
    affinity: SessionAffinity,
) -> GroupDesc {
    let then = match affinity {
        SessionAffinity::None => ENDPOINT_DNAT,
        SessionAffinity::ClientIp { .. } => SERVICE_LB,
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
        selection: None,
    }
}
