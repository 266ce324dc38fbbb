//! [`TokenReviewAuthenticator`] against the fake API server over TCP, through kube-rs: a Pod-bound
//! agent token is bound to its Pod's Node (from the token's `node-name` extra, or by reading
//! the Pod its extras name); another user's token is bound to no Node; an unknown token, a
//! deleted Pod's token or a replaced Pod's are unauthenticated; an API server that is down, or
//! fails to give the Pod, makes authentication unavailable; accepted agents' answers are kept, refusals are not.

use std::collections::BTreeMap;
use std::time::Duration;

use controller::auth::TokenReviewAuthenticator;
use controlplane::{AuthError, Authenticator, Watcher};
use fakeapi::{FakeApiServer, RecordedRequest, TokenUser};
use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::json;
use tower::ServiceExt;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

const AGENT: &str = "system:serviceaccount:kube-system:antrea-agent";

/// The fake API server, served over TCP, and a kube client of it.
struct Cluster {
    fake: FakeApiServer,
    _tcp: fakeapi::TcpServer,
    client: kube::Client,
}

impl Cluster {
    /// A cluster with the Nodes `nodes`.
    async fn with_nodes(nodes: &[&str]) -> Cluster {
        let fake = FakeApiServer::new();
        for name in nodes {
            let node: Node = serde_json::from_value(json!({"metadata": {"name": name}})).unwrap();
            fake.insert(&node).unwrap();
        }
        let tcp = fake.serve_tcp().await.unwrap();
        let client = kube::Client::try_from(kube::Config::new(tcp.url().parse().unwrap())).unwrap();
        Cluster {
            fake,
            _tcp: tcp,
            client,
        }
    }

    /// A Pod `kube-system/name` running as `service_account` on `node` ("": unscheduled); its uid.
    fn pod(&self, name: &str, service_account: &str, node: &str) -> String {
        let mut spec = json!({
            "serviceAccountName": service_account,
            "containers": [{"name": "main", "image": "antrea-rs/antrea-agent"}],
        });
        if !node.is_empty() {
            spec["nodeName"] = json!(node);
        }
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": spec,
        }))
        .unwrap();
        self.fake.insert(&pod).unwrap().metadata.uid.unwrap()
    }

    /// What the API server mounts into Pod `kube-system/pod` of `service_account`.
    fn bound_token(&self, service_account: &str, pod: &str) -> String {
        self.fake
            .issue_pod_bound_token("kube-system", service_account, pod)
            .unwrap()
    }

    /// A token of the agents' ServiceAccount whose user has exactly `extra`.
    fn agent_token_with(&self, token: &str, extra: &[(&str, &str)]) -> String {
        let mut user = TokenUser::service_account("kube-system", "antrea-agent", "sa-uid", token);
        user.extra = extra
            .iter()
            .map(|(key, value)| {
                (
                    format!("authentication.kubernetes.io/{key}"),
                    vec![(*value).to_owned()],
                )
            })
            .collect::<BTreeMap<_, _>>();
        self.fake.add_token(token, user);
        token.to_owned()
    }

    fn uncached(&self) -> TokenReviewAuthenticator {
        TokenReviewAuthenticator::new(self.client.clone()).with_cache_ttl(Duration::ZERO)
    }

    fn requests_to(&self, path_part: &str) -> Vec<RecordedRequest> {
        self.fake
            .requests()
            .into_iter()
            .filter(|r| r.path.contains(path_part))
            .collect()
    }
}

fn agent_on(node: &str) -> Watcher {
    Watcher {
        user: AGENT.to_owned(),
        node: Some(node.to_owned()),
    }
}

fn unauthenticated(answer: Result<Watcher, AuthError>) -> String {
    match answer {
        Err(AuthError::Unauthenticated(why)) => why,
        other => panic!("not Unauthenticated: {other:?}"),
    }
}

#[tokio::test]
async fn a_pod_bound_agent_token_is_bound_to_the_node_it_names() {
    let cluster = Cluster::with_nodes(&["n1", "n2"]).await;
    cluster.pod("antrea-agent-a", "antrea-agent", "n1");
    cluster.pod("antrea-agent-b", "antrea-agent", "n2");
    let token_a = cluster.bound_token("antrea-agent", "antrea-agent-a");
    let token_b = cluster.bound_token("antrea-agent", "antrea-agent-b");
    let auth = cluster.uncached();
    assert_eq!(auth.authenticate(&token_a).await, Ok(agent_on("n1")));
    assert_eq!(auth.authenticate(&token_b).await, Ok(agent_on("n2")));
    assert_eq!(cluster.requests_to("/tokenreviews").len(), 2);
    assert_eq!(
        cluster.requests_to("/pods/"),
        vec![],
        "the token's node-name extra is enough: no Pod is read"
    );
}

#[tokio::test]
async fn a_token_naming_only_its_pod_is_bound_to_the_node_the_pod_runs_on() {
    // No Node object for n3: the API server issues the token with the Pod's extras only, as
    // before Kubernetes 1.32.
    let cluster = Cluster::with_nodes(&[]).await;
    let uid = cluster.pod("antrea-agent-c", "antrea-agent", "n3");
    let bound = cluster.bound_token("antrea-agent", "antrea-agent-c");
    let auth = cluster.uncached();
    assert_eq!(auth.authenticate(&bound).await, Ok(agent_on("n3")));
    let reads = cluster.requests_to("/pods/");
    assert_eq!(reads.len(), 1);
    assert_eq!(
        reads[0].path,
        "/api/v1/namespaces/kube-system/pods/antrea-agent-c"
    );

    // The same from a token whose user names only the Pod and its uid.
    let plain = cluster.agent_token_with(
        "pod-only",
        &[("pod-name", "antrea-agent-c"), ("pod-uid", &uid)],
    );
    assert_eq!(auth.authenticate(&plain).await, Ok(agent_on("n3")));

    // A Pod not scheduled yet: no Node.
    let pending_uid = cluster.pod("antrea-agent-d", "antrea-agent", "");
    let pending = cluster.agent_token_with(
        "pending",
        &[("pod-name", "antrea-agent-d"), ("pod-uid", &pending_uid)],
    );
    assert_eq!(
        auth.authenticate(&pending).await,
        Ok(Watcher {
            user: AGENT.to_owned(),
            node: None
        })
    );

    // A Pod of that name but another uid, no such Pod, or no uid to check: refused.
    let replaced = cluster.agent_token_with(
        "replaced",
        &[("pod-name", "antrea-agent-c"), ("pod-uid", "another-uid")],
    );
    let why = unauthenticated(auth.authenticate(&replaced).await);
    assert!(why.contains("kube-system/antrea-agent-c"), "{why}");
    let missing = cluster.agent_token_with(
        "missing",
        &[("pod-name", "antrea-agent-z"), ("pod-uid", &uid)],
    );
    let why = unauthenticated(auth.authenticate(&missing).await);
    assert!(why.contains("does not exist"), "{why}");
    let no_uid = cluster.agent_token_with("no-uid", &[("pod-name", "antrea-agent-c")]);
    let why = unauthenticated(auth.authenticate(&no_uid).await);
    assert!(why.contains("without its uid"), "{why}");

    // An agent token naming neither a Node nor a Pod: no Node.
    let unbound = cluster
        .fake
        .issue_service_account_token("kube-system", "antrea-agent");
    assert_eq!(
        auth.authenticate(&unbound).await,
        Ok(Watcher {
            user: AGENT.to_owned(),
            node: None
        })
    );
}

#[tokio::test]
async fn another_users_token_is_authenticated_but_bound_to_no_node() {
    let cluster = Cluster::with_nodes(&["n1"]).await;
    cluster.pod("web", "default", "n1");
    let web = cluster.bound_token("default", "web");
    cluster
        .fake
        .add_token("admin-token", TokenUser::user("admin", &["system:masters"]));
    let auth = cluster.uncached();
    assert_eq!(
        auth.authenticate(&web).await,
        Ok(Watcher {
            user: "system:serviceaccount:kube-system:default".to_owned(),
            node: None
        }),
        "a workload's token does not open its Node's span"
    );
    assert_eq!(
        auth.authenticate("admin-token").await,
        Ok(Watcher {
            user: "admin".to_owned(),
            node: None
        })
    );

    // The same token is an agent's when that ServiceAccount is the agents'.
    let default_is_agent = TokenReviewAuthenticator::new(cluster.client.clone())
        .with_agent_service_account("kube-system", "default")
        .with_cache_ttl(Duration::ZERO);
    assert_eq!(
        default_is_agent.agent_user(),
        "system:serviceaccount:kube-system:default"
    );
    assert_eq!(
        default_is_agent.authenticate(&web).await,
        Ok(Watcher {
            user: "system:serviceaccount:kube-system:default".to_owned(),
            node: Some("n1".to_owned())
        })
    );
}

#[tokio::test]
async fn an_unknown_token_is_unauthenticated_with_the_api_servers_reason() {
    let cluster = Cluster::with_nodes(&["n1"]).await;
    let auth = cluster.uncached();
    let why = unauthenticated(auth.authenticate("not-a-token").await);
    assert!(why.contains("invalid bearer token"), "{why}");
}

#[tokio::test]
async fn a_deleted_pods_token_is_unauthenticated() {
    let cluster = Cluster::with_nodes(&["n1"]).await;
    cluster.pod("antrea-agent-a", "antrea-agent", "n1");
    let token = cluster.bound_token("antrea-agent", "antrea-agent-a");
    let auth = cluster.uncached();
    assert_eq!(auth.authenticate(&token).await, Ok(agent_on("n1")));
    cluster
        .fake
        .delete::<Pod>("kube-system", "antrea-agent-a")
        .unwrap();
    let why = unauthenticated(auth.authenticate(&token).await);
    assert!(why.contains("invalidated"), "{why}");
}

#[tokio::test]
async fn an_api_server_that_is_down_makes_authentication_unavailable() {
    let cluster = Cluster::with_nodes(&["n1"]).await;
    cluster.pod("antrea-agent-a", "antrea-agent", "n1");
    let token = cluster.bound_token("antrea-agent", "antrea-agent-a");
    let auth = TokenReviewAuthenticator::new(cluster.client.clone());
    cluster.fake.set_available(false);
    match auth.authenticate(&token).await {
        Err(AuthError::Unavailable(why)) => assert!(why.contains("TokenReview"), "{why}"),
        other => panic!("not Unavailable: {other:?}"),
    }
    // The failure was not kept: back up, the token is accepted.
    cluster.fake.set_available(true);
    assert_eq!(auth.authenticate(&token).await, Ok(agent_on("n1")));
}

#[tokio::test]
async fn a_pod_that_cannot_be_read_makes_authentication_unavailable() {
    // The API server answers the TokenReview, then fails the Pod read at the transport, as if
    // it went away in between.
    let cluster = Cluster::with_nodes(&[]).await;
    let uid = cluster.pod("antrea-agent-b", "antrea-agent", "n1");
    let pod_only = cluster.agent_token_with(
        "pod-only",
        &[("pod-name", "antrea-agent-b"), ("pod-uid", &uid)],
    );
    let fake = cluster.fake.service();
    let no_pod_reads = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let fake = fake.clone();
        async move {
            if request.uri().path().contains("/pods/") {
                return Err(BoxError::from("connection reset"));
            }
            fake.oneshot(request).await.map_err(BoxError::from)
        }
    });
    let auth = TokenReviewAuthenticator::new(kube::Client::new(no_pod_reads, "default"))
        .with_cache_ttl(Duration::ZERO);
    match auth.authenticate(&pod_only).await {
        Err(AuthError::Unavailable(why)) => {
            assert!(why.contains("kube-system/antrea-agent-b"), "{why}")
        }
        other => panic!("not Unavailable: {other:?}"),
    }
    // Through the whole API server, the same token is accepted.
    assert_eq!(
        cluster.uncached().authenticate(&pod_only).await,
        Ok(agent_on("n1"))
    );
}

#[tokio::test]
async fn accepted_agents_are_kept_and_refused_tokens_are_not() {
    let cluster = Cluster::with_nodes(&["n1"]).await;
    cluster.pod("antrea-agent-a", "antrea-agent", "n1");
    cluster.pod("web", "default", "n1");
    let agent = cluster.bound_token("antrea-agent", "antrea-agent-a");
    let web = cluster.bound_token("default", "web");
    let auth = TokenReviewAuthenticator::new(cluster.client.clone())
        .with_cache_ttl(Duration::from_secs(3600));
    for _ in 0..3 {
        assert_eq!(auth.authenticate(&agent).await, Ok(agent_on("n1")));
        unauthenticated(auth.authenticate("not-a-token").await);
        assert_eq!(auth.authenticate(&web).await.unwrap().node, None);
    }
    // One review for the agent, three for each refused or non-agent token.
    assert_eq!(cluster.requests_to("/tokenreviews").len(), 1 + 3 + 3);

    // While its answer is kept an agent is served through an API server outage.
    cluster.fake.set_available(false);
    assert_eq!(auth.authenticate(&agent).await, Ok(agent_on("n1")));
}
