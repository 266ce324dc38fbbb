//! The controllers and the CNI server change the datapath only through the `Datapath` trait:
//! none of their source files names the OVS implementation, its OVSDB or OpenFlow sides, or the
//! pipeline that renders flows.

use std::path::Path;

/// What a file behind the boundary must not name.
const OVS_SIDE: [&str; 7] = [
    "pipeline::",
    "openflow::",
    "ovsdb::",
    "crate::ovs",
    "crate::flows",
    "datapath::ovs",
    "OvsDatapath",
];

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn controllers_and_the_cni_server_see_only_the_datapath_trait() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for dir in ["controller", "cniserver"] {
        sources(&src.join(dir), &mut files);
    }
    assert!(files.len() >= 8, "found only {files:?}");
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            for name in OVS_SIDE {
                if line.contains(name) {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "behind the Datapath boundary:\n{}",
        found.join("\n")
    );
}
