//! CNI for antrea-rs: the spec's types and version conversion ([`spec`]), Antrea's CNI gRPC
//! protocol with its client and server pieces ([`rpc`]), and the `antrea` plugin binary's logic
//! ([`plugin`], [`install`]).

pub mod install;
pub mod plugin;
pub mod rpc;
pub mod spec;
