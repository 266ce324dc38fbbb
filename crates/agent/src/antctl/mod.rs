//! `antctl`: the operator's view of a running agent, read from its API ([`crate::apiserver`])
//! — the NetworkPolicy rules enforced on the Node or applied to one Pod, with the flows behind
//! each rule and its packet and byte counters; the bridge's tables with their flow counts. It
//! speaks HTTPS with a bearer token ([`credentials`]).

mod client;
mod credentials;
mod pipeline_table;
mod table;

pub use client::{ClientError, get};
pub use credentials::{CredentialSources, Credentials, SERVICE_ACCOUNT_TOKEN};
pub use pipeline_table::pipeline_table;
pub use table::policy_table;
