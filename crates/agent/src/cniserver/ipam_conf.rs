//! The IPAM configuration of a request: the request's own `ipam` section with this Node's Pod
//! CIDR appended as a range (gateway = the Node's gateway IP), as Antrea does.

use cni::spec::{CniError, code};
use ipam::IpamConfig;
use model::NodeNetwork;
use serde_json::{Value, json};

/// Builds the configuration for `raw_conf` (the request's stdin) on Node `node`.
pub fn ipam_config(raw_conf: &[u8], node: &NodeNetwork) -> Result<IpamConfig, CniError> {
    let failure = |msg: String| CniError::new(code::IPAM_FAILURE, msg);
    let mut conf: Value = serde_json::from_slice(raw_conf).map_err(|e| failure(e.to_string()))?;
    let object = conf
        .as_object_mut()
        .ok_or_else(|| failure("network configuration is not an object".into()))?;
    let ipam = object.entry("ipam").or_insert_with(|| json!({}));
    let ipam = ipam
        .as_object_mut()
        .ok_or_else(|| failure("ipam is not an object".into()))?;
    let ranges = ipam.entry("ranges").or_insert_with(|| json!([]));
    let ranges = ranges
        .as_array_mut()
        .ok_or_else(|| failure("ipam.ranges is not a list".into()))?;
    let subnet = format!("{}/{}", node.pod_cidr.network(), node.pod_cidr.prefix_len());
    ranges.push(json!([{ "subnet": subnet, "gateway": node.gateway_ip.to_string() }]));
    IpamConfig::from_netconf(&conf).map_err(|e| failure(e.to_string()))
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use model::MacAddr;
    use model::TrafficMode;

    use super::*;

    fn node() -> NodeNetwork {
        NodeNetwork {
            node_ip: "10.10.0.11/24".parse().unwrap(),
            node_mac: MacAddr([2, 0, 10, 10, 0, 11]),
            pod_cidr: "10.244.1.0/24".parse().unwrap(),
            gateway_ip: Ipv4Addr::new(10, 244, 1, 1),
            gateway_mac: MacAddr([2, 0, 10, 244, 1, 1]),
            mode: TrafficMode::NoEncap,
        }
    }

    #[test]
    fn the_pod_cidr_becomes_a_range() {
        let c = ipam_config(br#"{"cniVersion":"1.0.0","name":"antrea","ipam":{"type":"host-local","dataDir":"/tmp/d"}}"#, &node()).unwrap();
        assert_eq!(c.network, "antrea");
        assert_eq!(c.range_sets.len(), 1);
        assert_eq!(
            c.range_sets[0].ranges()[0].gateway.to_string(),
            "10.244.1.1"
        );
        assert_eq!(c.data_dir, std::path::PathBuf::from("/tmp/d"));
        let err = ipam_config(
            br#"{"name":"antrea","ipam":{"ranges":[[{"subnet":"10.244.1.0/25"}]]}}"#,
            &node(),
        )
        .unwrap_err();
        assert_eq!(
            (err.code, err.msg.as_str()),
            (code::IPAM_FAILURE, "range set 0 overlaps with 1")
        );
        assert_eq!(
            ipam_config(br#"{"ipam":7}"#, &node()).unwrap_err().code,
            code::IPAM_FAILURE
        );
    }
}
