//! The two questions put to the API server through the agent's kube client: a TokenReview
//! (`authentication.k8s.io/v1`, [`controlplane::token_review`]) for who holds a token, then a
//! SubjectAccessReview (`authorization.k8s.io/v1`) for whether that user may `get` the
//! non-resource path.

use controlplane::AuthError;
use controlplane::token_review::token_user;
use k8s_openapi::api::authentication::v1::UserInfo;
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::Api;
use kube::api::PostParams;

use super::Verdict;

/// Who holds `token`, and whether they may `get` `path`.
pub async fn review(client: &kube::Client, token: &str, path: &str) -> Verdict {
    let user = match token_user(client, token).await {
        Ok(user) => user,
        Err(AuthError::Unauthenticated(why)) => return Verdict::Unauthenticated(why),
        Err(AuthError::Unavailable(why)) => return Verdict::Unavailable(why),
    };
    authorize(client, user, path).await
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
