//! Typed helpers for the `Open_vSwitch` database (vswitch.ovsschema): bridges, ports and
//! interfaces, built on [`crate::Client`] transactions and monitors.

mod client;
mod ofport_watch;
mod rows;
mod spec;

pub use client::VswitchClient;
pub use ofport_watch::OfportWatch;
pub use rows::{BridgeRow, InterfaceRow, PortRow};
pub use spec::{BridgeSpec, CreatedPort, FailMode, PortSpec};

/// The database name.
pub const DATABASE: &str = "Open_vSwitch";

/// The `Open_vSwitch` database endpoint of an Open vSwitch whose run directory is `run_dir`:
/// the named pipe `\\.\pipe\<run_dir without backslashes>db.sock` on Windows (where OVS serves
/// its sockets as pipes), the Unix socket `<run_dir>/db.sock` elsewhere.
pub fn db_endpoint(run_dir: &str) -> localipc::Endpoint {
    if cfg!(windows) {
        localipc::Endpoint::NamedPipe(localipc::ovs_pipe_name(run_dir, "db.sock"))
    } else {
        localipc::Endpoint::Unix(std::path::Path::new(run_dir).join("db.sock"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_endpoint_follows_the_platform() {
        if cfg!(windows) {
            let e = db_endpoint(r"C:\openvswitch\var\run\openvswitch");
            assert_eq!(
                e.to_string(),
                r"npipe:\\.\pipe\C:openvswitchvarrunopenvswitchdb.sock"
            );
        } else {
            assert_eq!(
                db_endpoint("/var/run/openvswitch").to_string(),
                "unix:/var/run/openvswitch/db.sock"
            );
        }
    }
}
