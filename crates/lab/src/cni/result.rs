//! Reading a plugin's stdout: the Pod's IPv4 address from a success result of any CNI version
//! (0.1/0.2 `ip4`, 0.3/0.4 `ips` with `version`, 1.x `ips` without), or the plugin's error.
//! [`parse_result`] is a decode entry point: any bytes give a value or a [`CniError`], never a
//! panic.

use std::net::Ipv4Addr;

use serde_json::Value;

/// A Pod address from a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodAddress {
    /// The address.
    pub ip: Ipv4Addr,
    /// Its prefix length.
    pub prefix_len: u8,
    /// The gateway, if the result names one.
    pub gateway: Option<Ipv4Addr>,
}

/// A result that gives no Pod address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CniError {
    /// The output is not a JSON object.
    #[error("plugin output is not a JSON object: {0}")]
    NotJson(String),
    /// The plugin reported an error (spec error result).
    #[error("plugin error {code}: {msg}{}", if details.is_empty() { String::new() } else { format!(" ({details})") })]
    Plugin {
        /// The error code (spec: 1–99 reserved, 100+ plugin specific).
        code: i64,
        /// The message.
        msg: String,
        /// The details.
        details: String,
    },
    /// A field has the wrong shape.
    #[error("plugin result: {0}")]
    Malformed(String),
    /// The result holds no IPv4 address.
    #[error("plugin result has no IPv4 address")]
    NoIpv4,
}

/// The Pod's IPv4 address from a plugin's stdout. With `interfaces` present, an address on the
/// sandbox interface `ifname` is preferred over others.
pub fn parse_result(stdout: &[u8], ifname: &str) -> Result<PodAddress, CniError> {
    let value: Value =
        serde_json::from_slice(stdout).map_err(|e| CniError::NotJson(e.to_string()))?;
    let Value::Object(obj) = &value else {
        return Err(CniError::NotJson("not an object".into()));
    };
    if let Some(code) = obj.get("code") {
        let code = code
            .as_i64()
            .ok_or_else(|| CniError::Malformed("code: expected an integer".into()))?;
        let text = |k: &str| {
            obj.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        return Err(CniError::Plugin {
            code,
            msg: text("msg"),
            details: text("details"),
        });
    }
    if let Some(ip4) = obj.get("ip4") {
        return legacy_ip4(ip4);
    }
    let ips = match obj.get("ips") {
        None | Some(Value::Null) => return Err(CniError::NoIpv4),
        Some(Value::Array(ips)) => ips,
        Some(_) => return Err(CniError::Malformed("ips: expected a list".into())),
    };
    let sandbox_iface = sandbox_interface(obj.get("interfaces"), ifname)?;
    let mut first = None;
    for (i, entry) in ips.iter().enumerate() {
        let Value::Object(entry) = entry else {
            return Err(CniError::Malformed(format!("ips[{i}]: expected an object")));
        };
        if entry
            .get("version")
            .and_then(Value::as_str)
            .is_some_and(|v| v != "4")
        {
            continue;
        }
        let address = entry
            .get("address")
            .and_then(Value::as_str)
            .ok_or_else(|| CniError::Malformed(format!("ips[{i}].address: missing")))?;
        let Some((ip, prefix_len)) = parse_cidr_v4(address)? else {
            continue;
        };
        let gateway = optional_ip(entry.get("gateway"), &format!("ips[{i}].gateway"))?;
        let found = PodAddress {
            ip,
            prefix_len,
            gateway,
        };
        let on_sandbox = sandbox_iface.is_some()
            && entry.get("interface").and_then(Value::as_u64) == sandbox_iface;
        if on_sandbox {
            return Ok(found);
        }
        first.get_or_insert(found);
    }
    first.ok_or(CniError::NoIpv4)
}

/// 0.1.0/0.2.0: `"ip4": {"ip": "10.1.0.5/16", "gateway": "10.1.0.1"}`.
fn legacy_ip4(ip4: &Value) -> Result<PodAddress, CniError> {
    let ip = ip4
        .get("ip")
        .and_then(Value::as_str)
        .ok_or_else(|| CniError::Malformed("ip4.ip: missing".into()))?;
    let (ip, prefix_len) =
        parse_cidr_v4(ip)?.ok_or_else(|| CniError::Malformed(format!("ip4.ip {ip}: not IPv4")))?;
    let gateway = optional_ip(ip4.get("gateway"), "ip4.gateway")?;
    Ok(PodAddress {
        ip,
        prefix_len,
        gateway,
    })
}

/// The index of the interface named `ifname` with a `sandbox`, if the result lists interfaces.
fn sandbox_interface(interfaces: Option<&Value>, ifname: &str) -> Result<Option<u64>, CniError> {
    let list = match interfaces {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(CniError::Malformed("interfaces: expected a list".into())),
    };
    Ok(list
        .iter()
        .position(|i| {
            i.get("name").and_then(Value::as_str) == Some(ifname)
                && i.get("sandbox")
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
        })
        .map(|p| p as u64))
}

/// `a.b.c.d/len` → `Some`, an IPv6 CIDR → `None`, anything else → error.
fn parse_cidr_v4(text: &str) -> Result<Option<(Ipv4Addr, u8)>, CniError> {
    let bad = || CniError::Malformed(format!("address {text:?}: expected a.b.c.d/len"));
    let (addr, len) = text.split_once('/').ok_or_else(bad)?;
    if addr.contains(':') {
        return Ok(None);
    }
    let ip: Ipv4Addr = addr.parse().map_err(|_| bad())?;
    let len: u8 = len.parse().map_err(|_| bad())?;
    if len > 32 {
        return Err(bad());
    }
    Ok(Some((ip, len)))
}

fn optional_ip(value: Option<&Value>, what: &str) -> Result<Option<Ipv4Addr>, CniError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.contains(':') => Ok(None),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| CniError::Malformed(format!("{what} {s:?}: not an address"))),
        Some(_) => Err(CniError::Malformed(format!("{what}: expected a string"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(ip: [u8; 4], len: u8, gw: Option<[u8; 4]>) -> PodAddress {
        PodAddress {
            ip: Ipv4Addr::from(ip),
            prefix_len: len,
            gateway: gw.map(Ipv4Addr::from),
        }
    }

    #[test]
    fn v0_2_ip4() {
        let out = br#"{"cniVersion":"0.2.0","ip4":{"ip":"10.244.1.5/24","gateway":"10.244.1.1","routes":[{"dst":"0.0.0.0/0"}]},"dns":{}}"#;
        assert_eq!(
            parse_result(out, "eth0"),
            Ok(addr([10, 244, 1, 5], 24, Some([10, 244, 1, 1])))
        );
        let no_gw = br#"{"cniVersion":"0.1.0","ip4":{"ip":"10.0.0.2/8"}}"#;
        assert_eq!(
            parse_result(no_gw, "eth0"),
            Ok(addr([10, 0, 0, 2], 8, None))
        );
    }

    #[test]
    fn v0_4_ips_with_version_skips_ipv6() {
        let out = br#"{"cniVersion":"0.4.0",
            "interfaces":[{"name":"lab-n1-p1-1234"},{"name":"eth0","mac":"aa:bb:cc:dd:ee:ff","sandbox":"/var/run/netns/lab-n1-p1"}],
            "ips":[{"version":"6","address":"fd00::5/64","gateway":"fd00::1","interface":1},
                   {"version":"4","address":"10.244.1.5/24","gateway":"10.244.1.1","interface":1}],
            "routes":[{"dst":"0.0.0.0/0"}]}"#;
        assert_eq!(
            parse_result(out, "eth0"),
            Ok(addr([10, 244, 1, 5], 24, Some([10, 244, 1, 1])))
        );
    }

    #[test]
    fn v0_3_ips_without_interfaces() {
        let out = br#"{"cniVersion":"0.3.1","ips":[{"version":"4","address":"10.244.2.9/24"}]}"#;
        assert_eq!(
            parse_result(out, "eth0"),
            Ok(addr([10, 244, 2, 9], 24, None))
        );
    }

    #[test]
    fn v1_ips_without_version_prefer_the_sandbox_interface() {
        let out = br#"{"cniVersion":"1.0.0",
            "interfaces":[{"name":"host-side"},{"name":"eth0","sandbox":"/var/run/netns/p"}],
            "ips":[{"address":"192.168.9.9/32","interface":0},{"address":"fd00::3/64","interface":1},
                   {"address":"10.244.3.7/24","gateway":"10.244.3.1","interface":1}]}"#;
        assert_eq!(
            parse_result(out, "eth0"),
            Ok(addr([10, 244, 3, 7], 24, Some([10, 244, 3, 1])))
        );
        // Without a sandbox interface of that name, the first IPv4 address wins.
        assert_eq!(
            parse_result(out, "net1"),
            Ok(addr([192, 168, 9, 9], 32, None))
        );
    }

    #[test]
    fn error_results_carry_code_and_message() {
        let out = br#"{"cniVersion":"1.0.0","code":7,"msg":"invalid network config","details":"no ipam"}"#;
        let err = parse_result(out, "eth0").unwrap_err();
        assert_eq!(
            err,
            CniError::Plugin {
                code: 7,
                msg: "invalid network config".into(),
                details: "no ipam".into()
            }
        );
        assert_eq!(
            err.to_string(),
            "plugin error 7: invalid network config (no ipam)"
        );
        let bad_code = br#"{"code":"x"}"#;
        assert!(matches!(
            parse_result(bad_code, "eth0"),
            Err(CniError::Malformed(_))
        ));
    }

    #[test]
    fn results_without_ipv4_or_with_bad_shapes_are_errors() {
        type Expect = fn(&CniError) -> bool;
        let cases: [(&[u8], Expect); 11] = [
            (b"", |e| matches!(e, CniError::NotJson(_))),
            (b"[1]", |e| matches!(e, CniError::NotJson(_))),
            (b"{}", |e| *e == CniError::NoIpv4),
            (br#"{"ips":[]}"#, |e| *e == CniError::NoIpv4),
            (br#"{"ips":[{"address":"fd00::1/64"}]}"#, |e| {
                *e == CniError::NoIpv4
            }),
            (br#"{"ips":{}}"#, |e| matches!(e, CniError::Malformed(_))),
            (br#"{"ips":[7]}"#, |e| matches!(e, CniError::Malformed(_))),
            (br#"{"ips":[{"address":"10.0.0.1"}]}"#, |e| {
                matches!(e, CniError::Malformed(_))
            }),
            (br#"{"ips":[{"address":"10.0.0.1/33"}]}"#, |e| {
                matches!(e, CniError::Malformed(_))
            }),
            (br#"{"ips":[{"address":"10.0.0.1/8","gateway":5}]}"#, |e| {
                matches!(e, CniError::Malformed(_))
            }),
            (br#"{"ip4":{"ip":"fd00::1/64"}}"#, |e| {
                matches!(e, CniError::Malformed(_))
            }),
        ];
        for (input, expected) in cases {
            let err = parse_result(input, "eth0").unwrap_err();
            assert!(
                expected(&err),
                "{} -> {err:?}",
                String::from_utf8_lossy(input)
            );
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let alphabet = b"{}[]\":,0123456789.ipsaddrsv4/ ";
        let mut seed = 0x9e37_79b9_u32;
        for len in 0..300 {
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    alphabet[seed as usize % alphabet.len()]
                })
                .collect();
            let _ = parse_result(&bytes, "eth0");
        }
    }
}
