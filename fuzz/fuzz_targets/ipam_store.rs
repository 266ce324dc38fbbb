//! The host-local store files another process (or an older host-local) may have left: address
//! files named by an address and holding `<container id>\r\n<ifname>`, and the
//! `last_reserved_ip.<n>` files. The input is split at NUL bytes into the two last-reserved
//! contents, then (file name, content) pairs; they are written into a fresh store directory and
//! the real `ipam::Ipam` allocates, lists and releases over them. Never panics; an allocation
//! never hands out an address whose file names another holder, and a release leaves the
//! container holding nothing.
#![no_main]

use std::net::IpAddr;
use std::path::PathBuf;

use ipam::{Ipam, IpamConfig, Owner};
use libfuzzer_sys::fuzz_target;

const CONTAINER: &str = "fuzz-container";
const IFNAME: &str = "eth0";

/// A store directory of this process, emptied for each input.
fn data_dir() -> PathBuf {
    let base = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    base.join(format!("antrea-fuzz-ipam-store-{}", std::process::id()))
}

fn config(dir: &std::path::Path) -> IpamConfig {
    let netconf = serde_json::json!({
        "name": "fuzz",
        "ipam": {
            "type": "host-local",
            "dataDir": dir,
            "ranges": [
                [{"subnet": "10.1.0.0/29"}],
                [{"subnet": "fd00::/125"}],
            ],
        },
    });
    IpamConfig::from_netconf(&netconf).expect("the fixed configuration parses")
}

/// A name that is one plain file in the store directory.
fn plain_file_name(name: &str) -> bool {
    !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\'])
}

fuzz_target!(|data: &[u8]| {
    let dir = data_dir();
    let _ = std::fs::remove_dir_all(&dir);
    let ipam = Ipam::new(config(&dir)).expect("open the store");
    let store = ipam.store().dir().to_owned();
    let mut parts = data.split(|&b| b == 0);
    for set in 0..2 {
        if let Some(content) = parts.next() {
            std::fs::write(store.join(format!("last_reserved_ip.{set}")), content)
                .expect("write last_reserved_ip");
        }
    }
    while let (Some(name), Some(content)) = (parts.next(), parts.next()) {
        let Ok(name) = std::str::from_utf8(name) else {
            continue;
        };
        if plain_file_name(name) {
            let _ = std::fs::write(store.join(name), content);
        }
    }
    let held_before: Vec<(IpAddr, Option<Owner>)> = match ipam.store().lock() {
        Ok(locked) => locked.entries().expect("list the store"),
        Err(_) => return,
    };
    if let Ok(result) = ipam.allocate(CONTAINER, IFNAME) {
        assert_eq!(result.ips.len(), 2, "one address per range set");
        for ip in &result.ips {
            let addr = ip.address.addr();
            let before = held_before.iter().find(|(a, _)| *a == addr);
            if let Some((_, owner)) = before {
                assert!(
                    owner.as_ref().is_some_and(|o| o.is(CONTAINER, IFNAME)),
                    "{addr} was held by {owner:?} and was handed out again"
                );
            }
            assert!(
                ipam.config()
                    .range_sets
                    .iter()
                    .any(|s| s.range_for(addr).is_some()),
                "{addr} outside the ranges"
            );
        }
        assert!(
            ipam.check(CONTAINER, IFNAME).expect("check"),
            "the allocation is recorded"
        );
    }
    ipam.release(CONTAINER, IFNAME).expect("release");
    let after = ipam
        .store()
        .lock()
        .expect("lock")
        .entries()
        .expect("list the store");
    assert!(
        !after.iter().any(|(_, o)| o
            .as_ref()
            .is_some_and(|o| o.is(CONTAINER, IFNAME) && o.ifname.is_some())),
        "release left an address of the container"
    );
    let _ = std::fs::remove_dir_all(&dir);
});
