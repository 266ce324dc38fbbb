//! No shipped binary carries a test fake. The `fake` features of hcn, winos and hostnet (the HNS,
//! IP Helper, NetNat and firewall fakes, `FakeWindows`, `ScriptedProbe`) must be off in the
//! normal build of every binary of the workspace, for Linux and for Windows. Tests turn them on
//! through `[dev-dependencies]`, and resolver 3 keeps those features out of normal builds. The
//! check asks cargo's own feature resolver (`cargo tree -e normal`) instead of assuming it.
//!
//! Linux only: it runs cargo, which a test binary under Wine cannot do.
#![cfg(target_os = "linux")]

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// The crates whose `fake` feature holds test fakes.
const FAKE_CRATES: [&str; 3] = ["hcn", "hostnet", "winos"];

/// The platforms the binaries ship for.
const SHIPPED_TARGETS: [&str; 2] = ["x86_64-unknown-linux-gnu", "x86_64-pc-windows-gnu"];

/// The workspace's manifest.
const WORKSPACE_MANIFEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.toml");

/// The stdout of `cargo <args> --manifest-path <workspace>`, which must succeed.
fn cargo(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO"))
        .args(args)
        .args(["--manifest-path", WORKSPACE_MANIFEST])
        .output()
        .expect("run cargo");
    assert!(
        output.status.success(),
        "cargo {}: {}\n{}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("cargo prints UTF-8")
}

/// The workspace packages that have a binary target: what ships.
fn binary_packages() -> Vec<String> {
    let metadata: serde_json::Value =
        serde_json::from_str(&cargo(&["metadata", "--no-deps", "--format-version", "1"]))
            .expect("cargo metadata prints JSON");
    let packages = metadata["packages"]
        .as_array()
        .expect("cargo metadata lists packages");
    packages
        .iter()
        .filter(|package| {
            package["targets"].as_array().is_some_and(|targets| {
                targets.iter().any(|target| {
                    target["kind"]
                        .as_array()
                        .is_some_and(|kinds| kinds.iter().any(|kind| kind == "bin"))
                })
            })
        })
        .map(|package| {
            package["name"]
                .as_str()
                .expect("a package has a name")
                .to_owned()
        })
        .collect()
}

/// The features each of [`FAKE_CRATES`] is built with when `packages` are built together for
/// the shipped targets, following the dependency kinds `edges` (`cargo tree --edges`).
fn fake_crate_features(packages: &[String], edges: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut args = vec!["tree", "--locked", "--edges", edges, "--prefix", "none"];
    args.extend(["--format", "{p}\t{f}"]);
    for target in SHIPPED_TARGETS {
        args.extend(["--target", target]);
    }
    for package in packages {
        args.extend(["--package", package]);
    }
    let mut features: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in cargo(&args).lines() {
        let Some((package, enabled)) = line.split_once('\t') else {
            continue;
        };
        let name = package.split_whitespace().next().unwrap_or_default();
        if !FAKE_CRATES.contains(&name) {
            continue;
        }
        // A package printed again is marked " (*)" after its features.
        let enabled = enabled.trim_end().trim_end_matches("(*)").trim_end();
        features.entry(name.to_owned()).or_default().extend(
            enabled
                .split(',')
                .filter(|feature| !feature.is_empty())
                .map(str::to_owned),
        );
    }
    features
}

#[test]
fn shipped_binaries_are_built_without_the_fakes() {
    let packages = binary_packages();
    for shipped in ["agent", "cni", "lab"] {
        assert!(
            packages.iter().any(|p| p == shipped),
            "{shipped} has no binary target: {packages:?}"
        );
    }
    let features = fake_crate_features(&packages, "normal");
    for krate in FAKE_CRATES {
        assert!(
            features.contains_key(krate),
            "{krate} is not in the normal build of {packages:?}, so this check sees nothing: {features:?}"
        );
    }
    let with_fakes: Vec<&String> = features
        .iter()
        .filter(|(_, enabled)| enabled.contains("fake"))
        .map(|(krate, _)| krate)
        .collect();
    assert!(
        with_fakes.is_empty(),
        "the shipped binaries of {packages:?} are built with the `fake` feature of {with_fakes:?} \
         (enable it only in [dev-dependencies]; `cargo tree -e normal,features -i <crate>` shows \
         who turns it on): {features:?}"
    );
}

/// The query above can see a `fake` feature: with dev-dependencies, through which the agent's
/// tests enable the fakes, it does.
#[test]
fn the_agent_tests_build_with_the_fakes() {
    let features = fake_crate_features(&["agent".to_owned()], "normal,dev");
    for krate in FAKE_CRATES {
        assert!(
            features.get(krate).is_some_and(|f| f.contains("fake")),
            "{krate} is built without `fake` for the agent's tests: {features:?}"
        );
    }
}
