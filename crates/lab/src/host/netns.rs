//! Network namespaces and the link settings the userspace datapath needs: namespaces named
//! `lab-*`, veth TX checksum offload off, IPv6 off, the nftables netdev ingress drop that
//! keeps a namespace's kernel off the devices OVS reads through packet sockets, and a
//! namespace's own resolv.conf (`/etc/netns/<name>/resolv.conf`, which `ip netns exec`
//! bind-mounts over `/etc/resolv.conf`), removed with the namespace.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use super::command::{in_netns, ip, run, run_stdin, wait_until};
use crate::error::{LabError, Result};
use crate::plan::NETNS_PREFIX;

/// Where `ip netns exec` finds a namespace's own `/etc` files.
const NETNS_ETC: &str = "/etc/netns";

/// The nftables table holding the ingress drop chains.
pub const NFT_TABLE: &str = "lab_ovs_ports";

/// Creates `name` with its loopback up and IPv6 off by default for every later interface.
pub fn add(name: &str, ipv6_off: bool) -> Result<()> {
    ip(&["netns", "add", name])?;
    ip(&["-n", name, "link", "set", "lo", "up"])?;
    if ipv6_off {
        sysctl(
            name,
            &[
                "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1",
            ],
        )?;
    }
    Ok(())
}

/// Deletes `name` and its `/etc/netns/<name>` files.
pub fn delete(name: &str) -> Result<()> {
    ip(&["netns", "del", name])?;
    let etc = etc_dir(name);
    match fs::remove_dir_all(&etc) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(LabError::File {
            what: "namespace resolv.conf directory",
            path: etc,
            source: e,
        }),
        _ => Ok(()),
    }
}

/// `/etc/netns/<name>`.
fn etc_dir(name: &str) -> PathBuf {
    Path::new(NETNS_ETC).join(name)
}

/// Gives namespace `name` its own resolv.conf: what every `ip netns exec name …` sees as
/// `/etc/resolv.conf`.
pub fn write_resolv_conf(name: &str, text: &str) -> Result<()> {
    let dir = etc_dir(name);
    let path = dir.join("resolv.conf");
    fs::create_dir_all(&dir)
        .and_then(|()| fs::write(&path, text))
        .map_err(|source| LabError::File {
            what: "namespace resolv.conf",
            path,
            source,
        })
}

/// Every namespace named `lab-*`.
pub fn lab_namespaces() -> Result<Vec<String>> {
    Ok(parse_netns_list(&ip(&["netns", "list"])?))
}

/// The `lab-*` names in `ip netns list` output (`name` or `name (id: N)` per line).
pub fn parse_netns_list(text: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(NETNS_PREFIX))
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

/// The PIDs of processes in namespace `name`.
pub fn pids(name: &str) -> Vec<i32> {
    ip(&["netns", "pids", name])
        .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// `sysctl -qw` settings inside `netns`.
pub fn sysctl(netns: &str, settings: &[&str]) -> Result<()> {
    run(in_netns(netns, "sysctl").arg("-qw").args(settings)).map(drop)
}

/// TX checksum offload off on `dev` (the userspace datapath cannot finish partial checksums).
pub fn tx_off(netns: &str, dev: &str) -> Result<()> {
    run(in_netns(netns, "ethtool").args(["-K", dev, "tx", "off"])).map(drop)
}

/// Keeps the kernel of `netns` off `dev`: an nftables netdev ingress chain that drops
/// everything. Packet sockets (OVS) still receive the frames; they see them before the hook.
pub fn keep_kernel_off(netns: &str, dev: &str) -> Result<()> {
    let mut nft = in_netns(netns, "nft");
    nft.args(["-f", "-"]);
    run_stdin(
        &mut nft,
        ingress_drop_rules(dev).as_bytes(),
        Duration::from_secs(10),
    )
    .map(drop)
}

/// The nft script for [`keep_kernel_off`] (the table is declared again: declarations merge).
pub fn ingress_drop_rules(dev: &str) -> String {
    let chain = dev.replace(['-', '.'], "_");
    format!(
        "table netdev {NFT_TABLE} {{\n  chain {chain}_ingress {{\n    type filter hook ingress device \"{dev}\" priority 0; policy drop;\n  }}\n}}\n"
    )
}

/// Waits for link `dev` to exist in `netns` (OVS creates its taps asynchronously).
pub fn wait_link(netns: &str, dev: &str, timeout: Duration) -> Result<()> {
    wait_until(&format!("link {dev} in {netns}"), timeout, || {
        Command::new("ip")
            .args(["-n", netns, "link", "show", dev])
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn netns_list_keeps_lab_names_only() {
        let text = "lab-n2 (id: 3)\nlab-underlay (id: 0)\novst-123-0\nlab-n1-p1\n\nlabx\n";
        assert_eq!(
            parse_netns_list(text),
            ["lab-n1-p1", "lab-n2", "lab-underlay"]
        );
    }

    #[test]
    fn ingress_drop_chain_names_the_device() {
        let rules = ingress_drop_rules("n1p2");
        assert!(rules.contains("table netdev lab_ovs_ports {"));
        assert!(rules.contains("chain n1p2_ingress {"));
        assert!(
            rules.contains("type filter hook ingress device \"n1p2\" priority 0; policy drop;")
        );
        assert!(ingress_drop_rules("p1-h").contains("chain p1_h_ingress"));
    }
}
