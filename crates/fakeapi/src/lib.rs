//! An in-process fake Kubernetes API server speaking the real Kubernetes HTTP API, for kube-rs
//! clients in tests and in the lab.
//!
//! Objects of every kind are stored as JSON under (group/version/resource, namespace, name) with
//! one global, monotonic resourceVersion. The server answers list (paged, label/field selectors),
//! get, watch (replay from a resourceVersion, bookmarks, 410 Gone after compaction), create,
//! replace, patch (merge, strategic-as-merge, JSON patch) and delete, either in-process as a
//! `tower::Service` ([`FakeApiServer::service`]) or over TCP ([`FakeApiServer::serve_tcp`]).
//! Control hooks let tests seed objects, simulate outages, force compaction and inspect the
//! request log. It also answers TokenReview and SubjectAccessReview (tokens it issued or was
//! given; the stored ClusterRoles and ClusterRoleBindings). For kubectl it serves short names
//! and categories in discovery, OpenAPI v3 and v2 documents, `fieldValidation`, strategic merge
//! patch and server-side Tables. An EndpointSlice controller, as kube-controller-manager runs one, can
//! keep the slices of selecting Services ([`FakeApiServer::start_endpointslice_controller`]). See `docs/fakeapi.md` for what is implemented and the
//! deliberate gaps.

mod endpointslice;
mod error;
mod http;
mod openapi;
mod patch;
mod resource;
mod review;
mod selector;
mod server;
mod store;
mod table;
mod transport;

pub use endpointslice::ControllerError;
pub use error::{StoreError, Unavailable};
pub use http::ResponseBody;
pub use patch::{PatchError, PatchType};
pub use resource::ResourceType;
pub use review::TokenUser;
pub use selector::{FieldSelector, LabelSelector, ObjectFilter, SelectorError};
pub use server::{FakeApiServer, FakeApiServerBuilder, RecordedRequest};
#[cfg(unix)]
pub use transport::UnixServer;
pub use transport::{FakeService, TcpServer};
