//! Who may read the agent API: a bearer token is required on every path but the probes. The
//! agent's own loopback token (see [`super::local_access`]) is accepted for every path; any other
//! token is checked with the API server, a TokenReview for who it is and a SubjectAccessReview
//! for whether that user may `get` the path (`nonResourceAttributes`, as the kubelet and Antrea
//! do), the answers kept briefly ([`cache`]). Without an API server (the cluster-directory
//! mode) only the loopback token is accepted.

mod cache;
mod review;

use std::sync::{Mutex, OnceLock, PoisonError};

use http::{HeaderMap, header};
use ring::digest;

use cache::{CacheKey, VerdictCache};

/// What a request's credentials allow on one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Serve it.
    Allowed,
    /// 401: no token, or one nobody vouches for.
    Unauthenticated(String),
    /// 403: a known user without permission for the path.
    Forbidden(String),
    /// 503: the API server could not be asked (not connected yet, or it failed).
    Unavailable(String),
}

/// Where tokens other than the loopback one are checked.
enum Authority {
    /// No API server: only the loopback token.
    None,
    /// The API server, once the agent's client is connected.
    ApiServer(OnceLock<kube::Client>),
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Authority::None => f.write_str("None"),
            Authority::ApiServer(slot) => f
                .debug_struct("ApiServer")
                .field("connected", &slot.get().is_some())
                .finish(),
        }
    }
}

/// The API's authentication and authorization.
#[derive(Debug)]
pub struct ApiAuth {
    loopback_token: digest::Digest,
    authority: Authority,
    cache: Mutex<VerdictCache>,
}

impl ApiAuth {
    /// Only `loopback_token` is accepted (no API server to ask).
    pub fn loopback_only(loopback_token: &str) -> ApiAuth {
        ApiAuth::new(loopback_token, Authority::None)
    }

    /// `loopback_token`, and tokens the API server vouches for once
    /// [`ApiAuth::use_client`] has given its client; until then those get 503.
    pub fn with_api_server(loopback_token: &str) -> ApiAuth {
        ApiAuth::new(loopback_token, Authority::ApiServer(OnceLock::new()))
    }

    fn new(loopback_token: &str, authority: Authority) -> ApiAuth {
        ApiAuth {
            loopback_token: digest::digest(&digest::SHA256, loopback_token.as_bytes()),
            authority,
            cache: Mutex::new(VerdictCache::default()),
        }
    }

    /// From now on tokens are reviewed through `client` (a no-op without an API server, or
    /// when a client was already given).
    pub fn use_client(&self, client: kube::Client) {
        if let Authority::ApiServer(slot) = &self.authority {
            let _ = slot.set(client);
        }
    }

    /// Whether the request with `headers` may `get` `path`.
    pub async fn check(&self, headers: &HeaderMap, path: &str) -> Verdict {
        let Some(token) = bearer_token(headers) else {
            return Verdict::Unauthenticated(
                "no credentials: send Authorization: Bearer <token>".to_owned(),
            );
        };
        let token_digest = digest::digest(&digest::SHA256, token.as_bytes());
        if same_digest(&token_digest, &self.loopback_token) {
            return Verdict::Allowed;
        }
        let client = match &self.authority {
            Authority::None => {
                return Verdict::Unauthenticated(
                    "the token is not this agent's loopback token, and without an API server no other token is accepted"
                        .to_owned(),
                );
            }
            Authority::ApiServer(slot) => match slot.get() {
                Some(client) => client,
                None => {
                    return Verdict::Unavailable(
                        "the agent is not connected to the API server yet; only its loopback token is accepted"
                            .to_owned(),
                    );
                }
            },
        };
        let key = CacheKey::new(&token_digest, path);
        if let Some(verdict) = self.cache().get(&key) {
            return verdict;
        }
        let verdict = review::review(client, token, path).await;
        if !matches!(verdict, Verdict::Unavailable(_)) {
            self.cache().put(key, verdict.clone());
        }
        verdict
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, VerdictCache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The token of an `Authorization: Bearer <token>` header.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Compares two digests without an early exit on the first differing byte.
fn same_digest(a: &digest::Digest, b: &digest::Digest) -> bool {
    let (a, b) = (a.as_ref(), b.as_ref());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::AUTHORIZATION, authorization.parse().unwrap());
        headers
    }

    #[test]
    fn only_a_bearer_header_carries_a_token() {
        assert_eq!(bearer_token(&headers("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&headers("bearer  abc ")), Some("abc"));
        assert_eq!(bearer_token(&headers("Basic abc")), None);
        assert_eq!(bearer_token(&headers("Bearer ")), None);
        assert_eq!(bearer_token(&HeaderMap::new()), None);
    }

    #[tokio::test]
    async fn without_an_api_server_only_the_loopback_token_passes() {
        let auth = ApiAuth::loopback_only("secret");
        assert_eq!(
            auth.check(&headers("Bearer secret"), "/metrics").await,
            Verdict::Allowed
        );
        assert!(matches!(
            auth.check(&headers("Bearer other"), "/metrics").await,
            Verdict::Unauthenticated(_)
        ));
        assert!(matches!(
            auth.check(&HeaderMap::new(), "/metrics").await,
            Verdict::Unauthenticated(_)
        ));
    }

    #[tokio::test]
    async fn before_the_client_other_tokens_wait() {
        let auth = ApiAuth::with_api_server("secret");
        assert!(matches!(
            auth.check(&headers("Bearer other"), "/metrics").await,
            Verdict::Unavailable(_)
        ));
        assert_eq!(
            auth.check(&headers("Bearer secret"), "/metrics").await,
            Verdict::Allowed
        );
    }
}
