//! `antrea-lab`: see [`lab::cli`]. The lab is made of Linux network namespaces, so on other
//! platforms the binary only says so.

use std::process::ExitCode;

#[cfg(target_os = "linux")]
fn main() -> ExitCode {
    lab::cli::main()
}

#[cfg(not(target_os = "linux"))]
fn main() -> ExitCode {
    eprintln!(
        "antrea-lab: the lab emulates Nodes with Linux network namespaces and runs on Linux only"
    );
    ExitCode::from(2)
}
