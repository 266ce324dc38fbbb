//! The ADD result as Antrea builds it: host interface first, then the Pod's interface, the
//! addresses on the Pod's interface with the gateway, a default route via the gateway, and DNS
//! from the configuration and the runtime.

use std::net::IpAddr;

use cni::spec::{CniResult, Interface, NetConf, Route};
use hostnet::PodInterface;
use ipnet::{IpNet, Ipv4Net};

/// Completes the IPAM result `ipam` for the Pod interface `created` in `netns`/`ifname`.
pub fn add_result(
    mut ipam: CniResult,
    created: &PodInterface,
    netns: &str,
    ifname: &str,
    conf: &NetConf,
) -> CniResult {
    ipam.interfaces = vec![
        Interface {
            name: created.host_ifname.clone(),
            mac: created.host_mac.to_string(),
            ..Interface::default()
        },
        Interface {
            name: ifname.to_owned(),
            mac: created.container_mac.to_string(),
            sandbox: netns.to_owned(),
            ..Interface::default()
        },
    ];
    for ip in &mut ipam.ips {
        ip.interface = Some(1);
    }
    let gateway = ipam
        .ips
        .iter()
        .find_map(|ip| ip.gateway.filter(IpAddr::is_ipv4));
    // 0.0.0.0/0, the IPv4 default route.
    let default = IpNet::V4(Ipv4Net::default());
    if let Some(gw) = gateway
        && !ipam.routes.iter().any(|r| r.dst == default)
    {
        ipam.routes.push(Route::new(default, Some(gw)));
    }
    ipam.dns = conf.effective_dns();
    ipam
}
