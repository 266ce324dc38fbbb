//! Compiles the CNI protocol with protox (pure Rust, no protoc) and generates tonic code.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let files = protox::compile(["proto/cni.proto", "proto/lifecycle.proto"], ["proto"])?;
    tonic_prost_build::configure()
        .include_file("protocol.rs")
        .compile_fds(files)?;
    Ok(())
}
