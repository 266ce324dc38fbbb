//! The Pod sandbox ("pause") image, built locally so nothing is pulled: one layer holding a
//! static `busybox` as `/bin/busybox`, whose entry point sleeps forever, packed as an OCI image
//! layout archive (`oci-layout`, `index.json`, `blobs/sha256/…`: the layer, the image
//! configuration and the manifest, each named by its SHA-256) that `ctr images import` reads.
//! The index names the image with containerd's `io.containerd.image.name` annotation.

use std::fs;
use std::path::Path;

use ring::digest::{SHA256, digest};
use serde_json::json;

use super::tar::{NameTooLong, TarWriter};
use crate::error::{LabError, Result};

/// The sandbox image's name: the CRI plugin's `sandbox_image`.
pub const SANDBOX_IMAGE: &str = "localhost/antrea-lab/pause:1";

/// Where Debian's `busybox-static` puts its binary.
pub const BUSYBOX: &str = "/bin/busybox";

/// The sandbox's command: a process that does nothing until it is killed.
pub const SANDBOX_COMMAND: [&str; 3] = ["/bin/busybox", "sleep", "infinity"];

/// `sha256:<hex>` of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    let hex: String = digest(&SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// Whether `elf` is an ELF executable without a `PT_INTERP` program header (statically
/// linked: it runs in a root file system that holds nothing else).
pub fn is_static_elf(elf: &[u8]) -> bool {
    const PT_INTERP: u32 = 3;
    let u16_at = |o: usize| elf.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let u32_at = |o: usize| {
        elf.get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |o: usize| {
        elf.get(o..o + 8)
            .and_then(|b| b.try_into().ok())
            .map(u64::from_le_bytes)
    };
    // 64-bit little-endian ELF only (the lab runs on x86_64 or arm64 Linux).
    if elf.get(..6) != Some(b"\x7fELF\x02\x01") {
        return false;
    }
    let (Some(phoff), Some(phentsize), Some(phnum)) = (u64_at(0x20), u16_at(0x36), u16_at(0x38))
    else {
        return false;
    };
    (0..usize::from(phnum)).all(|i| {
        let at = usize::try_from(phoff)
            .unwrap_or(usize::MAX)
            .saturating_add(i * usize::from(phentsize));
        u32_at(at).is_some_and(|kind| kind != PT_INTERP)
    })
}

/// The OCI architecture name of this machine.
fn architecture() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// The image archive's bytes for a root file system holding `busybox` as `/bin/busybox`.
pub fn archive(busybox: &[u8]) -> std::result::Result<Vec<u8>, NameTooLong> {
    let mut layer = TarWriter::new();
    layer.dir("bin")?;
    layer.file("bin/busybox", 0o755, busybox)?;
    let layer = layer.finish();
    let layer_digest = sha256(&layer);
    let config = json!({
        "architecture": architecture(),
        "os": "linux",
        "config": {"Entrypoint": SANDBOX_COMMAND, "WorkingDir": "/"},
        "rootfs": {"type": "layers", "diff_ids": [layer_digest]},
    })
    .to_string()
    .into_bytes();
    let config_digest = sha256(&config);
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": config_digest, "size": config.len()},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                    "digest": layer_digest, "size": layer.len()}],
    })
    .to_string()
    .into_bytes();
    let manifest_digest = sha256(&manifest);
    let index = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "digest": manifest_digest, "size": manifest.len(),
                       "annotations": {"io.containerd.image.name": SANDBOX_IMAGE,
                                       "org.opencontainers.image.ref.name": "1"}}],
    })
    .to_string()
    .into_bytes();
    let mut archive = TarWriter::new();
    archive.file("oci-layout", 0o644, br#"{"imageLayoutVersion":"1.0.0"}"#)?;
    archive.file("index.json", 0o644, &index)?;
    archive.dir("blobs")?;
    archive.dir("blobs/sha256")?;
    for (digest, blob) in [
        (&layer_digest, &layer),
        (&config_digest, &config),
        (&manifest_digest, &manifest),
    ] {
        let hex = digest.trim_start_matches("sha256:");
        archive.file(&format!("blobs/sha256/{hex}"), 0o644, blob)?;
    }
    Ok(archive.finish())
}

/// Builds the image from `busybox` (a static executable) into the archive at `out`.
pub fn build(busybox: &Path, out: &Path) -> Result<()> {
    let bytes = fs::read(busybox).map_err(|source| LabError::File {
        what: "busybox for the sandbox image (install Debian's busybox-static)",
        path: busybox.to_owned(),
        source,
    })?;
    if !is_static_elf(&bytes) {
        return Err(LabError::Image(format!(
            "{} is not a static ELF executable (install Debian's busybox-static)",
            busybox.display()
        )));
    }
    let archive = archive(&bytes).map_err(|e| LabError::Image(e.to_string()))?;
    fs::write(out, archive).map_err(|source| LabError::File {
        what: "sandbox image archive",
        path: out.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_sha256_of_the_bytes() {
        assert_eq!(
            sha256(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn the_archive_is_an_oci_layout_whose_blobs_match_their_digests() {
        let archive = archive(b"not really busybox").unwrap();
        let dir =
            std::env::temp_dir().join(format!("antrea-lab-image-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("image.tar"), &archive).unwrap();
        let out = std::process::Command::new("tar")
            .arg("-xf")
            .arg(dir.join("image.tar"))
            .arg("-C")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let read_json = |p: &str| -> serde_json::Value {
            serde_json::from_slice(&fs::read(dir.join(p)).unwrap()).unwrap()
        };
        let blob = |digest: &serde_json::Value| {
            let hex = digest.as_str().unwrap().trim_start_matches("sha256:");
            let bytes = fs::read(dir.join("blobs/sha256").join(hex)).unwrap();
            assert_eq!(sha256(&bytes), digest.as_str().unwrap());
            bytes
        };
        assert_eq!(read_json("oci-layout")["imageLayoutVersion"], "1.0.0");
        let index = read_json("index.json");
        let entry = &index["manifests"][0];
        assert_eq!(
            entry["annotations"]["io.containerd.image.name"],
            SANDBOX_IMAGE
        );
        let manifest: serde_json::Value = serde_json::from_slice(&blob(&entry["digest"])).unwrap();
        let config: serde_json::Value =
            serde_json::from_slice(&blob(&manifest["config"]["digest"])).unwrap();
        assert_eq!(config["config"]["Entrypoint"], json!(SANDBOX_COMMAND));
        let layer_digest = &manifest["layers"][0]["digest"];
        assert_eq!(&config["rootfs"]["diff_ids"][0], layer_digest);
        let layer = blob(layer_digest);
        fs::write(dir.join("layer.tar"), layer).unwrap();
        let listing = std::process::Command::new("tar")
            .arg("-tf")
            .arg(dir.join("layer.tar"))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&listing.stdout),
            "bin/\nbin/busybox\n"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_static_elf_executables_are_accepted() {
        assert!(!is_static_elf(b""));
        assert!(!is_static_elf(b"#!/bin/sh\n"));
        assert!(!is_static_elf(b"\x7fELF\x02\x01\x01"));
        // This test binary is dynamically linked: it names its loader.
        let own = fs::read(std::env::current_exe().unwrap()).unwrap();
        assert!(!is_static_elf(&own));
        if let Ok(busybox) = fs::read(BUSYBOX) {
            assert!(
                is_static_elf(&busybox),
                "{BUSYBOX} from busybox-static is static"
            );
        }
    }
}
