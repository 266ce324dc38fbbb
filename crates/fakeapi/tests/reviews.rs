//! TokenReview and SubjectAccessReview POSTed by the real kube-rs client over TCP, as the
//! kubelet and the agent send them: the tokens the fake issued or was given, and RBAC from the
//! stored ClusterRoles and ClusterRoleBindings; Pod-bound tokens with their Pod and Node extras.

use fakeapi::{FakeApiServer, TokenUser};
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::{Node, Pod};
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

fn agent_pod(name: &str, node: &str, service_account: &str) -> Pod {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": "kube-system"},
        "spec": {
            "serviceAccountName": service_account,
            "nodeName": node,
            "containers": [{"name": "antrea-agent", "image": "antrea-rs/antrea-agent"}],
        },
    }))
    .unwrap()
}

fn node(name: &str) -> Node {
    serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap()
}

#[tokio::test]
async fn a_pod_bound_token_names_its_pod_and_node_and_dies_with_its_pod() {
    let fake = FakeApiServer::new();
    let (client, _tcp) = client(&fake).await;
    let node_uid = fake.insert(&node("n1")).unwrap().metadata.uid.unwrap();
    let pod = fake
        .insert(&agent_pod("antrea-agent-x1", "n1", "antrea-agent"))
        .unwrap();
    let pod_uid = pod.metadata.uid.unwrap();
    let token = fake
        .issue_pod_bound_token("kube-system", "antrea-agent", "antrea-agent-x1")
        .unwrap();

    let status = token_review(&client, &token).await.status.unwrap();
    assert_eq!(status.authenticated, Some(true), "{status:?}");
    let user = status.user.unwrap();
    assert_eq!(
        user.username.as_deref(),
        Some("system:serviceaccount:kube-system:antrea-agent")
    );
    let extra = user.extra.unwrap();
    let one = |key: &str| {
        extra
            .get(&format!("authentication.kubernetes.io/{key}"))
            .cloned()
    };
    assert_eq!(one("pod-name"), Some(vec!["antrea-agent-x1".to_owned()]));
    assert_eq!(one("pod-uid"), Some(vec![pod_uid]));
    assert_eq!(one("node-name"), Some(vec!["n1".to_owned()]));
    assert_eq!(one("node-uid"), Some(vec![node_uid]));
    assert!(one("credential-id").is_some());

    // A Pod whose Node object does not exist: the token names only the Pod.
    fake.insert(&agent_pod("antrea-agent-x2", "gone", "antrea-agent"))
        .unwrap();
    let pod_only = fake
        .issue_pod_bound_token("kube-system", "antrea-agent", "antrea-agent-x2")
        .unwrap();
    let extra = token_review(&client, &pod_only)
        .await
        .status
        .unwrap()
        .user
        .unwrap()
        .extra
        .unwrap();
    assert!(extra.contains_key("authentication.kubernetes.io/pod-name"));
    assert!(!extra.contains_key("authentication.kubernetes.io/node-name"));
    assert!(!extra.contains_key("authentication.kubernetes.io/node-uid"));

    // The Pod deleted, or deleted and made again under the same name: the token is dead.
    fake.delete::<Pod>("kube-system", "antrea-agent-x1")
        .unwrap();
    let status = token_review(&client, &token).await.status.unwrap();
    assert_ne!(status.authenticated, Some(true));
    assert_eq!(
        status.error.as_deref(),
        Some("[invalid bearer token, service account token has been invalidated]")
    );
    fake.insert(&agent_pod("antrea-agent-x1", "n1", "antrea-agent"))
        .unwrap();
    let status = token_review(&client, &token).await.status.unwrap();
    assert_ne!(
        status.authenticated,
        Some(true),
        "a new Pod of the same name"
    );
    // The other Pod's token still works.
    let status = token_review(&client, &pod_only).await.status.unwrap();
    assert_eq!(status.authenticated, Some(true));

    // Refused as the API server refuses them: no such Pod, or a Pod of another ServiceAccount.
    assert!(matches!(
        fake.issue_pod_bound_token("kube-system", "antrea-agent", "nowhere"),
        Err(fakeapi::StoreError::NotFound { .. })
    ));
    assert!(matches!(
        fake.issue_pod_bound_token("kube-system", "antrea-controller", "antrea-agent-x2"),
        Err(fakeapi::StoreError::BadRequest(_))
    ));
}

/// A TokenRequest for ServiceAccount `kube-system/antrea-agent` with `spec`, as kube-rs sends
/// it (JSON): the token, or the API's error.
async fn request_token(
    client: &kube::Client,
    spec: serde_json::Value,
) -> Result<String, kube::Error> {
    use k8s_openapi::api::authentication::v1::TokenRequest;
    use k8s_openapi::api::core::v1::ServiceAccount;
    let body = serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec});
    let answer: TokenRequest = Api::<ServiceAccount>::namespaced(client.clone(), "kube-system")
        .create_subresource("token", "antrea-agent", &PostParams::default(), &body)
        .await?;
    Ok(answer.status.unwrap().token)
}

#[tokio::test]
async fn token_requests_issue_plain_and_pod_bound_tokens_that_token_review_accepts() {
    let fake = FakeApiServer::new();
    let (client, _tcp) = client(&fake).await;
    let missing = request_token(&client, serde_json::json!({}))
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("not found"), "{missing}");
    fake.insert(
        &serde_json::from_value::<k8s_openapi::api::core::v1::ServiceAccount>(
            serde_json::json!({"metadata": {"name": "antrea-agent", "namespace": "kube-system"}}),
        )
        .unwrap(),
    )
    .unwrap();
    let node: Node =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "n1"}})).unwrap();
    fake.insert(&node).unwrap();
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "antrea-agent-n1", "namespace": "kube-system"},
        "spec": {"nodeName": "n1", "serviceAccountName": "antrea-agent", "containers": [{"name": "agent"}]}
    }))
    .unwrap();
    let pod = fake.insert(&pod).unwrap();
    let pod_uid = pod.metadata.uid.unwrap();

    let plain = request_token(&client, serde_json::json!({})).await.unwrap();
    let user = token_review(&client, &plain)
        .await
        .status
        .unwrap()
        .user
        .unwrap();
    assert_eq!(
        user.username.as_deref(),
        Some("system:serviceaccount:kube-system:antrea-agent")
    );
    assert!(
        !user
            .extra
            .unwrap()
            .contains_key("authentication.kubernetes.io/node-name")
    );

    let bound = request_token(
        &client,
        serde_json::json!({"expirationSeconds": 1200, "boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "antrea-agent-n1", "uid": pod_uid}}),
    )
    .await
    .unwrap();
    let status = token_review(&client, &bound).await.status.unwrap();
    assert_eq!(status.authenticated, Some(true));
    let extra = status.user.unwrap().extra.unwrap();
    assert_eq!(
        extra["authentication.kubernetes.io/pod-name"],
        ["antrea-agent-n1"]
    );
    assert_eq!(extra["authentication.kubernetes.io/node-name"], ["n1"]);

    let refused = |spec: serde_json::Value| {
        let client = client.clone();
        async move { request_token(&client, spec).await.unwrap_err().to_string() }
    };
    let no_pod =
        refused(serde_json::json!({"boundObjectRef": {"kind": "Pod", "name": "gone"}})).await;
    assert!(no_pod.contains("not found"), "{no_pod}");
    let other_uid = refused(
        serde_json::json!({"boundObjectRef": {"kind": "Pod", "name": "antrea-agent-n1", "uid": "other"}}),
    )
    .await;
    assert!(
        other_uid.contains("does not match the UID in record"),
        "{other_uid}"
    );
    let secret =
        refused(serde_json::json!({"boundObjectRef": {"kind": "Secret", "name": "s"}})).await;
    assert!(secret.contains("only Pod"), "{secret}");
    let short = refused(serde_json::json!({"expirationSeconds": 60})).await;
    assert!(short.contains("less than 600 seconds"), "{short}");
}
