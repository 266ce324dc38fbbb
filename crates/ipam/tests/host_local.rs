//! Parity with the reference `host-local` binary (Debian's containernetworking-plugins, installed
//! by scripts/setup.sh; `HOST_LOCAL` overrides the path): the same configurations and call
//! sequences give the same addresses, and both share one store directory.
#![cfg(target_os = "linux")]

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use ipam::{Ipam, IpamConfig};
use serde_json::{Value, json};

fn host_local_path() -> PathBuf {
    let path = PathBuf::from(
        std::env::var("HOST_LOCAL").unwrap_or_else(|_| "/usr/lib/cni/host-local".into()),
    );
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup.sh (containernetworking-plugins)",
        path.display()
    );
    path
}

/// A network configuration with `ipam` and the store under `data_dir`.
fn netconf(data_dir: &Path, ipam: Value) -> Value {
    let mut ipam = ipam;
    ipam["type"] = json!("host-local");
    ipam["dataDir"] = json!(data_dir.display().to_string());
    json!({"cniVersion": "1.0.0", "name": "antrea", "type": "antrea", "ipam": ipam})
}

/// The outcome of one ADD: the addresses (with prefix) and gateways, or the error message.
type AddOutcome = Result<Vec<(String, Option<String>)>, String>;

fn host_local(
    conf: &Value,
    command: &str,
    container_id: &str,
    ifname: &str,
) -> Result<Value, (u64, String)> {
    let mut child = Command::new(host_local_path())
        .env_clear()
        .env("CNI_COMMAND", command)
        .env("CNI_CONTAINERID", container_id)
        .env("CNI_NETNS", "/var/run/netns/test")
        .env("CNI_IFNAME", ifname)
        .env("CNI_PATH", "/usr/lib/cni")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(conf.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let value: Value = if text.trim().is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    };
    if out.status.success() {
        Ok(value)
    } else {
        Err((
            value["code"].as_u64().unwrap(),
            value["msg"].as_str().unwrap().to_owned(),
        ))
    }
}

fn host_local_add(conf: &Value, id: &str, ifname: &str) -> AddOutcome {
    match host_local(conf, "ADD", id, ifname) {
        Ok(v) => Ok(v["ips"]
            .as_array()
            .unwrap()
            .iter()
            .map(|ip| {
                (
                    ip["address"].as_str().unwrap().to_owned(),
                    ip["gateway"].as_str().map(str::to_owned),
                )
            })
            .collect()),
        Err((_, msg)) => Err(msg),
    }
}

fn host_local_del(conf: &Value, id: &str, ifname: &str) {
    host_local(conf, "DEL", id, ifname).expect("host-local DEL");
}

fn ours(conf: &Value) -> Ipam {
    Ipam::new(IpamConfig::from_netconf(conf).unwrap()).unwrap()
}

fn ours_add(conf: &Value, id: &str, ifname: &str) -> AddOutcome {
    ours(conf)
        .allocate(id, ifname)
        .map(|r| {
            r.ips
                .iter()
                .map(|i| (i.address.to_string(), i.gateway.map(|g| g.to_string())))
                .collect()
        })
        .map_err(|e| e.to_string())
}

/// Every file of a store directory with its content (the lock file's content is empty).
fn store_files(conf: &Value) -> BTreeMap<String, Vec<u8>> {
    let dir = PathBuf::from(conf["ipam"]["dataDir"].as_str().unwrap()).join("antrea");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// Runs `steps` (`+id` allocates, `-id` releases) against host-local and ours in separate data
/// directories, asserting equal outcomes at every step and equal stores at the end.
fn same_sequence(ipam: Value, steps: &[&str]) -> Vec<AddOutcome> {
    let (theirs_dir, ours_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let theirs_conf = netconf(theirs_dir.path(), ipam.clone());
    let ours_conf = netconf(ours_dir.path(), ipam);
    let mut outcomes = Vec::new();
    for step in steps {
        let (op, id) = step.split_at(1);
        if op == "+" {
            let (t, o) = (
                host_local_add(&theirs_conf, id, "eth0"),
                ours_add(&ours_conf, id, "eth0"),
            );
            assert_eq!(o, t, "step {step}");
            outcomes.push(o);
        } else {
            host_local_del(&theirs_conf, id, "eth0");
            ours(&ours_conf).release(id, "eth0").unwrap();
        }
    }
    assert_eq!(
        store_files(&ours_conf),
        store_files(&theirs_conf),
        "store contents"
    );
    outcomes
}

fn addresses(outcomes: &[AddOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .filter_map(|o| o.as_ref().ok())
        .flat_map(|ips| ips.iter().map(|(a, _)| a.clone()))
        .collect()
}

#[test]
fn round_robin_across_releases_matches() {
    let out = same_sequence(
        json!({"ranges": [[{"subnet": "10.10.0.0/28"}]]}),
        &[
            "+a", "+b", "+c", "-b", "+d", "-a", "+e", "+f", "-d", "+g", "+h", "+i",
        ],
    );
    let ips = addresses(&out);
    assert_eq!(
        ips[..4],
        [
            "10.10.0.2/28",
            "10.10.0.3/28",
            "10.10.0.4/28",
            "10.10.0.5/28"
        ]
    );
    assert_eq!(out[0].as_ref().unwrap()[0].1.as_deref(), Some("10.10.0.1"));
}

#[test]
fn wrap_around_and_exhaustion_match_including_the_error_text() {
    let out = same_sequence(
        json!({"ranges": [[{"subnet": "10.11.0.0/29"}]]}),
        &[
            "+a", "+b", "+c", "+d", "+e", "+f", "-b", "-d", "+g", "+h", "+i",
        ],
    );
    let last = out.last().unwrap().as_ref().unwrap_err();
    assert_eq!(
        last,
        "failed to allocate for range 0: no IP addresses available in range set: 10.11.0.1-10.11.0.6"
    );
    assert_eq!(
        addresses(&out)[5..],
        ["10.11.0.3/29", "10.11.0.5/29"],
        "wrapped to the released addresses"
    );
}

#[test]
fn gateway_network_and_broadcast_are_never_handed_out() {
    let steps: Vec<String> = (0..8).map(|i| format!("+c{i}")).collect();
    let steps: Vec<&str> = steps.iter().map(String::as_str).collect();
    let out = same_sequence(
        json!({"ranges": [[{"subnet": "10.12.0.0/29", "gateway": "10.12.0.4"}]]}),
        &steps,
    );
    let ips = addresses(&out);
    assert_eq!(
        ips,
        [
            "10.12.0.1/29",
            "10.12.0.2/29",
            "10.12.0.3/29",
            "10.12.0.5/29",
            "10.12.0.6/29"
        ]
    );
    assert!(out[5..].iter().all(Result::is_err));
}

#[test]
fn range_start_and_end_are_honored() {
    let out = same_sequence(
        json!({"ranges": [[{"subnet": "10.13.0.0/24", "rangeStart": "10.13.0.100", "rangeEnd": "10.13.0.102"}]]}),
        &["+a", "+b", "+c", "+d", "-b", "+e"],
    );
    assert_eq!(
        addresses(&out),
        [
            "10.13.0.100/24",
            "10.13.0.101/24",
            "10.13.0.102/24",
            "10.13.0.101/24"
        ]
    );
    assert_eq!(
        out[3].as_ref().unwrap_err(),
        "failed to allocate for range 0: no IP addresses available in range set: 10.13.0.100-10.13.0.102"
    );
}

#[test]
fn multiple_range_sets_give_one_address_each() {
    let out = same_sequence(
        json!({
            "ranges": [
                [{"subnet": "10.14.0.0/30"}, {"subnet": "10.15.0.0/30"}],
                [{"subnet": "fd00:14::/126"}]
            ],
            "routes": [{"dst": "0.0.0.0/0"}]
        }),
        &["+a", "+b", "-a", "+c", "+d"],
    );
    assert_eq!(
        out[0]
            .as_ref()
            .unwrap()
            .iter()
            .map(|(a, _)| a.as_str())
            .collect::<Vec<_>>(),
        ["10.14.0.2/30", "fd00:14::2/126"]
    );
    assert_eq!(
        out[1].as_ref().unwrap()[0].0,
        "10.15.0.2/30",
        "second range of the set after the first is full"
    );
    assert!(out.iter().any(Result::is_err), "the IPv6 /126 runs out");
}

#[test]
fn legacy_subnet_config_matches() {
    same_sequence(
        json!({"subnet": "10.16.0.0/29", "rangeStart": "10.16.0.3"}),
        &["+a", "+b", "-a", "+c", "+d"],
    );
}

#[test]
fn stores_interoperate_in_both_directions() {
    let dir = tempfile::tempdir().unwrap();
    let conf = netconf(
        dir.path(),
        json!({"ranges": [[{"subnet": "10.17.0.0/29"}]]}),
    );
    assert_eq!(ours_add(&conf, "a", "eth0").unwrap()[0].0, "10.17.0.2/29");
    assert_eq!(
        host_local_add(&conf, "b", "eth0").unwrap()[0].0,
        "10.17.0.3/29",
        "host-local skips ours"
    );
    assert_eq!(
        ours_add(&conf, "c", "eth0").unwrap()[0].0,
        "10.17.0.4/29",
        "we continue after host-local's last"
    );
    host_local_del(&conf, "a", "eth0");
    let ipam = ours(&conf);
    assert_eq!(
        ipam.release("b", "eth0").unwrap(),
        ["10.17.0.3".parse::<std::net::IpAddr>().unwrap()]
    );
    let held: Vec<String> = ipam
        .allocations()
        .unwrap()
        .iter()
        .map(|a| a.ip.to_string())
        .collect();
    assert_eq!(
        held,
        ["10.17.0.4"],
        "host-local released ours, we released host-local's"
    );
    host_local(&conf, "CHECK", "c", "eth0").expect("host-local CHECK finds our allocation");
    assert!(host_local(&conf, "CHECK", "a", "eth0").is_err());
    assert_eq!(
        host_local_add(&conf, "d", "eth0").unwrap()[0].0,
        "10.17.0.5/29"
    );
    assert!(ipam.check("d", "eth0").unwrap());
}

#[test]
fn repeated_add_for_the_same_attachment() {
    let dir = tempfile::tempdir().unwrap();
    let conf = netconf(
        dir.path(),
        json!({"ranges": [[{"subnet": "10.18.0.0/29"}]]}),
    );
    let first = ours_add(&conf, "a", "eth0").unwrap();
    assert_eq!(
        ours_add(&conf, "a", "eth0").unwrap(),
        first,
        "ours: idempotent"
    );
    let (code, msg) = host_local(&conf, "ADD", "a", "eth0").unwrap_err();
    assert_eq!(
        (code, msg.as_str()),
        (
            999,
            "failed to allocate for range 0: 10.18.0.2 has been allocated to a, duplicate allocation is not allowed"
        )
    );
    assert_eq!(
        ours_add(&conf, "a", "eth1").unwrap()[0].0,
        "10.18.0.3/29",
        "another interface is another attachment"
    );
}

#[test]
fn concurrent_allocations_with_host_local_never_collide() {
    let dir = tempfile::tempdir().unwrap();
    let conf = netconf(
        dir.path(),
        json!({"ranges": [[{"subnet": "10.19.0.0/24"}]]}),
    );
    let handles: Vec<_> = (0..16)
        .map(|i| {
            let conf = conf.clone();
            std::thread::spawn(move || {
                let id = format!("c{i}");
                if i % 2 == 0 {
                    host_local_add(&conf, &id, "eth0")
                } else {
                    ours_add(&conf, &id, "eth0")
                }
            })
        })
        .collect();
    let ips: Vec<String> = handles
        .into_iter()
        .map(|h| h.join().unwrap().unwrap()[0].0.clone())
        .collect();
    let distinct: HashSet<&String> = ips.iter().collect();
    assert_eq!(distinct.len(), 16, "{ips:?}");
    assert_eq!(ours(&conf).allocations().unwrap().len(), 16);
}
