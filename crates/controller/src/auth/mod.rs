//! [`TokenReviewAuthenticator`]: the controller's [`Authenticator`]. An agent presents its
//! ServiceAccount token; the API server says whose it is (a TokenReview,
//! `authentication.k8s.io/v1`, [`controlplane::token_review`]), and the controller binds an agent's token to the Node its Pod
//! runs on:
//!
//! - from the bound token's extra `authentication.kubernetes.io/node-name` (Kubernetes ≥ 1.32
//!   adds it to the token kubelet mounts into a Pod);
//! - else from `authentication.kubernetes.io/pod-name` and `pod-uid`: that Pod, in the
//!   ServiceAccount's Namespace, read from the API server (it must still have that uid), and
//!   its `spec.nodeName`;
//! - else no Node.
//!
//! A token the API server does not accept is [`AuthError::Unauthenticated`] with its reason; an
//! API server that fails or does not answer within [`REVIEW_TIMEOUT`] is
//! [`AuthError::Unavailable`]. A token of any other user is authenticated but bound to no Node
//! (`node: None`), so the server refuses it every span (permission denied): it is a real
//! user, only not an agent, and its Pod's Node is not looked at — another workload's token
//! must not open its Node's span.
//!
//! Accepted agents' answers are kept briefly ([`cache`]), keyed by the token's SHA-256; refused
//! tokens are never kept, so they cannot push agents out. Logs name a token by a prefix of its
//! digest, never by the token.

mod cache;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use controlplane::auth::AuthFuture;
use controlplane::token_review::token_user;
use controlplane::{AuthError, Authenticator, Watcher};
use k8s_openapi::api::core::v1::Pod;
use kube::{Api, Client};

use cache::{AnswerCache, TokenDigest};

/// The Namespace of the agents' ServiceAccount in build/yamls.
pub const AGENT_NAMESPACE: &str = "kube-system";
/// The agents' ServiceAccount in build/yamls.
pub const AGENT_SERVICE_ACCOUNT: &str = "antrea-agent";

/// How long an accepted agent's answer is kept by default.
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(10);
/// How many answers are kept at most (several per Node while its agent's token rotates).
pub const CACHE_CAPACITY: usize = 8192;
/// How long one authentication (TokenReview, then the Pod if needed) may take.
pub const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);

const NODE_NAME: &str = "authentication.kubernetes.io/node-name";
const POD_NAME: &str = "authentication.kubernetes.io/pod-name";
const POD_UID: &str = "authentication.kubernetes.io/pod-uid";

/// Authenticates watchers' tokens through the API server's TokenReview.
pub struct TokenReviewAuthenticator {
    client: Client,
    agent_namespace: String,
    agent_user: String,
    cache: Mutex<AnswerCache>,
}

impl fmt::Debug for TokenReviewAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenReviewAuthenticator")
            .field("agent_user", &self.agent_user)
            .field("cached_answers", &self.cache().len())
            .finish_non_exhaustive()
    }
}

impl TokenReviewAuthenticator {
    /// Asks the API server `client` talks to; agents are the ServiceAccount
    /// [`AGENT_NAMESPACE`]/[`AGENT_SERVICE_ACCOUNT`], answers are kept [`DEFAULT_CACHE_TTL`].
    pub fn new(client: Client) -> TokenReviewAuthenticator {
        TokenReviewAuthenticator {
            client,
            agent_namespace: AGENT_NAMESPACE.to_owned(),
            agent_user: service_account_user(AGENT_NAMESPACE, AGENT_SERVICE_ACCOUNT),
            cache: Mutex::new(AnswerCache::new(DEFAULT_CACHE_TTL, CACHE_CAPACITY)),
        }
    }

    /// Agents are the ServiceAccount `namespace/name` instead.
    pub fn with_agent_service_account(
        mut self,
        namespace: &str,
        name: &str,
    ) -> TokenReviewAuthenticator {
        self.agent_namespace = namespace.to_owned();
        self.agent_user = service_account_user(namespace, name);
        self
    }

    /// Accepted agents' answers are kept for `ttl` (zero: every token is reviewed every time).
    pub fn with_cache_ttl(self, ttl: Duration) -> TokenReviewAuthenticator {
        TokenReviewAuthenticator {
            cache: Mutex::new(AnswerCache::new(ttl, CACHE_CAPACITY)),
            ..self
        }
    }

    /// The agents' user name, e.g. `system:serviceaccount:kube-system:antrea-agent`.
    pub fn agent_user(&self) -> &str {
        &self.agent_user
    }

    async fn authenticate_token(&self, token: &str) -> Result<Watcher, AuthError> {
        let digest = TokenDigest::of(token);
        if let Some(watcher) = self.cache().get(&digest, Instant::now()) {
            tracing::debug!(token = %digest, user = watcher.user, node = ?watcher.node, "known agent token");
            return Ok(watcher);
        }
        let answer = tokio::time::timeout(REVIEW_TIMEOUT, self.review(token))
            .await
            .unwrap_or_else(|_| {
                Err(AuthError::Unavailable(format!(
                    "the API server did not answer within {REVIEW_TIMEOUT:?}"
                )))
            });
        match &answer {
            Ok(watcher) if watcher.user == self.agent_user => {
                tracing::debug!(token = %digest, node = ?watcher.node, "agent token accepted");
                self.cache().insert(digest, watcher.clone(), Instant::now());
            }
            Ok(watcher) => tracing::info!(
                token = %digest,
                user = watcher.user,
                "not an agent's token: {} is not {}; bound to no Node",
                watcher.user,
                self.agent_user
            ),
            Err(AuthError::Unauthenticated(why)) => {
                tracing::info!(token = %digest, "token refused: {why}")
            }
            Err(AuthError::Unavailable(why)) => {
                tracing::warn!(token = %digest, "token not checked: {why}")
            }
        }
        answer
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, AnswerCache> {
        self.cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Who holds `token`, and for an agent, its Node.
    async fn review(&self, token: &str) -> Result<Watcher, AuthError> {
        let user = token_user(&self.client, token).await?;
        let username = user.username.unwrap_or_default();
        if username != self.agent_user {
            return Ok(Watcher {
                user: username,
                node: None,
            });
        }
        let node = self.node_of(&user.extra.unwrap_or_default()).await?;
        Ok(Watcher {
            user: username,
            node,
        })
    }

    /// The Node an agent's token is bound to, from its extras (see the module's comment).
    async fn node_of(
        &self,
        extra: &BTreeMap<String, Vec<String>>,
    ) -> Result<Option<String>, AuthError> {
        let one = |key: &str| {
            extra
                .get(key)
                .and_then(|values| values.first())
                .filter(|value| !value.is_empty())
        };
        if let Some(node) = one(NODE_NAME) {
            return Ok(Some(node.clone()));
        }
        let Some(pod_name) = one(POD_NAME) else {
            return Ok(None);
        };
        let pod = format!("{}/{pod_name}", self.agent_namespace);
        let Some(uid) = one(POD_UID) else {
            return Err(AuthError::Unauthenticated(format!(
                "the token names Pod {pod} without its uid"
            )));
        };
        let stored = Api::<Pod>::namespaced(self.client.clone(), &self.agent_namespace)
            .get_opt(pod_name)
            .await
            .map_err(|error| {
                AuthError::Unavailable(format!("cannot read the token's Pod {pod}: {error}"))
            })?
            .ok_or_else(|| {
                AuthError::Unauthenticated(format!("the token's Pod {pod} does not exist"))
            })?;
        if stored.metadata.uid.as_ref() != Some(uid) {
            return Err(AuthError::Unauthenticated(format!(
                "the token's Pod {pod} (uid {uid}) was replaced by another of that name"
            )));
        }
        Ok(stored
            .spec
            .and_then(|spec| spec.node_name)
            .filter(|node| !node.is_empty()))
    }
}

impl Authenticator for TokenReviewAuthenticator {
    fn authenticate<'a>(&'a self, token: &'a str) -> AuthFuture<'a> {
        Box::pin(self.authenticate_token(token))
    }
}

fn service_account_user(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}
