//! TokenReview and SubjectAccessReview POSTed by the real kube-rs client over TCP, as the
//! kubelet and the agent send them: the tokens the fake issued or was given, and RBAC from the
//! stored ClusterRoles and ClusterRoleBindings.

use fakeapi::{FakeApiServer, TokenUser};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use kube::Api;
use kube::api::PostParams;

async fn client(fake: &FakeApiServer) -> (kube::Client, fakeapi::TcpServer) {
    let tcp = fake.serve_tcp().await.unwrap();
    let client = kube::Client::try_from(kube::Config::new(tcp.url().parse().unwrap())).unwrap();
    (client, tcp)
}

async fn token_review(client: &kube::Client, token: &str) -> TokenReview {
    let review = TokenReview {
        spec: TokenReviewSpec {
            token: Some(token.to_owned()),
            audiences: None,
        },
        ..TokenReview::default()
    };
    Api::<TokenReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
}

#[tokio::test]
async fn token_review_names_the_holder_of_an_issued_token() {
    let fake = FakeApiServer::new();
    let (client, _tcp) = client(&fake).await;
    let token = fake.issue_service_account_token("kube-system", "antrea-agent");
    let status = token_review(&client, &token).await.status.unwrap();
    assert_eq!(status.authenticated, Some(true));
    let user = status.user.unwrap();
    assert_eq!(
        user.username.as_deref(),
        Some("system:serviceaccount:kube-system:antrea-agent")
    );
    assert_eq!(
        user.groups.unwrap(),
        [
            "system:serviceaccounts",
            "system:serviceaccounts:kube-system",
            "system:authenticated"
        ]
    );
    assert!(
        user.extra
            .unwrap()
            .contains_key("authentication.kubernetes.io/credential-id")
    );
    assert_eq!(
        status.audiences.unwrap(),
        ["https://kubernetes.default.svc.cluster.local"]
    );

    fake.add_token("admin-token", TokenUser::user("admin", &["ops"]));
    let user = token_review(&client, "admin-token")
        .await
        .status
        .unwrap()
        .user
        .unwrap();
    assert_eq!(user.username.as_deref(), Some("admin"));

    for unknown in ["wrong", &token] {
        fake.revoke_token(&token);
        let status = token_review(&client, unknown).await.status.unwrap();
        assert_ne!(status.authenticated, Some(true), "{unknown}");
        assert!(status.error.unwrap().contains("invalid bearer token"));
        assert_eq!(status.user.unwrap().username, None);
    }

    let empty = Api::<TokenReview>::all(client.clone())
        .create(&PostParams::default(), &TokenReview::default())
        .await
        .unwrap_err();
    assert!(
        matches!(empty, kube::Error::Api(ref s) if s.code == 400),
        "{empty}"
    );
}

async fn may(client: &kube::Client, spec: SubjectAccessReviewSpec) -> (bool, Option<String>) {
    let review = SubjectAccessReview {
        spec,
        ..SubjectAccessReview::default()
    };
    let status = Api::<SubjectAccessReview>::all(client.clone())
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .unwrap();
    (status.allowed, status.reason)
}

fn non_resource(user: &str, groups: &[&str], path: &str) -> SubjectAccessReviewSpec {
    SubjectAccessReviewSpec {
        user: Some(user.to_owned()),
        groups: Some(groups.iter().map(|g| (*g).to_owned()).collect()),
        non_resource_attributes: Some(NonResourceAttributes {
            path: Some(path.to_owned()),
            verb: Some("get".to_owned()),
        }),
        ..SubjectAccessReviewSpec::default()
    }
}

#[tokio::test]
async fn subject_access_review_follows_the_stored_cluster_rbac() {
    let fake = FakeApiServer::new();
    let (client, _tcp) = client(&fake).await;
    let role: ClusterRole = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "reader"},
        "rules": [
            {"nonResourceURLs": ["/metrics", "/v1/*"], "verbs": ["get"]},
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]},
        ],
    }))
    .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "readers"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "reader"},
        "subjects": [
            {"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"},
            {"kind": "Group", "name": "ops", "apiGroup": "rbac.authorization.k8s.io"},
        ],
    }))
    .unwrap();
    fake.insert(&role).unwrap();
    fake.insert(&binding).unwrap();

    let sa = "system:serviceaccount:monitoring:prometheus";
    let (allowed, reason) = may(
        &client,
        non_resource(sa, &["system:authenticated"], "/metrics"),
    )
    .await;
    assert!(allowed);
    assert_eq!(
        reason.as_deref(),
        Some(
            "RBAC: allowed by ClusterRoleBinding \"readers\" of ClusterRole \"reader\" to ServiceAccount \"prometheus/monitoring\""
        )
    );
    assert!(may(&client, non_resource(sa, &[], "/v1/pipeline")).await.0);
    assert!(
        may(
            &client,
            non_resource("alice", &["ops"], "/v1/networkpolicies")
        )
        .await
        .0
    );
    assert!(
        !may(&client, non_resource("alice", &["dev"], "/metrics"))
            .await
            .0
    );
    assert!(!may(&client, non_resource(sa, &[], "/debug/pprof")).await.0);

    let pods = |verb: &str| SubjectAccessReviewSpec {
        user: Some(sa.to_owned()),
        resource_attributes: Some(ResourceAttributes {
            resource: Some("pods".to_owned()),
            verb: Some(verb.to_owned()),
            ..ResourceAttributes::default()
        }),
        ..SubjectAccessReviewSpec::default()
    };
    assert!(may(&client, pods("list")).await.0);
    assert!(!may(&client, pods("delete")).await.0);

    fake.delete::<ClusterRoleBinding>("", "readers").unwrap();
    assert!(!may(&client, non_resource(sa, &[], "/metrics")).await.0);

    let neither = Api::<SubjectAccessReview>::all(client.clone())
        .create(
            &PostParams::default(),
            &SubjectAccessReview {
                spec: SubjectAccessReviewSpec {
                    user: Some(sa.to_owned()),
                    ..SubjectAccessReviewSpec::default()
                },
                ..SubjectAccessReview::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(neither, kube::Error::Api(ref s) if s.code == 422),
        "{neither}"
    );
}
