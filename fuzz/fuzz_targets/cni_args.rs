//! `CNI_ARGS` (`KEY=VALUE;…`): `cni::spec::CniArgs::parse` on arbitrary text never panics, and
//! the pairs it returns, written back as `KEY=VALUE` joined by `;`, parse to the same pairs.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(args) = cni::spec::CniArgs::parse(text) else {
        return;
    };
    let written: Vec<String> = args.pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let again = cni::spec::CniArgs::parse(&written.join(";")).expect("written pairs parse");
    assert_eq!(again, args, "parse(write(args)) != args");
    let k8s = args.k8s();
    assert_eq!(
        Some(k8s.pod_name.as_str()),
        args.get("K8S_POD_NAME").or(Some(""))
    );
});
