//! The two questions put to the API server through the agent's kube client: a TokenReview
//! (`authentication.k8s.io/v1`) for who holds a token, then a SubjectAccessReview
//! (`authorization.k8s.io/v1`) for whether that user may `get` the non-resource path.

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec, UserInfo};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;

use super::Verdict;

/// Who holds `token`, and whether they may `get` `path`.
pub async fn review(client: &kube::Client, token: &str, path: &str) -> Verdict {
    let user = match authenticate(client, token).await {
        Ok(user) => user,
        Err(verdict) => return verdict,
    };
    authorize(client, user, path).await
}

async fn authenticate(client: &kube::Client, token: &str) -> Result<UserInfo, Verdict> {
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
        .map_err(|error| Verdict::Unavailable(format!("TokenReview failed: {error}")))?;
    let status = answer.status.unwrap_or_default();
    match (status.authenticated, status.user) {
        (Some(true), Some(user)) if user.username.as_deref().is_some_and(|u| !u.is_empty()) => {
            Ok(user)
        }
        _ => Err(Verdict::Unauthenticated(match status.error {
            Some(error) if !error.is_empty() => format!("the token was not accepted: {error}"),
            _ => "the token was not accepted".to_owned(),
        })),
    }
}

async fn authorize(client: &kube::Client, user: UserInfo, path: &str) -> Verdict {
    let username = user.username.unwrap_or_default();
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(username.clone()),
            uid: user.uid,
            groups: user.groups,
            extra: user.extra,
            non_resource_attributes: Some(NonResourceAttributes {
                path: Some(path.to_owned()),
                verb: Some("get".to_owned()),
            }),
            resource_attributes: None,
        },
        ..SubjectAccessReview::default()
    };
    let answer = match Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
    {
        Ok(answer) => answer,
        Err(error) => return Verdict::Unavailable(format!("SubjectAccessReview failed: {error}")),
    };
    let status = answer.status.unwrap_or_default();
    if status.allowed {
        Verdict::Allowed
    } else {
        let reason = status
            .reason
            .filter(|r| !r.is_empty())
            .map(|r| format!(": {r}"))
            .unwrap_or_default();
        Verdict::Forbidden(format!("user {username:?} may not get {path}{reason}"))
    }
}
