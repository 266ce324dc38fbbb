//! `antctl`: the operator's view of a running agent, read from its API ([`crate::apiserver`])
//! — the NetworkPolicy rules enforced on the Node or applied to one Pod, with the flows behind
//! each rule and its packet and byte counters; the bridge's tables with their flow counts; the
//! Pods' interfaces; the bridge's flows by table name; a packet traced through the bridge; the
//! feature gates; the versions; a support bundle. It speaks HTTPS with a bearer token
//! ([`credentials`]).

mod client;
mod columns;
mod credentials;
mod feature_gate_table;
mod flow_lines;
mod pipeline_table;
mod pod_interface_table;
mod table;
mod trace_text;

pub use client::{ClientError, get, get_bytes};
pub use credentials::{CredentialSources, Credentials, SERVICE_ACCOUNT_TOKEN};
pub use feature_gate_table::feature_gate_table;
pub use flow_lines::flow_lines;
pub use pipeline_table::pipeline_table;
pub use pod_interface_table::pod_interface_table;
pub use table::policy_table;
pub use trace_text::trace_text;
