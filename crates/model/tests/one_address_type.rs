//! Keeps the workspace at one MAC address type ([`model::MacAddr`]) and one CIDR type, `ipnet`'s
//! ([`model::Ipv4Net`], and `ipnet::IpNet` where both families are allowed, as in CNI results):
//! reads every Rust file of the other crates (`crates/*` but `model`, all of `src`, `tests`,
//! `benches`, …) and fails, naming file:line, where one defines its own. There are no
//! exceptions.
//!
//! A definition is a `struct`, `enum`, `union` or `type` alias that
//! - has an address name: its CamelCase words are all address words and include `Mac`, `Cidr`,
//!   a link-layer word with `Addr`/`Address` (`HwAddr`, `EtherAddress`), or an IP word with a
//!   network word (`Ipv4Net`, `IpSubnet`). `MacPool`, `MacLearning` or `NodeNetwork` are other
//!   things and pass;
//! - or wraps six bytes whatever its name (`struct Hw(pub [u8; 6])`, `type Eth = [u8; 6]`);
//! - or is a struct of exactly an address (`Ipv4Addr`, `Ipv6Addr` or `IpAddr`) and a `u8` (an
//!   address with a prefix length).

use std::fs;
use std::path::{Path, PathBuf};

/// The IP address types of `std::net`.
const IP_ADDRESS_TYPES: &[&str] = &["Ipv4Addr", "Ipv6Addr", "IpAddr"];

/// Words an address type's name is made of.
const ADDRESS_WORDS: &[&str] = &[
    "mac", "cidr", "hw", "hardware", "ether", "ethernet", "eth", "link", "addr", "address", "ip",
    "ipv4", "v4", "inet", "net", "network", "prefix", "subnet",
];
const LINK_WORDS: &[&str] = &["hw", "hardware", "ether", "ethernet", "eth", "link"];
const ADDR_WORDS: &[&str] = &["addr", "address"];
const IP_WORDS: &[&str] = &["ip", "ipv4", "v4", "inet"];
const NET_WORDS: &[&str] = &["net", "network", "prefix", "subnet"];

/// A type definition found in a file.
#[derive(Debug, PartialEq, Eq)]
struct Definition {
    /// 1-based.
    line: usize,
    name: String,
    /// Why it counts as an address type.
    why: &'static str,
}

/// The CamelCase words of `name`, lower-cased: `Ipv4Cidr` → `ipv4`, `cidr`; `MACAddr` → `mac`,
/// `addr`.
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut word = String::new();
    for (i, &c) in chars.iter().enumerate() {
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let starts_word = c == '_'
            || (c.is_uppercase()
                && prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit() || next_lower));
        if starts_word && !word.is_empty() {
            words.push(std::mem::take(&mut word).to_lowercase());
        }
        if c != '_' {
            word.push(c);
        }
    }
    if !word.is_empty() {
        words.push(word.to_lowercase());
    }
    words
}

/// Why `name` names a MAC or CIDR type, if it does.
fn address_name(name: &str) -> Option<&'static str> {
    let words = words(name);
    let has = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
    if words.is_empty() || !words.iter().all(|w| ADDRESS_WORDS.contains(&w.as_str())) {
        return None;
    }
    if has(&["mac"]) || (has(LINK_WORDS) && has(ADDR_WORDS)) {
        Some("a MAC address name")
    } else if has(&["cidr"]) || (has(IP_WORDS) && has(NET_WORDS)) {
        Some("a CIDR name")
    } else {
        None
    }
}

/// `(keyword, name, rest of the line)` when `line` starts a type definition.
fn definition_start(line: &str) -> Option<(&str, &str, &str)> {
    let mut rest = line.trim_start();
    if let Some(after) = rest.strip_prefix("pub") {
        rest = after.trim_start();
        if let Some(after) = rest.strip_prefix('(') {
            rest = after.split_once(')')?.1.trim_start();
        }
    }
    let (keyword, after) = rest.split_once(char::is_whitespace)?;
    if !["struct", "enum", "union", "type"].contains(&keyword) {
        return None;
    }
    let after = after.trim_start();
    let end = after
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(after.len());
    let name = &after[..end];
    (!name.is_empty()).then_some((keyword, name, &after[end..]))
}

/// Whether `text` (without spaces) is six bytes: `[u8;6]`, possibly `pub`.
fn is_six_bytes(text: &str) -> bool {
    let squeezed: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let squeezed = squeezed.strip_prefix("pub").unwrap_or(&squeezed);
    squeezed == "[u8;6]"
}

/// The field types of the braced struct whose body starts after line `start` (0-based), when
/// the body closes.
fn field_types(lines: &[&str], start: usize) -> Vec<String> {
    let mut types = Vec::new();
    for line in &lines[start + 1..] {
        let line = line.trim();
        if line.starts_with('}') {
            break;
        }
        if line.starts_with("//") || line.starts_with('#') {
            continue;
        }
        if let Some((_, ty)) = line.split_once(':') {
            types.push(ty.trim().trim_end_matches(',').trim().to_owned());
        }
    }
    types
}

/// The MAC and CIDR type definitions in `source`.
fn definitions(source: &str) -> Vec<Definition> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("//") {
            continue;
        }
        let Some((keyword, name, rest)) = definition_start(line) else {
            continue;
        };
        let rest = rest.trim();
        let why = if let Some(why) = address_name(name) {
            Some(why)
        } else if keyword == "struct" && rest.starts_with('(') {
            let inner = rest.trim_start_matches('(');
            let inner = inner.split(')').next().unwrap_or_default();
            is_six_bytes(inner).then_some("a newtype over six bytes")
        } else if keyword == "type" {
            let target = rest.trim_start_matches('=').trim_end_matches(';');
            is_six_bytes(target).then_some("an alias of six bytes")
        } else if keyword == "struct" && rest.ends_with('{') {
            let types = field_types(&lines, i);
            let is_address = |t: &String| IP_ADDRESS_TYPES.contains(&t.as_str());
            (types.len() == 2 && types.contains(&"u8".to_owned()) && types.iter().any(is_address))
                .then_some("an IP address with a u8 (a CIDR)")
        } else {
            None
        };
        if let Some(why) = why {
            found.push(Definition {
                line: i + 1,
                name: name.to_owned(),
                why,
            });
        }
    }
    found
}

/// Every `.rs` file under `dir`, skipping build output.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_crate_but_model_defines_a_mac_or_cidr_type() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let crates = root.join("crates");
    let mut files = Vec::new();
    for entry in fs::read_dir(&crates)
        .expect("the workspace's crates/")
        .flatten()
    {
        if entry.file_name() != "model" {
            rust_files(&entry.path(), &mut files);
        }
    }
    files.sort();
    assert!(
        files.len() > 100,
        "found only {} Rust files under {}",
        files.len(),
        crates.display()
    );
    let mut offences = Vec::new();
    for file in &files {
        let source = fs::read_to_string(file).expect("a readable source file");
        let relative = file
            .strip_prefix(&root)
            .expect("under the workspace")
            .to_string_lossy()
            .replace('\\', "/");
        for d in definitions(&source) {
            offences.push(format!("{relative}:{}: {} is {}", d.line, d.name, d.why));
        }
    }
    assert!(
        offences.is_empty(),
        "use model::MacAddr and model::Ipv4Net (ipnet::IpNet for both families) instead of these {} definitions:\n{}",
        offences.len(),
        offences.join("\n")
    );
}

#[test]
fn splits_camel_case() {
    assert_eq!(words("Ipv4Cidr"), ["ipv4", "cidr"]);
    assert_eq!(words("MACAddr"), ["mac", "addr"]);
    assert_eq!(words("HwAddr"), ["hw", "addr"]);
    assert_eq!(words("mac_addr"), ["mac", "addr"]);
    assert_eq!(words("NodeNetwork"), ["node", "network"]);
}

#[test]
fn catches_address_types_and_passes_other_names() {
    let source = "\
pub struct Mac(pub [u8; 6]);
pub struct MacAddress {
pub(crate) struct MACAddr;
struct HwAddr([u8; 6]);
struct Station(pub [u8;6]);
type EtherAddress = [u8; 6];
type Bytes = [u8; 6];
pub enum Ipv4Cidr {
pub struct Cidr;
pub struct IpNet;
pub type V4Subnet = (Ipv4Addr, u8);
pub struct Block {
    /// The address.
    pub base: Ipv4Addr,
    len: u8,
}
pub struct MacLearning;
pub struct MacPool {
pub struct MacParseError(pub String);
pub struct NodeNetwork {
    pub node_ip: Ipv4Addr,
    pub pod_count: u8,
    pub up: bool,
}
pub struct Subnet {
pub struct Route {
    pub gateway: Ipv4Addr,
}
pub struct IpPrefix {
pub struct Dual {
    pub addr: IpAddr,
    pub len: u8,
}
pub struct Six {
    len: u8,
    addr: Ipv6Addr,
}
pub struct Hop {
    pub gw: IpAddr,
    pub metric: u32,
}
// struct Mac(pub [u8; 6]);
let mac: [u8; 6] = [0; 6];
fn mac_of(x: u8) -> MacAddr {
";
    let found: Vec<(usize, String)> = definitions(source)
        .into_iter()
        .map(|d| (d.line, d.name))
        .collect();
    let expected: Vec<(usize, String)> = [
        (1, "Mac"),
        (2, "MacAddress"),
        (3, "MACAddr"),
        (4, "HwAddr"),
        (5, "Station"),
        (6, "EtherAddress"),
        (7, "Bytes"),
        (8, "Ipv4Cidr"),
        (9, "Cidr"),
        (10, "IpNet"),
        (11, "V4Subnet"),
        (12, "Block"),
        (29, "IpPrefix"),
        (30, "Dual"),
        (34, "Six"),
    ]
    .into_iter()
    .map(|(line, name)| (line, name.to_owned()))
    .collect();
    assert_eq!(found, expected);
}
