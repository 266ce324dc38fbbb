//! OpenFlow 1.5 messages, one module per message family. Each type implements
//! [`crate::Message`].

pub mod any;
pub mod barrier;
pub mod bundle;
pub mod config;
pub mod ct_flush;
pub mod echo;
pub mod error;
pub mod features;
pub mod flow_mod;
pub mod flow_stats;
pub mod group_chunks;
pub mod group_mod;
pub mod hello;
pub mod meter_features;
pub mod meter_mod;
pub mod multipart;
pub mod packet_in;
pub mod packet_out;
pub mod port;
pub mod property;
pub mod role;
