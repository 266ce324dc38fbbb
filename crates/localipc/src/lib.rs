//! Local IPC endpoints shared by every client and server of the agent: OVSDB, OpenFlow and the
//! CNI socket. An [`Endpoint`] names a place (`unix:/path`, `tcp:host:port`,
//! `npipe:\\.\pipe\name`); [`dial`] opens a byte stream to it and [`listen`] serves it, letting
//! in only the callers an [`Access`] names.

mod access;
mod endpoint;
#[cfg(windows)]
mod ffi;
mod listen;
mod stream;

pub use access::Access;
pub use endpoint::{Endpoint, EndpointParseError, ovs_pipe_name};
#[cfg(windows)]
pub use ffi::dacl_sddl;
pub use listen::{Listener, listen};
pub use stream::{AsyncReadWrite, Stream, dial};
