//! Lists through `kube::Api`: paging with limit/continue and label/field selectors.

mod support;

use fakeapi::FakeApiServer;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use std::collections::BTreeSet;
use support::{client, pod};

fn names(list: &[Pod]) -> Vec<String> {
    list.iter()
        .filter_map(|p| p.metadata.name.clone())
        .collect()
}

#[tokio::test]
async fn pages_with_limit_and_continue_cover_everything_once_at_one_version() {
    let server = FakeApiServer::new();
    for i in 0..25 {
        server
            .insert(&pod(
                if i % 2 == 0 { "even" } else { "odd" },
                &format!("p{i:02}"),
                "n1",
                &[],
            ))
            .unwrap();
    }
    let pods: Api<Pod> = Api::all(client(&server));
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    let mut versions = BTreeSet::new();
    let mut pages = 0;
    loop {
        let mut lp = ListParams::default().limit(10);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = pods.list(&lp).await.unwrap();
        pages += 1;
        assert!(page.items.len() <= 10);
        versions.insert(page.metadata.resource_version.clone().unwrap());
        seen.extend(names(&page.items));
        if pages == 1 {
            // A change between pages must not move the list's version.
            server.insert(&pod("even", "late", "n1", &[])).unwrap();
        }
        token = page.metadata.continue_.filter(|t| !t.is_empty());
        if token.is_none() {
            break;
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(
        versions.len(),
        1,
        "every page reports the first page's version"
    );
    let unique: BTreeSet<_> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "no object listed twice");
    assert!((0..25).all(|i| unique.contains(&format!("p{i:02}"))));
}

#[tokio::test]
async fn a_continue_token_from_compacted_history_is_gone() {
    let server = FakeApiServer::new();
    for i in 0..3 {
        server
            .insert(&pod("default", &format!("p{i}"), "n1", &[]))
            .unwrap();
    }
    let pods: Api<Pod> = Api::namespaced(client(&server), "default");
    let first = pods.list(&ListParams::default().limit(1)).await.unwrap();
    let token = first.metadata.continue_.unwrap();
    server.insert(&pod("default", "p9", "n1", &[])).unwrap();
    server.compact();
    match pods
        .list(&ListParams::default().limit(1).continue_token(&token))
        .await
    {
        Err(kube::Error::Api(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (410, "Expired"))
        }
        other => panic!("expected 410 Expired, got {other:?}"),
    }
}

#[tokio::test]
async fn field_and_label_selectors_filter_lists() {
    let server = FakeApiServer::new();
    server
        .insert(&pod(
            "a",
            "web1",
            "n1",
            &[("app", "web"), ("tier", "front")],
        ))
        .unwrap();
    server
        .insert(&pod("a", "web2", "n2", &[("app", "web")]))
        .unwrap();
    server
        .insert(&pod("b", "db1", "n1", &[("app", "db")]))
        .unwrap();
    server
        .insert(&pod("b", "pending", "", &[("app", "db")]))
        .unwrap();
    let all: Api<Pod> = Api::all(client(&server));
    let ns_b: Api<Pod> = Api::namespaced(client(&server), "b");
    let list = |api: &Api<Pod>, lp: ListParams| {
        let api = api.clone();
        async move { names(&api.list(&lp).await.unwrap().items) }
    };
    assert_eq!(
        list(&all, ListParams::default().fields("spec.nodeName=n1")).await,
        ["web1", "db1"]
    );
    assert_eq!(
        list(&all, ListParams::default().fields("spec.nodeName=")).await,
        ["pending"]
    );
    assert_eq!(
        list(
            &all,
            ListParams::default().fields("metadata.namespace=a,metadata.name!=web1")
        )
        .await,
        ["web2"]
    );
    assert_eq!(
        list(&all, ListParams::default().labels("app=web,tier")).await,
        ["web1"]
    );
    assert_eq!(
        list(&all, ListParams::default().labels("app in (db),!tier")).await,
        ["db1", "pending"]
    );
    assert_eq!(
        list(&all, ListParams::default().labels("tier notin (front)")).await,
        ["web2", "db1", "pending"]
    );
    assert_eq!(
        list(&ns_b, ListParams::default().fields("spec.nodeName=n1")).await,
        ["db1"]
    );
    assert_eq!(
        list(&ns_b, ListParams::default().labels("app!=db")).await,
        Vec::<String>::new()
    );

    match all.list(&ListParams::default().labels("app in (web")).await {
        Err(kube::Error::Api(status)) => assert_eq!(status.code, 400),
        other => panic!("expected 400 for a malformed selector, got {other:?}"),
    }
}

#[tokio::test]
async fn paging_with_a_selector_skips_non_matching_objects() {
    let server = FakeApiServer::new();
    for i in 0..30 {
        server
            .insert(&pod(
                "default",
                &format!("p{i:02}"),
                if i % 3 == 0 { "n1" } else { "n2" },
                &[],
            ))
            .unwrap();
    }
    let pods: Api<Pod> = Api::all(client(&server));
    let first = pods
        .list(&ListParams::default().fields("spec.nodeName=n1").limit(4))
        .await
        .unwrap();
    assert_eq!(names(&first.items), ["p00", "p03", "p06", "p09"]);
    let token = first.metadata.continue_.unwrap();
    let rest = pods
        .list(
            &ListParams::default()
                .fields("spec.nodeName=n1")
                .limit(10)
                .continue_token(&token),
        )
        .await
        .unwrap();
    assert_eq!(
        names(&rest.items),
        ["p12", "p15", "p18", "p21", "p24", "p27"]
    );
    assert!(
        rest.metadata.continue_.is_none_or(|t| t.is_empty()),
        "no token when nothing more matches"
    );
}
