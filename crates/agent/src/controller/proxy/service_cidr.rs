//! [`ServiceCidr`]: which destinations the Node routes into the datapath for its own Service
//! traffic (proxyAll). `serviceCIDR` from the config when it is set; otherwise discovered, as
//! Antrea's discoverer does, from the cluster IPs of the Services (the `kubernetes` Service
//! always among them): the smallest IPv4 prefix holding every cluster IP seen. It only widens
//! during the agent's life, so a Service that goes away never takes the route of the others.

use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use k8s_openapi::api::core::v1::Service as ApiService;

/// Where the routed destinations come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// `antreaProxy.proxyAll` is off: the host routes no Service traffic.
    Off,
    /// `serviceCIDR`.
    Configured(Ipv4Net),
    /// From the Services' cluster IPs; `None` until one is seen.
    Discovered(Option<Ipv4Net>),
}

/// The Service CIDR of one agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceCidr {
    source: Source,
}

impl ServiceCidr {
    /// With `proxy_all` off nothing is routed; otherwise `configured`, or discovery without it.
    pub fn new(proxy_all: bool, configured: Option<Ipv4Net>) -> ServiceCidr {
        let source = match (proxy_all, configured) {
            (false, _) => Source::Off,
            (true, Some(cidr)) => Source::Configured(cidr.trunc()),
            (true, None) => Source::Discovered(None),
        };
        ServiceCidr { source }
    }

    /// The destinations to route, after seeing `services`.
    pub fn destinations<'a>(
        &mut self,
        services: impl IntoIterator<Item = &'a ApiService>,
    ) -> Vec<Ipv4Net> {
        match &mut self.source {
            Source::Off => Vec::new(),
            Source::Configured(cidr) => vec![*cidr],
            Source::Discovered(cidr) => {
                for ip in services.into_iter().flat_map(cluster_ips) {
                    *cidr = Some(match cidr {
                        Some(current) => covering(*current, ip),
                        None => Ipv4Net::from(ip),
                    });
                }
                cidr.iter().copied().collect()
            }
        }
    }

    /// How the destinations were chosen, for the log.
    pub fn describe(&self) -> &'static str {
        match self.source {
            Source::Off => "antreaProxy.proxyAll is off",
            Source::Configured(_) => "serviceCIDR",
            Source::Discovered(_) => "discovered from the Services' cluster IPs",
        }
    }
}

/// The IPv4 cluster IPs of `service` (`clusterIPs`, else `clusterIP`; `None` and bad text
/// skipped: the translation reports those).
fn cluster_ips(service: &ApiService) -> Vec<Ipv4Addr> {
    let Some(spec) = &service.spec else {
        return Vec::new();
    };
    let texts: Vec<&String> = match (&spec.cluster_ips, &spec.cluster_ip) {
        (Some(ips), _) if !ips.is_empty() => ips.iter().collect(),
        (_, Some(ip)) => vec![ip],
        _ => Vec::new(),
    };
    texts.into_iter().filter_map(|t| t.parse().ok()).collect()
}

/// The smallest prefix holding `cidr` and `ip`.
fn covering(cidr: Ipv4Net, ip: Ipv4Addr) -> Ipv4Net {
    let differing = u32::from(cidr.network()) ^ u32::from(ip);
    let common = u8::try_from(differing.leading_zeros()).unwrap_or(32);
    let prefix = common.min(cidr.prefix_len());
    Ipv4Net::new(ip, prefix)
        .expect("a prefix length of at most 32")
        .trunc()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn service(ips: &[&str]) -> ApiService {
        serde_json::from_value(json!({
            "metadata": {"namespace": "default", "name": "s"},
            "spec": {"clusterIP": ips.first(), "clusterIPs": ips},
        }))
        .unwrap()
    }

    fn net(s: &str) -> Ipv4Net {
        s.parse().unwrap()
    }

    #[test]
    fn discovery_widens_to_the_smallest_prefix_holding_every_cluster_ip() {
        let mut cidr = ServiceCidr::new(true, None);
        assert!(cidr.destinations([]).is_empty(), "nothing seen yet");
        let kubernetes = service(&["10.96.0.1"]);
        assert_eq!(cidr.destinations([&kubernetes]), [net("10.96.0.1/32")]);
        let web = service(&["10.96.0.10"]);
        assert_eq!(
            cidr.destinations([&kubernetes, &web]),
            [net("10.96.0.0/28")]
        );
        let far = service(&["10.111.255.254", "fd00::10"]);
        assert_eq!(
            cidr.destinations([&kubernetes, &web, &far]),
            [net("10.96.0.0/12")]
        );
        assert_eq!(
            cidr.destinations([&kubernetes]),
            [net("10.96.0.0/12")],
            "a Service going away does not narrow it"
        );
        let headless = service(&["None"]);
        assert_eq!(cidr.destinations([&headless]), [net("10.96.0.0/12")]);
    }

    #[test]
    fn configured_or_off_ignores_the_services() {
        let web = service(&["10.200.0.10"]);
        let mut configured = ServiceCidr::new(true, Some(net("10.96.3.4/12")));
        assert_eq!(configured.destinations([&web]), [net("10.96.0.0/12")]);
        let mut off = ServiceCidr::new(false, Some(net("10.96.0.0/12")));
        assert!(off.destinations([&web]).is_empty());
    }

    #[test]
    fn covering_is_exact() {
        assert_eq!(
            covering(net("10.96.0.0/28"), "10.96.0.15".parse().unwrap()),
            net("10.96.0.0/28")
        );
        assert_eq!(
            covering(net("10.96.0.0/28"), "10.96.0.16".parse().unwrap()),
            net("10.96.0.0/27")
        );
        assert_eq!(
            covering(net("10.0.0.1/32"), "138.0.0.1".parse().unwrap()),
            net("0.0.0.0/0")
        );
        assert_eq!(
            covering(net("10.0.0.1/32"), "10.0.0.1".parse().unwrap()),
            net("10.0.0.1/32")
        );
    }
}
