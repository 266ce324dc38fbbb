//! The shared lexer for `ovs-ofctl` syntax: splitting comma lists at the top level of
//! parentheses, `key=value` / `key:value` pairs, and the scalar forms (integers, MAC and IP
//! addresses, dotted hex bytes) every text parser in the crate builds on.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::TextError;

/// Splits `s` at `sep` characters that are not inside `(…)` or `[…]`, trimming each piece and
/// dropping empty pieces.
pub fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(s[start..i].trim());
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(s[start..].trim());
    parts.retain(|p| !p.is_empty());
    parts
}

/// Splits `key=value` or `key:value` at the first `=` or `:` outside brackets; a bare word has
/// no value.
pub fn key_value(s: &str) -> (&str, Option<&str>) {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            '=' | ':' if depth == 0 => return (s[..i].trim(), Some(s[i + 1..].trim())),
            _ => {}
        }
    }
    (s.trim(), None)
}

/// If `s` is `name(args)`, returns `(name, args)`.
pub fn call(s: &str) -> Option<(&str, &str)> {
    let open = s.find('(')?;
    let inner = s.strip_suffix(')')?;
    Some((s[..open].trim(), &inner[open + 1..]))
}

/// Parses an unsigned integer in decimal or `0x` hexadecimal, up to 128 bits.
pub fn parse_u128(s: &str) -> Result<u128, TextError> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u128::from_str_radix(hex, 16),
        None => t.parse::<u128>(),
    };
    r.map_err(|_| TextError::new(s, "not a decimal or 0x-hex integer"))
}

/// Parses an integer that must fit in `bits` bits.
pub fn parse_uint(s: &str, bits: u32) -> Result<u128, TextError> {
    let v = parse_u128(s)?;
    if bits < 128 && v >> bits != 0 {
        return Err(TextError::new(
            s,
            format!("value does not fit in {bits} bits"),
        ));
    }
    Ok(v)
}

/// Parses a `u8`, `u16`, `u32` or `u64` written in decimal or hex.
pub fn parse_num<T: TryFrom<u128>>(s: &str) -> Result<T, TextError> {
    T::try_from(parse_u128(s)?).map_err(|_| TextError::new(s, "value out of range"))
}

/// Parses a MAC address `xx:xx:xx:xx:xx:xx`.
pub fn parse_mac(s: &str) -> Result<[u8; 6], TextError> {
    let mut mac = [0u8; 6];
    let mut n = 0;
    for part in s.split(':') {
        if n == 6 || part.is_empty() || part.len() > 2 {
            return Err(TextError::new(s, "not a MAC address"));
        }
        mac[n] =
            u8::from_str_radix(part, 16).map_err(|_| TextError::new(s, "not a MAC address"))?;
        n += 1;
    }
    if n != 6 {
        return Err(TextError::new(s, "not a MAC address"));
    }
    Ok(mac)
}

/// Formats a MAC address as `xx:xx:xx:xx:xx:xx`.
pub fn format_mac(mac: [u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]
    )
}

/// Parses a dotted-quad IPv4 address.
pub fn parse_ipv4(s: &str) -> Result<Ipv4Addr, TextError> {
    s.parse()
        .map_err(|_| TextError::new(s, "not an IPv4 address"))
}

/// Parses an IPv6 address, with or without `[…]`.
pub fn parse_ipv6(s: &str) -> Result<Ipv6Addr, TextError> {
    let t = s
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(s);
    t.parse()
        .map_err(|_| TextError::new(s, "not an IPv6 address"))
}

/// Parses bytes written as hex pairs separated by dots (`01.02.0a`), OVS's form for notes and
/// controller userdata. Dots are optional.
pub fn parse_hex_bytes(s: &str) -> Result<Vec<u8>, TextError> {
    let digits: Vec<u8> = s.bytes().filter(|b| *b != b'.').collect();
    if !digits.len().is_multiple_of(2) {
        return Err(TextError::new(s, "odd number of hex digits"));
    }
    digits
        .chunks(2)
        .map(|pair| {
            let text = std::str::from_utf8(pair).map_err(|_| TextError::new(s, "not hex bytes"))?;
            u8::from_str_radix(text, 16).map_err(|_| TextError::new(s, "not hex bytes"))
        })
        .collect()
}

/// Formats bytes as dot-separated hex pairs (`01.02.0a`).
pub fn format_hex_bytes(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(".")
}

/// Formats `v` like C's `%#x`: `0` for zero, `0x…` otherwise.
pub fn alt_hex(v: u128) -> String {
    if v == 0 {
        "0".to_string()
    } else {
        format!("{v:#x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_top_level_only() {
        assert_eq!(
            split_top("a,b(c,d),e[1,2], ,f", ','),
            ["a", "b(c,d)", "e[1,2]", "f"]
        );
        assert_eq!(split_top("", ','), Vec::<&str>::new());
    }

    #[test]
    fn key_values() {
        assert_eq!(key_value("table=5"), ("table", Some("5")));
        assert_eq!(
            key_value("output:NXM_NX_REG1[0..15]"),
            ("output", Some("NXM_NX_REG1[0..15]"))
        );
        assert_eq!(key_value("commit"), ("commit", None));
        assert_eq!(
            call("ct(commit,nat(src=1.1.1.1))"),
            Some(("ct", "commit,nat(src=1.1.1.1)"))
        );
        assert_eq!(call("drop"), None);
    }

    #[test]
    fn scalars() {
        assert_eq!(parse_u128("0x1f"), Ok(31));
        assert_eq!(parse_u128("42"), Ok(42));
        assert!(parse_u128("4z").is_err());
        assert!(parse_uint("256", 8).is_err());
        assert_eq!(parse_num::<u16>("65535"), Ok(65535));
        assert!(parse_num::<u16>("65536").is_err());
        assert_eq!(parse_mac("0a:00:00:00:00:01"), Ok([10, 0, 0, 0, 0, 1]));
        assert!(parse_mac("0a:00:00:00:00").is_err());
        assert!(parse_mac("0a:00:00:00:00:01:02").is_err());
        assert_eq!(format_mac([10, 0, 0, 0, 0, 1]), "0a:00:00:00:00:01");
        assert_eq!(parse_ipv6("[fe80::1]").unwrap().segments()[7], 1);
        assert_eq!(parse_hex_bytes("01.02.ff"), Ok(vec![1, 2, 255]));
        assert!(parse_hex_bytes("123").is_err());
        assert_eq!(format_hex_bytes(&[1, 2, 255]), "01.02.ff");
        assert_eq!(alt_hex(0), "0");
        assert_eq!(alt_hex(255), "0xff");
    }
}
