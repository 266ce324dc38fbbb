//! The RBAC of build/yamls/antrea-controller.yml against the calls a leading antrea-controller
//! makes to the fake API server, and those its authenticator makes for an agent's token: every
//! call is granted (the ClusterRole cluster-wide, the Roles in their Namespace and for their
//! resource names), and every grant is used. The replica serves, so it also keeps its CA in a
//! Secret and publishes it in the ConfigMap antrea-ca.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use controller::auth::TokenReviewAuthenticator;
use controller::leader::LeaseTiming;
use controller::run::{Options, Serving, run};
use controller::serve::ServeOptions;
use controlplane::{Authenticator, Watcher};
use fakeapi::{FakeApiServer, RecordedRequest};
use serde_json::{Value, json};

/// One API call as RBAC sees it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Call {
    group: String,
    resource: String,
    verb: String,
    namespace: Option<String>,
    name: Option<String>,
}

fn call(r: &RecordedRequest) -> Call {
    let (group, rest) = if let Some(rest) = r.path.strip_prefix("/api/v1/") {
        (String::new(), rest)
    } else {
        let rest = r.path.strip_prefix("/apis/").expect("an API path");
        let mut parts = rest.splitn(3, '/');
        let group = parts.next().unwrap().to_owned();
        let _version = parts.next();
        (group, parts.next().unwrap_or_default())
    };
    let segments: Vec<&str> = rest.split('/').collect();
    let (namespace, resource, name) = if segments[0] == "namespaces" && segments.len() >= 3 {
        (Some(segments[1]), segments[2], segments.get(3))
    } else {
        (None, segments[0], segments.get(1))
    };
    let watch = r
        .query
        .split('&')
        .any(|p| p == "watch=true" || p == "watch=1");
    let verb = match (r.method.as_str(), name.is_some()) {
        ("GET", _) if watch => "watch",
        ("GET", false) => "list",
        ("GET", true) => "get",
        ("POST", _) => "create",
        ("PATCH", _) => "patch",
        ("PUT", _) => "update",
        ("DELETE", _) => "delete",
        (other, _) => panic!("unexpected method {other}"),
    };
    Call {
        group,
        resource: resource.to_owned(),
        verb: verb.to_owned(),
        namespace: namespace.map(str::to_owned),
        name: name.map(|n| (*n).to_owned()),
    }
}

/// One rule of a ClusterRole (`namespace` None) or of a Role.
struct Rule<'a> {
    namespace: Option<&'a str>,
    rule: &'a Value,
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

impl Rule<'_> {
    fn grants(&self, call: &Call) -> bool {
        let names = strings(&self.rule["resourceNames"]);
        strings(&self.rule["apiGroups"]).contains(&call.group.as_str())
            && strings(&self.rule["resources"]).contains(&call.resource.as_str())
            && strings(&self.rule["verbs"]).contains(&call.verb.as_str())
            && (names.is_empty() || call.name.as_deref().is_some_and(|n| names.contains(&n)))
            && self
                .namespace
                .is_none_or(|ns| call.namespace.as_deref() == Some(ns))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manifest_grants_exactly_the_calls_the_controller_makes() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../build/yamls/antrea-controller.yml"
    ))
    .unwrap();
    let documents: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
    let rules: Vec<Rule> = documents
        .iter()
        .filter(|d| d["kind"] == "ClusterRole" || d["kind"] == "Role")
        .flat_map(|role| {
            let namespace = role["metadata"]["namespace"].as_str();
            role["rules"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |rule| Rule { namespace, rule })
        })
        .collect();
    for binding in documents
        .iter()
        .filter(|d| d["kind"] == "ClusterRoleBinding" || d["kind"] == "RoleBinding")
    {
        assert_eq!(binding["subjects"][0]["name"], "antrea-controller");
        assert_eq!(binding["subjects"][0]["namespace"], "kube-system");
    }

    // A leader: it creates the Lease, renews it (get, update) and watches its three kinds.
    let fake = FakeApiServer::new();
    let tcp = fake.serve_tcp().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    tcp.write_kubeconfig(&kubeconfig).unwrap();
    let options = Options {
        kubeconfig: Some(kubeconfig),
        lease_namespace: "kube-system".into(),
        lease_name: "antrea-controller".into(),
        identity: "replica-1".into(),
        timing: LeaseTiming {
            duration: Duration::from_secs(3),
            retry: Duration::from_millis(500),
        },
        serving: Some(Serving {
            options: ServeOptions {
                bind_address: "127.0.0.1:0".parse().unwrap(),
                ..ServeOptions::default()
            },
            authenticator: |client| Arc::new(TokenReviewAuthenticator::new(client)),
        }),
    };
    let lead_until = |wanted: &'static str| {
        let options = options.clone();
        let fake = &fake;
        async move {
            let replica = tokio::spawn(async move { run(&options).await });
            let start = Instant::now();
            loop {
                let calls: BTreeSet<Call> = fake.requests().iter().map(call).collect();
                let has = |resource: &str, verb: &str| {
                    calls
                        .iter()
                        .any(|c| c.resource == resource && c.verb == verb)
                };
                let watching = ["pods", "namespaces", "networkpolicies"]
                    .iter()
                    .all(|r| has(r, "watch"));
                if has("leases", "update") && watching && has("configmaps", wanted) {
                    break;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(30),
                    "the controller did not lead, watch and {wanted} antrea-ca: {calls:?}"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            replica.abort();
        }
    };
    // First start: the CA Secret and the ConfigMap antrea-ca are created.
    lead_until("create").await;
    // A ConfigMap antrea-ca that holds another CA (someone edited it) is put right.
    let mut stale: k8s_openapi::api::core::v1::ConfigMap = fake
        .get("kube-system", "antrea-ca")
        .unwrap()
        .expect("antrea-ca");
    stale.data = Some([("ca.crt".to_owned(), "stale".to_owned())].into());
    fake.insert(&stale).unwrap();
    lead_until("update").await;

    // An agent's token naming its Pod but not its Node (the Node object does not exist): a
    // TokenReview, then the Pod read.
    let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(json!({
        "metadata": {"name": "antrea-agent-x1", "namespace": "kube-system"},
        "spec": {
            "serviceAccountName": "antrea-agent",
            "nodeName": "n1",
            "containers": [{"name": "antrea-agent", "image": "antrea-rs/antrea-agent"}],
        },
    }))
    .unwrap();
    fake.insert(&pod).unwrap();
    let token = fake
        .issue_pod_bound_token("kube-system", "antrea-agent", "antrea-agent-x1")
        .unwrap();
    let client = kube::Client::try_from(kube::Config::new(tcp.url().parse().unwrap())).unwrap();
    assert_eq!(
        TokenReviewAuthenticator::new(client)
            .authenticate(&token)
            .await,
        Ok(Watcher {
            user: "system:serviceaccount:kube-system:antrea-agent".into(),
            node: Some("n1".into()),
        })
    );
    let calls: BTreeSet<Call> = fake.requests().iter().map(call).collect();

    let not_granted: Vec<&Call> = calls
        .iter()
        .filter(|c| !rules.iter().any(|r| r.grants(c)))
        .collect();
    assert!(not_granted.is_empty(), "not granted: {not_granted:?}");
    for rule in &rules {
        for group in strings(&rule.rule["apiGroups"]) {
            for resource in strings(&rule.rule["resources"]).into_iter() {
                for verb in strings(&rule.rule["verbs"]) {
                    assert!(
                        calls.iter().any(|c| c.group == group
                            && c.resource == resource
                            && c.verb == verb
                            && rule.grants(c)),
                        "granted but never used: {group}/{resource} {verb}"
                    );
                }
            }
        }
    }
}
