//! TokenReview: the tokens the fake knows (ServiceAccount tokens it issued, bound to a Pod or
//! not, and user tokens it was given) and the review document answered for one.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};

use crate::http::Failure;

/// The audience every token is issued for, and what a review without audiences is checked against.
pub const API_AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";

/// Who holds a token: `status.user` of a TokenReview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenUser {
    /// `username`, e.g. `system:serviceaccount:kube-system:antrea-agent`.
    pub username: String,
    /// `uid`.
    pub uid: String,
    /// `groups`.
    pub groups: Vec<String>,
    /// `extra`.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl TokenUser {
    /// The user of a ServiceAccount token, with the groups Kubernetes gives every one.
    pub fn service_account(namespace: &str, name: &str, uid: &str, token_id: &str) -> TokenUser {
        TokenUser {
            username: format!("system:serviceaccount:{namespace}:{name}"),
            uid: uid.to_owned(),
            groups: vec![
                "system:serviceaccounts".to_owned(),
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated".to_owned(),
            ],
            extra: BTreeMap::from([(
                "authentication.kubernetes.io/credential-id".to_owned(),
                vec![format!("JTI={token_id}")],
            )]),
        }
    }

    /// A user with `groups` (and `system:authenticated`, as every authenticated user has).
    pub fn user(username: &str, groups: &[&str]) -> TokenUser {
        let mut all: Vec<String> = groups.iter().map(|g| (*g).to_owned()).collect();
        if !all.iter().any(|g| g == "system:authenticated") {
            all.push("system:authenticated".to_owned());
        }
        TokenUser {
            username: username.to_owned(),
            uid: String::new(),
            groups: all,
            extra: BTreeMap::new(),
        }
    }

    fn to_json(&self) -> Value {
        let mut user = json!({"username": self.username, "groups": self.groups});
        if !self.uid.is_empty() {
            user["uid"] = json!(self.uid);
        }
        if !self.extra.is_empty() {
            user["extra"] = json!(self.extra);
        }
        user
    }
}

/// The Pod a bound ServiceAccount token was issued for: the token authenticates only while a
/// Pod of that name and uid exists, as the API server checks a bound token's `pod` claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundPod {
    /// The Pod's (and its ServiceAccount's) Namespace.
    pub namespace: String,
    /// The Pod's name.
    pub name: String,
    /// The uid of the Pod the token was issued for.
    pub uid: String,
}

/// A known token: who holds it and, for a bound token, the Pod it depends on.
#[derive(Debug)]
struct Entry {
    user: TokenUser,
    bound_to: Option<BoundPod>,
}

/// The tokens the fake accepts.
#[derive(Debug, Default)]
pub struct TokenBook {
    tokens: HashMap<String, Entry>,
    issued: u64,
}

impl TokenBook {
    /// Accepts `token` as `user` from now on.
    pub fn add(&mut self, token: &str, user: TokenUser) {
        self.tokens.insert(
            token.to_owned(),
            Entry {
                user,
                bound_to: None,
            },
        );
    }

    /// Accepts `token` as `user` while the Pod `bound_to` exists (same name, same uid).
    pub fn add_bound(&mut self, token: &str, user: TokenUser, bound_to: BoundPod) {
        self.tokens.insert(
            token.to_owned(),
            Entry {
                user,
                bound_to: Some(bound_to),
            },
        );
    }

    /// Accepts `token` no more; whether it was known.
    pub fn revoke(&mut self, token: &str) -> bool {
        self.tokens.remove(token).is_some()
    }

    /// A new, unique token id (the JWT id of a real ServiceAccount token).
    pub fn next_id(&mut self) -> String {
        self.issued += 1;
        format!("fakeapi-token-{:08}", self.issued)
    }

    /// The TokenReview answered for the POSTed `review` (201 with `status` filled in);
    /// `pod_uid(namespace, name)` is the uid of the stored Pod of that name, if there is one.
    pub fn review(
        &self,
        review: &Value,
        pod_uid: impl Fn(&str, &str) -> Option<String>,
    ) -> Result<Value, Failure> {
        let spec = review.get("spec").cloned().unwrap_or_else(|| json!({}));
        let token = spec.get("token").and_then(Value::as_str).unwrap_or("");
        if token.is_empty() {
            return Err(Failure::new(
                http::StatusCode::BAD_REQUEST,
                "BadRequest",
                "token is required for TokenReview in authentication",
            ));
        }
        let audiences: Vec<&str> = spec
            .get("audiences")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let status = match self.tokens.get(token) {
            None => json!({"user": {}, "error": "[invalid bearer token, token lookup failed]"}),
            Some(_) if !audiences.is_empty() && !audiences.contains(&API_AUDIENCE) => json!({
                "user": {},
                "error": format!("[invalid bearer token, token audiences {API_AUDIENCE:?} is invalid for the target audiences {audiences:?}]"),
            }),
            Some(Entry {
                bound_to: Some(pod),
                ..
            }) if pod_uid(&pod.namespace, &pod.name).as_deref() != Some(pod.uid.as_str()) => {
                json!({
                    "user": {},
                    "error": "[invalid bearer token, service account token has been invalidated]",
                })
            }
            Some(Entry { user, .. }) => json!({
                "authenticated": true,
                "user": user.to_json(),
                "audiences": [API_AUDIENCE],
            }),
        };
        Ok(json!({
            "kind": "TokenReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": status,
        }))
    }
}
