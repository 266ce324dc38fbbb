//! The network configuration a runtime writes on the plugin's stdin: `cni::spec::NetConf::parse`
//! on arbitrary bytes never panics, and a configuration that decodes answers its version, IPAM
//! type and DNS; decoding is lenient only where the CNI spec is (unknown keys).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(conf) = cni::spec::NetConf::parse(data) else {
        return;
    };
    let _ = conf.version();
    let _ = conf.ipam_type();
    let dns = conf.effective_dns();
    // The runtime's `dns` capability wins where it is set.
    if !conf.runtime_config.dns.servers.is_empty() {
        assert_eq!(dns.nameservers, conf.runtime_config.dns.servers);
    }
    // The same bytes decode to the same configuration (nothing depends on state).
    assert_eq!(cni::spec::NetConf::parse(data).ok().as_ref(), Some(&conf));
});
