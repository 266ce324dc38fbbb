//! [`token_user`]: who holds a bearer token, asked of the API server with a TokenReview
//! (`authentication.k8s.io/v1`, no `audiences`: the API server's own). The one request both
//! antrea-controller's watcher authentication and the agent API's authentication put; what
//! each does with the user (binding to a Node, authorization, caching) stays with it.

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, UserInfo};
use kube::Api;
use kube::api::PostParams;

use crate::AuthError;

/// The user the API server says holds `token`: [`AuthError::Unauthenticated`] with the API
/// server's reason when it does not accept the token (or names no user),
/// [`AuthError::Unavailable`] when it cannot be asked.
pub async fn token_user(client: &kube::Client, token: &str) -> Result<UserInfo, AuthError> {
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: Some(token.to_owned()),
            audiences: None,
        },
        ..TokenReview::default()
    };
    let answer = Api::<TokenReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .map_err(|error| AuthError::Unavailable(format!("TokenReview failed: {error}")))?;
    let status = answer.status.unwrap_or_default();
    let user = status
        .user
        .filter(|user| user.username.as_deref().is_some_and(|u| !u.is_empty()));
    match (status.authenticated, user) {
        (Some(true), Some(user)) => Ok(user),
        _ => Err(AuthError::Unauthenticated(
            match status.error.filter(|e| !e.is_empty()) {
                Some(error) => format!("the API server refused the token: {error}"),
                None => "the API server refused the token".to_owned(),
            },
        )),
    }
}
