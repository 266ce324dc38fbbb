//! The real client's constructor on this host.
//!
//! - Under Wine, `computenetwork.dll` is the shim of crates/hcnshim (tools/wine/run.sh installs
//!   it): the client loads it and works (crates/hcnshim/tests/client.rs drives it in depth).
//! - When the DLL does not load, the constructor gives the one `Unavailable` error. Under Wine,
//!   a child of this test runs with the shim refusing to load (`ANTREA_HCN_SHIM_ABSENT=1`, as on
//!   a host without HCN; a missing file is covered by the unit tests of `src/ffi`). On a
//!   Windows host with HNS, the client enumerates networks.
//! - The executable has no static import of `computenetwork.dll`, so it starts on hosts
//!   without it: its PE import table, read from the file, does not name the DLL.
#![cfg(windows)]

use std::process::Command;

use hcn::schema::{HostComputeQuery, QueryFilter};
use hcn::{HcnApi, HcnClient, HcnError};

/// Set to `1`, the shim refuses to load in the process (crates/hcnshim, `ABSENT_ENV`).
const SHIM_ABSENT_ENV: &str = "ANTREA_HCN_SHIM_ABSENT";

/// Wine passes the Unix environment through; its runner (tools/wine/run.sh) sets WINEPREFIX.
fn under_wine() -> bool {
    std::env::var_os("WINEPREFIX").is_some()
}

fn assert_unavailable(error: HcnError) {
    match error {
        HcnError::Unavailable { dll, reason } => {
            assert_eq!(dll, "computenetwork.dll");
            let message = HcnError::Unavailable { dll, reason }.to_string();
            assert!(
                message.starts_with(
                    "the Host Compute Network API is unavailable: computenetwork.dll: cannot load it"
                ),
                "{message}"
            );
            eprintln!("{message}");
        }
        other => panic!("expected Unavailable, got {other}"),
    }
}

#[test]
fn the_constructor_loads_computenetwork_dll_and_the_client_works() {
    if std::env::var_os(SHIM_ABSENT_ENV).is_some() {
        return;
    }
    match HcnClient::new() {
        Ok(client) => {
            client
                .enumerate_networks(&HostComputeQuery::new(QueryFilter::All))
                .expect("enumerate networks");
        }
        // A Windows older than 1809 has no HCN; Wine has the shim.
        Err(error) if !under_wine() => assert_unavailable(error),
        Err(error) => panic!("under Wine the computenetwork.dll shim must load: {error}"),
    }
}

#[test]
fn when_computenetwork_dll_does_not_load_the_constructor_is_unavailable() {
    const NAME: &str = "when_computenetwork_dll_does_not_load_the_constructor_is_unavailable";
    if std::env::var_os(SHIM_ABSENT_ENV).is_some() {
        assert_unavailable(HcnClient::new().unwrap_err());
        return;
    }
    if !under_wine() {
        // On Windows the constructor test above meets whichever case the host is.
        return;
    }
    let output = Command::new(std::env::current_exe().expect("the test executable"))
        .args([NAME, "--exact", "--nocapture"])
        .env(SHIM_ABSENT_ENV, "1")
        .output()
        .expect("start the child");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("test result: ok. 1 passed"),
        "the child without computenetwork.dll: {}\n{stdout}\n{stderr}",
        output.status
    );
    assert!(
        stderr.contains("computenetwork.dll: cannot load it"),
        "{stderr}"
    );
}

#[test]
fn the_executable_does_not_import_computenetwork_dll() {
    let exe = std::env::current_exe().expect("the test executable");
    let image = std::fs::read(&exe).expect("read the test executable");
    let imports = imported_dlls(&image);
    assert!(
        imports.iter().any(|dll| dll == "kernel32.dll"),
        "the import table was read: {imports:?}"
    );
    assert!(
        !imports.iter().any(|dll| dll == "computenetwork.dll"),
        "{} imports computenetwork.dll statically: {imports:?}",
        exe.display()
    );
}

/// The names (lower case) of the DLLs a PE32+ image imports, from its import directory, and of
/// those it delay-loads.
fn imported_dlls(image: &[u8]) -> Vec<String> {
    let u16_at = |at: usize| u16::from_le_bytes([image[at], image[at + 1]]);
    let u32_at = |at: usize| u32::from_le_bytes(image[at..at + 4].try_into().expect("4 bytes"));
    let pe = u32_at(0x3C) as usize;
    assert_eq!(&image[pe..pe + 4], b"PE\0\0", "a PE image");
    let coff = pe + 4;
    let sections = usize::from(u16_at(coff + 2));
    let optional = coff + 20;
    assert_eq!(u16_at(optional), 0x20B, "a PE32+ optional header");
    let section_table = optional + usize::from(u16_at(coff + 16));
    // File offset of a relative virtual address, through the section that holds it.
    let offset = |rva: u32| -> usize {
        (0..sections)
            .map(|i| section_table + 40 * i)
            .find_map(|section| {
                let start = u32_at(section + 12);
                let size = u32_at(section + 8).max(u32_at(section + 16));
                (start..start + size)
                    .contains(&rva)
                    .then(|| (rva - start + u32_at(section + 20)) as usize)
            })
            .expect("the address lies in a section")
    };
    let name = |rva: u32| {
        let start = offset(rva);
        let len = image[start..].iter().position(|&b| b == 0).expect("NUL");
        String::from_utf8_lossy(&image[start..start + len]).to_lowercase()
    };
    let mut dlls = Vec::new();
    // Data directories 1 (imports: 20-byte descriptors, name at +12) and 13 (delay-load
    // imports: 32-byte descriptors, name at +4); each list ends with a zeroed descriptor.
    for (directory, size, name_at) in [(1, 20, 12), (13, 32, 4)] {
        let rva = u32_at(optional + 112 + 8 * directory);
        if rva == 0 {
            continue;
        }
        let mut descriptor = offset(rva);
        while u32_at(descriptor + name_at) != 0 {
            dlls.push(name(u32_at(descriptor + name_at)));
            descriptor += size;
        }
    }
    dlls
}
