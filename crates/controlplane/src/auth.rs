//! [`Authenticator`]: who holds a watcher's bearer token, and so which Node's span the watcher
//! may have. The controller's implementation asks the API server (a TokenReview); tests may
//! give their own.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

/// Who a token belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watcher {
    /// The authenticated user, e.g. `system:serviceaccount:kube-system:antrea-agent`.
    pub user: String,
    /// The Node the token is bound to (the Node its Pod runs on); `None`: bound to no Node,
    /// so it may watch no Node's span.
    pub node: Option<String>,
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// The token is unknown, expired, or not an agent's (gRPC `UNAUTHENTICATED`).
    Unauthenticated(String),
    /// The token could not be checked now (the API server failed; gRPC `UNAVAILABLE`).
    Unavailable(String),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::Unauthenticated(why) => write!(f, "not authenticated: {why}"),
            AuthError::Unavailable(why) => write!(f, "authentication unavailable: {why}"),
        }
    }
}

impl std::error::Error for AuthError {}

/// A boxed authentication answer.
pub type AuthFuture<'a> = Pin<Box<dyn Future<Output = Result<Watcher, AuthError>> + Send + 'a>>;

/// Tells who holds a bearer token.
pub trait Authenticator: Send + Sync + 'static {
    /// Who holds `token`, or why it is refused.
    fn authenticate<'a>(&'a self, token: &'a str) -> AuthFuture<'a>;
}
