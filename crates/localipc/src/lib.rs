//! Local IPC endpoints shared by every client and server of the agent: OVSDB, OpenFlow and the
//! CNI socket. An [`Endpoint`] names a place (`unix:/path`, `tcp:host:port`,
//! `npipe:\\.\pipe\name`); [`dial`] opens a byte stream to it.

mod endpoint;
mod stream;

pub use endpoint::{Endpoint, EndpointParseError, ovs_pipe_name};
pub use stream::{Stream, dial};
