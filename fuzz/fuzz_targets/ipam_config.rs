//! The IPAM section of a network configuration: `ipam::IpamConfig::parse` on arbitrary bytes
//! never panics, and a configuration that parses is usable: every range has its bounds inside its
//! subnet in order, and no two range sets overlap.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(config) = ipam::IpamConfig::parse(data) else {
        return;
    };
    assert!(
        !config.range_sets.is_empty(),
        "a parsed configuration has a range set"
    );
    for (i, set) in config.range_sets.iter().enumerate() {
        for range in set.ranges() {
            assert!(
                range.subnet.contains(&range.start),
                "set {i}: start outside {}",
                range.subnet
            );
            assert!(
                range.subnet.contains(&range.end),
                "set {i}: end outside {}",
                range.subnet
            );
            assert!(
                // Both inside one subnet, so of one family, where `IpAddr`'s order is numeric.
                range.start <= range.end,
                "set {i}: start after end"
            );
        }
        for (j, other) in config.range_sets.iter().enumerate().skip(i + 1) {
            for a in set.ranges() {
                for b in other.ranges() {
                    assert!(
                        !b.contains(a.start) && !b.contains(a.end) && !a.contains(b.start),
                        "range sets {i} and {j} overlap"
                    );
                }
            }
        }
    }
});
