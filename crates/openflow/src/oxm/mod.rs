//! Match fields: the field table (OXM/NXM class, number, width, names, prerequisites), the
//! [`Match`] type with its `ofp_match` wire form, subfield references (`NXM_NX_REG0[0..15]`),
//! port numbers, and the `ovs-ofctl` text syntax for all of them.

pub mod field;
pub mod flow_match;
pub mod port;
pub mod subfield;
pub mod text;
pub mod tlv;
pub mod value;

pub use field::{FIELDS, Field, FieldDef};
pub use flow_match::{Match, MatchEntry};
pub use port::PortNo;
pub use subfield::Subfield;
