//! The Pods' interfaces as text: one line per Pod — namespace/name, container, host interface
//! (the OVS port), OpenFlow port, addresses, MAC.

use super::columns::columns;
use crate::apiserver::PodInterfaceReport;

/// `interfaces` as `antctl get podinterface` prints them.
pub fn pod_interface_table(interfaces: &[PodInterfaceReport]) -> String {
    if interfaces.is_empty() {
        return "no Pod interface on this Node\n".to_owned();
    }
    let dash = || "-".to_owned();
    let rows: Vec<[String; 6]> = interfaces
        .iter()
        .map(|i| {
            let ips: Vec<String> = i.ips.iter().map(ToString::to_string).collect();
            [
                i.pod(),
                i.container_id.chars().take(12).collect(),
                i.interface.clone(),
                i.ofport.map_or_else(dash, |p| p.to_string()),
                if ips.is_empty() {
                    dash()
                } else {
                    ips.join(",")
                },
                i.mac.map_or_else(dash, |mac| mac.to_string()),
            ]
        })
        .collect();
    columns(
        ["POD", "CONTAINER", "INTERFACE", "OFPORT", "IPS", "MAC"],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_aligned_line_per_pod() {
        let pod = PodInterfaceReport {
            namespace: "default".into(),
            name: "server".into(),
            container_id: "0123456789abcdef".into(),
            interface: "server-0123".into(),
            pod_interface: "eth0".into(),
            ofport: Some(4),
            ips: vec!["10.244.1.3".parse().unwrap()],
            mac: Some(model::MacAddr([2, 0, 0x0a, 0xf4, 1, 3])),
        };
        assert_eq!(
            pod_interface_table(&[pod]),
            "POD             CONTAINER     INTERFACE    OFPORT  IPS         MAC\n\
             default/server  0123456789ab  server-0123  4       10.244.1.3  02:00:0a:f4:01:03\n"
        );
        assert_eq!(pod_interface_table(&[]), "no Pod interface on this Node\n");
    }
}
