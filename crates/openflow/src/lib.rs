//! OpenFlow for the agent: the wire codec (OpenFlow 1.5 with the Nicira and ONF extensions Open
//! vSwitch implements), the `ovs-ofctl` text syntax for flows, groups and actions, and an async
//! connection to a bridge's management socket.
//!
//! The codec follows one pattern throughout: a high-level type (`FlowMod`, `Match`, `Action`, …)
//! with `emit` (append its wire form to a buffer) and `parse` (decode it from a byte slice,
//! returning a typed [`DecodeError`], never panicking on malformed input).
//!
//! Why OpenFlow 1.5: the pipeline needs packet-out with pipeline fields (OF1.5 puts the packet-out
//! metadata in a match), group buckets with ids and the `selection_method` property (OF1.5 group
//! format), and matches OVS dumps in the same syntax Antrea's tooling uses. Hello negotiation still
//! understands 1.3 peers, and reports clearly that 1.5 is required.
//!
//! One exception: [`of10`] sets a port's `no-flood` flag over a short OpenFlow 1.0 connection,
//! the only version in which Open vSwitch honours that bit.

pub mod action;
pub mod conn;
pub mod error;
pub mod header;
pub mod message;
pub mod msg;
pub mod of10;
pub mod oxm;
pub mod text;

pub use error::{DecodeError, EncodeError, TextError};
pub use header::{Header, OFP_VERSION_1_3, OFP_VERSION_1_5};
pub use message::Message;
