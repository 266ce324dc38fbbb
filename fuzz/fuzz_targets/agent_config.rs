//! `antrea-agent.conf`: `agent::config::AgentConfig::parse` on arbitrary text, for Linux or
//! Windows (the first byte picks), never panics; a configuration that parses gives its derived
//! values (tunnel port, Pod MTU, OVS endpoints) without panicking, and a nonzero tunnel port.
#![no_main]

use agent::config::{AgentConfig, Platform};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let platform = if which % 2 == 0 {
        Platform::Linux
    } else {
        Platform::Windows
    };
    let Ok(loaded) = AgentConfig::parse(text, platform) else {
        return;
    };
    let config = &loaded.config;
    assert_eq!(config.platform, platform);
    assert_ne!(config.tunnel_destination_port(), 0, "a tunnel port of 0");
    for (mtu, ipv6) in [(0, false), (1500, false), (1500, true), (u16::MAX, true)] {
        let _ = config.pod_mtu(mtu, ipv6);
    }
    let _ = config.ovsdb_endpoint();
    let _ = config.bridge_mgmt_endpoint();
});
