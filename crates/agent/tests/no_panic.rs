//! The two text entry points (also the fuzz targets) give a value or an error on any input:
//! arbitrary text, and the sample files with bytes changed.

use agent::cluster::decode_documents;
use agent::config::{AgentConfig, Platform};
use proptest::prelude::*;

const SAMPLES: &[&str] = &[
    include_str!("data/antrea-agent-linux.conf"),
    include_str!("data/antrea-agent-lab.conf"),
    "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n1, annotations: {a: b}}\n  spec: {podCIDR: 10.0.0.0/24}\n  status: {addresses: [{type: InternalIP, address: 1.2.3.4}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {a: b}}\nspec: {nodeName: n1, containers: [{name: c}]}\nstatus: {podIPs: [{ip: 10.0.0.5}]}\n",
];

/// A sample with some bytes replaced by YAML-significant characters.
fn mutated() -> impl Strategy<Value = String> {
    let punctuation = prop::sample::select(vec![
        b':', b'-', b'[', b']', b'{', b'}', b'\n', b' ', b'&', b'*', b'!', b'"', b'#', b'1',
    ]);
    (
        prop::sample::select(SAMPLES.to_vec()),
        prop::collection::vec((any::<prop::sample::Index>(), punctuation), 1..8),
    )
        .prop_map(|(sample, edits)| {
            let mut bytes = sample.as_bytes().to_vec();
            for (at, byte) in edits {
                let i = at.index(bytes.len());
                bytes[i] = byte;
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
}

fn exercise(text: &str) {
    for platform in [Platform::Linux, Platform::Windows] {
        if let Ok(loaded) = AgentConfig::parse(text, platform) {
            let c = loaded.config;
            let _ = (
                c.pod_mtu(1500, false),
                c.tunnel_destination_port(),
                c.ovsdb_endpoint(),
                c.bridge_mgmt_endpoint(),
            );
        }
    }
    let _ = decode_documents(text);
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in ".{0,300}") {
        exercise(&text);
    }

    #[test]
    fn mutated_samples_never_panic(text in mutated()) {
        exercise(&text);
    }
}

#[test]
fn samples_are_accepted_unmutated() {
    for sample in SAMPLES {
        let as_config = AgentConfig::parse(sample, Platform::Linux);
        let as_objects = decode_documents(sample);
        assert!(as_config.is_ok() || as_objects.is_ok(), "{sample}");
    }
}
