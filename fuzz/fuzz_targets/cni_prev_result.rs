//! `prevResult` (a CNI result of any supported version): `cni::spec::CniResult::from_json` on
//! arbitrary JSON never panics, and a result that decodes prints (`to_json` for 1.1.0, which
//! keeps every field) to JSON that decodes to the same result; printed for an older version it
//! decodes to the same addresses and routes.
#![no_main]

use cni::spec::{CniResult, CniVersion};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(result) = CniResult::from_json(&json) else {
        return;
    };
    let printed = result.to_json(CniVersion::V1_1_0);
    let again = CniResult::from_json(&printed).expect("a printed 1.1.0 result decodes");
    assert_eq!(again, result, "from_json(to_json(r)) != r");
    for version in [CniVersion::V0_3_0, CniVersion::V0_4_0, CniVersion::V1_0_0] {
        let old = CniResult::from_json(&result.to_json(version)).expect("a printed result decodes");
        let addresses = |r: &CniResult| r.ips.clone();
        let destinations =
            |r: &CniResult| r.routes.iter().map(|x| (x.dst, x.gw)).collect::<Vec<_>>();
        assert_eq!(
            addresses(&old),
            addresses(&result),
            "{version}: addresses changed"
        );
        assert_eq!(
            destinations(&old),
            destinations(&result),
            "{version}: routes changed"
        );
        assert_eq!(old.dns, result.dns, "{version}: dns changed");
    }
});
