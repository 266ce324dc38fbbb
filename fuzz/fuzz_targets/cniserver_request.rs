//! A CNI gRPC request as the agent's CNI server receives it: protobuf bytes decoded into
//! `CniCmdRequest` (prost, as tonic does), then `cni::rpc::CmdRequest::decode` (the checks that
//! give CNI error codes), the `prevResult` CHECK reads, and the agent's IPAM configuration for the
//! request (`agent::cniserver::ipam_config`). Never panics; a decoded command carries the
//! request's fields unchanged, and a request that decodes re-encodes to bytes that decode to the
//! same request.
#![no_main]

use std::net::Ipv4Addr;

use cni::rpc::{CmdRequest, pb};
use libfuzzer_sys::fuzz_target;
use model::{MacAddr, NodeNetwork, TrafficMode};
use prost::Message;

fuzz_target!(|data: &[u8]| {
    let Ok(request) = pb::CniCmdRequest::decode(data) else {
        return;
    };
    let again = pb::CniCmdRequest::decode(request.encode_to_vec().as_slice())
        .expect("a re-encoded request decodes");
    assert_eq!(again, request, "decode(encode(r)) != r");
    let Ok(command) = CmdRequest::decode(request.clone()) else {
        return;
    };
    let args = request.cni_args.expect("a decoded command had cni_args");
    assert_eq!(command.container_id, args.container_id);
    assert_eq!(command.netns, args.netns);
    assert_eq!(command.ifname, args.ifname);
    assert_eq!(command.path, args.path);
    assert_eq!(command.raw_conf, args.network_configuration);
    let _ = command.prev_result();
    let node = NodeNetwork {
        node_ip: "10.10.0.11/24".parse().expect("node IP"),
        node_mac: MacAddr([2, 0, 10, 10, 0, 11]),
        pod_cidr: "10.244.1.0/24".parse().expect("Pod CIDR"),
        gateway_ip: Ipv4Addr::new(10, 244, 1, 1),
        gateway_mac: MacAddr([2, 0, 10, 244, 1, 1]),
        mode: TrafficMode::NoEncap,
    };
    if let Ok(ipam) = agent::cniserver::ipam_config(&command.raw_conf, &node) {
        // The Node's Pod CIDR is always the last range set.
        let last = ipam.range_sets.last().expect("the Pod CIDR range set");
        assert_eq!(last.ranges()[0].gateway.to_string(), "10.244.1.1");
    }
});
