//! A Pod's DNS settings on both sides of the CNI contract: the `dns` the runtime puts in the
//! network configuration (kubelet's cluster DNS: the DNS Service's cluster IP and the search
//! list of the Pod's namespace), the `dns` of the plugin's result (read with [`parse_dns`],
//! which never panics), and the resolv.conf a runtime writes from it.

use std::fmt::Write as _;
use std::net::Ipv4Addr;

use serde::Serialize;
use serde_json::Value;

use super::result::CniError;
use crate::services::{DNS_IP, dns_search};

/// The CNI `dns` object (spec: `nameservers`, `domain`, `search`, `options`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Dns {
    /// Name servers, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nameservers: Vec<String>,
    /// The local domain.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub domain: String,
    /// The search list.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub search: Vec<String>,
    /// resolv.conf options.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

impl Dns {
    /// What kubelet gives a Pod of `namespace` with `dnsPolicy: ClusterFirst`: the cluster DNS
    /// Service and the namespace's search list (`ndots:5`).
    pub fn cluster_first(namespace: &str) -> Dns {
        Dns {
            nameservers: vec![DNS_IP.to_string()],
            domain: String::new(),
            search: dns_search(namespace),
            options: vec!["ndots:5".to_owned()],
        }
    }

    /// The resolv.conf text: `nameserver`, `domain`, `search`, `options` lines. `None` when it
    /// names no IPv4 name server (a Pod without one could not resolve through the cluster).
    pub fn resolv_conf(&self) -> Option<String> {
        let servers: Vec<Ipv4Addr> = self
            .nameservers
            .iter()
            .filter_map(|s| s.parse().ok())
            .collect();
        if servers.is_empty() {
            return None;
        }
        let mut text = String::from("# Written by antrea-lab: the Pod's DNS settings.\n");
        for server in servers {
            let _ = writeln!(text, "nameserver {server}");
        }
        if !self.domain.is_empty() {
            let _ = writeln!(text, "domain {}", self.domain);
        }
        if !self.search.is_empty() {
            let _ = writeln!(text, "search {}", self.search.join(" "));
        }
        if !self.options.is_empty() {
            let _ = writeln!(text, "options {}", self.options.join(" "));
        }
        Some(text)
    }
}

/// The `dns` of a plugin's success result (empty when it has none).
pub fn parse_dns(stdout: &[u8]) -> Result<Dns, CniError> {
    let value: Value =
        serde_json::from_slice(stdout).map_err(|e| CniError::NotJson(e.to_string()))?;
    let Value::Object(obj) = &value else {
        return Err(CniError::NotJson("not an object".into()));
    };
    let dns = match obj.get("dns") {
        None | Some(Value::Null) => return Ok(Dns::default()),
        Some(Value::Object(dns)) => dns,
        Some(_) => return Err(CniError::Malformed("dns: expected an object".into())),
    };
    let strings = |key: &str| -> Result<Vec<String>, CniError> {
        match dns.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| CniError::Malformed(format!("dns.{key}: expected strings")))
                })
                .collect(),
            Some(_) => Err(CniError::Malformed(format!("dns.{key}: expected a list"))),
        }
    };
    let domain = match dns.get("domain") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(domain)) => domain.clone(),
        Some(_) => return Err(CniError::Malformed("dns.domain: expected a string".into())),
    };
    Ok(Dns {
        nameservers: strings("nameservers")?,
        domain,
        search: strings("search")?,
        options: strings("options")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_dns_becomes_resolv_conf() {
        let out = br#"{"cniVersion":"1.0.0","ips":[{"address":"10.244.1.2/24"}],
            "dns":{"nameservers":["10.96.0.10"],"search":["default.svc.cluster.local","svc.cluster.local","cluster.local"],"options":["ndots:5"]}}"#;
        let dns = parse_dns(out).unwrap();
        assert_eq!(dns, Dns::cluster_first("default"));
        assert_eq!(
            dns.resolv_conf().unwrap(),
            "# Written by antrea-lab: the Pod's DNS settings.\nnameserver 10.96.0.10\n\
             search default.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n"
        );
    }

    #[test]
    fn a_result_without_dns_gives_no_resolv_conf() {
        let dns = parse_dns(br#"{"cniVersion":"1.0.0","ips":[]}"#).unwrap();
        assert_eq!(dns, Dns::default());
        assert_eq!(dns.resolv_conf(), None);
        let v6_only = Dns {
            nameservers: vec!["fd00::10".into()],
            ..Dns::default()
        };
        assert_eq!(v6_only.resolv_conf(), None);
    }

    #[test]
    fn bad_dns_shapes_are_errors_not_panics() {
        for bad in [
            &br#"{"dns":[]}"#[..],
            br#"{"dns":{"nameservers":"10.96.0.10"}}"#,
            br#"{"dns":{"search":[1]}}"#,
            br#"{"dns":{"domain":5}}"#,
            b"[",
            b"7",
        ] {
            assert!(parse_dns(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
