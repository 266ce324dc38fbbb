//! The CNI text form of an address with a prefix length (`10.1.0.5/24`, `fd00::5/64`; host bits
//! kept) as [`ipnet::IpNet`]: the one parser every CNI field holding one (result addresses,
//! route destinations, IPAM subnets) goes through, and its serde adapters.
//!
//! The rule is the spec's (Go's `net.ParseCIDR`) as this crate has always applied it: an address
//! in `std`'s strict form (no leading zeros in IPv4 octets, no zone), `/`, then one to three ASCII
//! digits no larger than the family's width. `ipnet`'s own `FromStr` differs on both sides of
//! that line (it takes `010.1.0.5/24` and refuses `10.0.0.0/008`) and its error does not name the
//! input, so CNI input is parsed here, never with `str::parse::<IpNet>`. Printing needs no
//! adapter: `IpNet`'s `Display` is already `addr/len`.

use std::net::IpAddr;

use ipnet::IpNet;
use serde::{Deserialize, Deserializer};

/// Why a CIDR string was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid CIDR address {input:?}: {reason}")]
pub struct CidrParseError {
    /// The text parsed.
    pub input: String,
    /// What is wrong.
    pub reason: &'static str,
}

/// Parses `addr/len` as the CNI spec writes it.
pub fn parse_cidr(s: &str) -> Result<IpNet, CidrParseError> {
    let err = |reason| CidrParseError {
        input: s.to_owned(),
        reason,
    };
    let (addr, len) = s
        .split_once('/')
        .ok_or_else(|| err("missing /prefix length"))?;
    let addr: IpAddr = addr.parse().map_err(|_| err("bad address"))?;
    if len.is_empty() || len.len() > 3 || !len.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err("bad prefix length"));
    }
    let len: u8 = len.parse().map_err(|_| err("bad prefix length"))?;
    IpNet::new(addr, len).map_err(|_| err("prefix length too long for the address family"))
}

/// `#[serde(deserialize_with = "cni::spec::cidr::deserialize")]` for an [`IpNet`] field.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<IpNet, D::Error> {
    let s = String::deserialize(d)?;
    parse_cidr(&s).map_err(serde::de::Error::custom)
}

/// `#[serde(default, deserialize_with = "cni::spec::cidr::deserialize_option")]` for an
/// `Option<IpNet>` field: absent or `null` is `None`.
pub fn deserialize_option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<IpNet>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|s| parse_cidr(&s).map_err(serde::de::Error::custom))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(s: &str) -> IpNet {
        parse_cidr(s).unwrap()
    }

    #[test]
    fn keeps_host_bits_and_prints_as_given() {
        for text in [
            "10.1.0.5/24",
            "fd00::5/64",
            "0.0.0.0/0",
            "10.0.0.1/32",
            "::/0",
        ] {
            assert_eq!(net(text).to_string(), text);
        }
        let pod = net("10.1.0.5/24");
        assert_eq!(pod.addr().to_string(), "10.1.0.5");
        assert_eq!(pod.prefix_len(), 24);
        assert_eq!(pod.network().to_string(), "10.1.0.0");
        assert_eq!(pod.broadcast().to_string(), "10.1.0.255");
        assert_eq!(net("fd00::5/64").to_string(), "fd00::5/64");
        assert_eq!(net("10.0.0.0/008").to_string(), "10.0.0.0/8");
    }

    #[test]
    fn rejects_malformed_naming_the_input() {
        for (bad, reason) in [
            ("10.1.0.5", "missing /prefix length"),
            (
                "10.1.0.5/33",
                "prefix length too long for the address family",
            ),
            ("::/129", "prefix length too long for the address family"),
            ("x/8", "bad address"),
            ("010.1.0.5/24", "bad address"),
            ("fe80::1%eth0/64", "bad address"),
            (" 10.0.0.0/8", "bad address"),
            ("10.0.0.0/ 8", "bad prefix length"),
            ("10.0.0.0/8 ", "bad prefix length"),
            ("10.0.0.0/", "bad prefix length"),
            ("10.0.0.0/+8", "bad prefix length"),
            ("10.0.0.0/0008", "bad prefix length"),
            ("10.0.0.0/8/8", "bad prefix length"),
        ] {
            let e = parse_cidr(bad).unwrap_err();
            assert_eq!(e.reason, reason, "{bad}");
            assert_eq!(
                e.to_string(),
                format!("invalid CIDR address {bad:?}: {reason}")
            );
        }
    }

    #[test]
    fn serde_adapters_parse_with_the_cni_rule() {
        #[derive(Deserialize)]
        struct Conf {
            #[serde(deserialize_with = "deserialize")]
            dst: IpNet,
            #[serde(default, deserialize_with = "deserialize_option")]
            subnet: Option<IpNet>,
        }
        let c: Conf =
            serde_json::from_str(r#"{"dst":"fd00::5/64","subnet":"10.1.0.0/24"}"#).unwrap();
        assert_eq!(
            (c.dst, c.subnet),
            (net("fd00::5/64"), Some(net("10.1.0.0/24")))
        );
        let c: Conf = serde_json::from_str(r#"{"dst":"0.0.0.0/0","subnet":null}"#).unwrap();
        assert_eq!(c.subnet, None);
        let c: Conf = serde_json::from_str(r#"{"dst":"0.0.0.0/0"}"#).unwrap();
        assert_eq!(c.subnet, None);
        let e = serde_json::from_str::<Conf>(r#"{"dst":"010.0.0.0/8"}"#)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.starts_with(r#"invalid CIDR address "010.0.0.0/8": bad address"#),
            "{e}"
        );
        let e = serde_json::from_str::<Conf>(r#"{"dst":"0.0.0.0/0","subnet":"10.0.0.0/33"}"#)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(r#""10.0.0.0/33""#), "{e}");
    }
}
