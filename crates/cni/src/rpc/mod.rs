//! Antrea's CNI gRPC protocol (`antrea_io.antrea.pkg.apis.cni.v1beta1.Cni`), our STATUS/GC
//! extension service (`antrea_rs.cni.v1alpha1.CniLifecycle`), the plugin-side client and the
//! agent-side server pieces.

mod client;
mod request;
mod server;

/// Code generated from `proto/` by the build script, one module per protobuf package.
#[allow(missing_docs, missing_debug_implementations, clippy::all)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/protocol.rs"));
}

/// Generated messages and the `Cni` client/server of Antrea's protocol.
pub use generated::antrea_io::antrea::pkg::apis::cni::v1beta1 as pb;

/// Generated `CniLifecycle` client/server (STATUS and GC).
pub use generated::antrea_rs::cni::v1alpha1 as lifecycle;

pub use client::{AgentClient, CallError, Command, DEFAULT_TIMEOUT};
pub use request::{CmdRequest, error_response, result_response};
pub use server::{serve, serve_on};

/// Antrea's CNI gRPC API version, named in incompatible-API errors.
pub const ANTREA_CNI_API_VERSION: &str = "1.0.0-beta.1";
