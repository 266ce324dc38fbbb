//! The packets the agent reads and writes itself, smoltcp-style: [`frame`] parses an Ethernet
//! frame's IPv4 and transport headers into a [`Frame`] (never panicking on any bytes) and
//! emits headers back, [`checksum`] is the Internet checksum, and [`reject`] builds the answer
//! a Service without endpoints gives a new connection: a TCP reset, or an ICMP port
//! unreachable for UDP and SCTP, from the Service's address to the client.

pub mod checksum;
pub mod error;
pub mod frame;
pub mod reject;

pub use error::PacketError;
pub use frame::{Frame, Ipv4Header, Transport};
pub use reject::reject_reply;
