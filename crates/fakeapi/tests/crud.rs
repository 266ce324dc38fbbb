//! CRUD through `kube::Api` against the fake, with apiserver errors surfacing as
//! `kube::Error::Api` carrying the right code and reason.

mod support;

use fakeapi::FakeApiServer;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use support::{client, pod};

fn api_error(err: kube::Error) -> (u16, String) {
    match err {
        kube::Error::Api(status) => (status.code, status.reason.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn create_assigns_server_metadata_and_duplicates_conflict() {
    let server = FakeApiServer::new();
    let pods: Api<Pod> = Api::namespaced(client(&server), "ns1");
    let created = pods
        .create(&PostParams::default(), &pod("ns1", "a", "n1", &[]))
        .await
        .unwrap();
    let meta = &created.metadata;
    assert!(meta.uid.as_deref().is_some_and(|u| !u.is_empty()));
    assert!(meta.creation_timestamp.is_some());
    assert_eq!(
        meta.resource_version.as_deref(),
        Some(server.resource_version().to_string().as_str())
    );
    assert_eq!(meta.namespace.as_deref(), Some("ns1"));

    let again = pods
        .create(&PostParams::default(), &pod("ns1", "a", "n1", &[]))
        .await
        .unwrap_err();
    assert_eq!(api_error(again), (409, "AlreadyExists".into()));
    let other_ns = pods
        .create(&PostParams::default(), &pod("ns2", "b", "n1", &[]))
        .await
        .unwrap_err();
    assert_eq!(api_error(other_ns), (400, "BadRequest".into()));
}

#[tokio::test]
async fn get_and_delete_missing_objects_are_not_found() {
    let server = FakeApiServer::new();
    let nodes: Api<Node> = Api::all(client(&server));
    assert_eq!(
        api_error(nodes.get("nope").await.unwrap_err()),
        (404, "NotFound".into())
    );
    assert!(nodes.get_opt("nope").await.unwrap().is_none());
    let deleted = nodes
        .delete("nope", &DeleteParams::default())
        .await
        .unwrap_err();
    assert_eq!(api_error(deleted), (404, "NotFound".into()));
}

#[tokio::test]
async fn replace_with_a_stale_resource_version_conflicts() {
    let server = FakeApiServer::new();
    let pods: Api<Pod> = Api::namespaced(client(&server), "default");
    let v1 = pods
        .create(&PostParams::default(), &pod("default", "a", "n1", &[]))
        .await
        .unwrap();
    let mut v2 = v1.clone();
    v2.metadata.labels = Some([("v".to_string(), "2".to_string())].into());
    let v2 = pods
        .replace("a", &PostParams::default(), &v2)
        .await
        .unwrap();
    assert_ne!(v2.metadata.resource_version, v1.metadata.resource_version);
    assert_eq!(v2.metadata.uid, v1.metadata.uid);

    let stale = pods
        .replace("a", &PostParams::default(), &v1)
        .await
        .unwrap_err();
    assert_eq!(api_error(stale), (409, "Conflict".into()));
    let stored = server.get::<Pod>("default", "a").unwrap().unwrap();
    assert_eq!(stored.metadata.labels, v2.metadata.labels);
}

#[tokio::test]
async fn merge_strategic_and_json_patches_change_the_object() {
    let server = FakeApiServer::new();
    server
        .insert(&pod(
            "default",
            "a",
            "n1",
            &[("app", "web"), ("drop", "me")],
        ))
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client(&server), "default");
    let pp = PatchParams::default();

    let merge = serde_json::json!({"metadata": {"labels": {"tier": "front", "drop": null}}});
    let patched = pods.patch("a", &pp, &Patch::Merge(&merge)).await.unwrap();
    let labels = patched.metadata.labels.clone().unwrap();
    assert_eq!(labels.get("tier").map(String::as_str), Some("front"));
    assert!(!labels.contains_key("drop"));

    let strategic = serde_json::json!({"spec": {"nodeName": "n2"}});
    let patched = pods
        .patch("a", &pp, &Patch::Strategic(&strategic))
        .await
        .unwrap();
    assert_eq!(patched.spec.unwrap().node_name.as_deref(), Some("n2"));

    // kube's typed JSON patch needs its `jsonpatch` feature; the wire request is the same.
    let json_patch = |ops: serde_json::Value| {
        http::Request::patch("/api/v1/namespaces/default/pods/a")
            .header(http::header::CONTENT_TYPE, "application/json-patch+json")
            .body(ops.to_string().into_bytes())
            .unwrap()
    };
    let kube_client = client(&server);
    let patched: Pod = kube_client
        .request(json_patch(serde_json::json!([
            {"op": "add", "path": "/metadata/annotations", "value": {"k": "v"}},
            {"op": "replace", "path": "/metadata/labels/app", "value": "db"},
            {"op": "remove", "path": "/metadata/labels/tier"}
        ])))
        .await
        .unwrap();
    assert_eq!(
        patched
            .metadata
            .annotations
            .unwrap()
            .get("k")
            .map(String::as_str),
        Some("v")
    );
    assert_eq!(
        patched.metadata.labels.unwrap(),
        [("app".to_string(), "db".to_string())].into()
    );

    let failed = kube_client
        .request::<Pod>(json_patch(
            serde_json::json!([{"op": "remove", "path": "/metadata/labels/missing"}]),
        ))
        .await
        .unwrap_err();
    assert_eq!(api_error(failed), (422, "Invalid".into()));
}

#[tokio::test]
async fn patch_with_a_stale_resource_version_conflicts_and_apply_is_unsupported() {
    let server = FakeApiServer::new();
    server.insert(&pod("default", "a", "n1", &[])).unwrap();
    let pods: Api<Pod> = Api::namespaced(client(&server), "default");
    let stale = serde_json::json!({"metadata": {"resourceVersion": "1", "labels": {"x": "y"}}});
    let err = pods
        .patch("a", &PatchParams::default(), &Patch::Merge(&stale))
        .await
        .unwrap_err();
    assert_eq!(api_error(err), (409, "Conflict".into()));

    let apply = pod("default", "a", "n1", &[("x", "y")]);
    let err = pods
        .patch("a", &PatchParams::apply("test"), &Patch::Apply(&apply))
        .await
        .unwrap_err();
    assert_eq!(api_error(err), (415, "UnsupportedMediaType".into()));
}

#[tokio::test]
async fn status_subresource_and_main_resource_change_separate_parts() {
    let server = FakeApiServer::new();
    let nodes: Api<Node> = Api::all(client(&server));
    let mut node = Node::default();
    node.metadata.name = Some("n1".into());
    nodes.create(&PostParams::default(), &node).await.unwrap();

    let status = serde_json::json!({"status": {"podCIDRs": ["10.0.0.0/24"]}, "metadata": {"labels": {"ignored": "yes"}}});
    let patched = nodes
        .patch_status("n1", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    assert!(patched.status.is_some());
    assert!(
        patched.metadata.labels.is_none(),
        "the status subresource must not change labels"
    );

    let main = serde_json::json!({"status": null, "metadata": {"labels": {"kept": "yes"}}});
    let patched = nodes
        .patch("n1", &PatchParams::default(), &Patch::Merge(&main))
        .await
        .unwrap();
    assert!(
        patched.status.is_some(),
        "the main resource must not change status"
    );
    assert!(patched.metadata.labels.unwrap().contains_key("kept"));
}

#[tokio::test]
async fn delete_removes_and_list_reports_the_rest() {
    let server = FakeApiServer::new();
    let namespaces: Api<Namespace> = Api::all(client(&server));
    for name in ["a", "b", "c"] {
        let mut ns = Namespace::default();
        ns.metadata.name = Some(name.into());
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .unwrap();
    }
    let deleted = namespaces
        .delete("b", &DeleteParams::default())
        .await
        .unwrap();
    assert!(deleted.is_left());
    let names: Vec<_> = namespaces
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert_eq!(names, ["a", "c"]);
    let precondition = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            resource_version: Some("1".into()),
            uid: None,
        }),
        ..DeleteParams::default()
    };
    let err = namespaces.delete("a", &precondition).await.unwrap_err();
    assert_eq!(api_error(err), (409, "Conflict".into()));
}
