//! The two review APIs an API server answers for others that delegate to it (the kubelet, the
//! agent, the controller): TokenReview (`authentication.k8s.io/v1`, [`token`]) — who holds a
//! bearer token the fake issued (bound to a Pod or not) or was given — and SubjectAccessReview
//! (`authorization.k8s.io/v1`, [`access`]) — whether a user may do something, decided from the
//! stored ClusterRoles and ClusterRoleBindings as Kubernetes' RBAC authorizer decides it; and
//! the TokenRequest subresource that issues the tokens ([`token_request`]).

pub mod access;
pub mod token;
pub mod token_request;

pub use token::{BoundPod, TokenBook, TokenUser};
