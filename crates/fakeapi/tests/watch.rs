//! Watches through kube-runtime's `watcher` and `reflector` and through raw `Api::watch`:
//! events, bookmarks, selector-filtered watches, compaction (410 → relist) and outages.

mod support;

use fakeapi::FakeApiServer;
use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, WatchEvent, WatchParams};
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, reflector as reflect};
use support::{bounded, client, eventually, next, pod, recv, spawn_stream};

fn name(p: &Pod) -> String {
    p.metadata.name.clone().unwrap_or_default()
}

fn store_names(store: &Store<Pod>) -> Vec<String> {
    let mut names: Vec<String> = store.state().iter().map(|p| name(p)).collect();
    names.sort();
    names
}

/// Drives `watcher(api) → reflector` in a task; returns the store and the task.
fn reflect_pods(
    server: &FakeApiServer,
    config: watcher::Config,
) -> (Store<Pod>, tokio::task::JoinHandle<()>) {
    let api: Api<Pod> = Api::all(client(server));
    let (store, writer) = reflector::store();
    let stream = reflect(writer, watcher::watcher(api, config).default_backoff());
    let task = tokio::spawn(stream.for_each(|_| async {}));
    (store, task)
}

#[tokio::test]
async fn watcher_sees_added_modified_and_deleted() {
    let server = FakeApiServer::new();
    server.insert(&pod("default", "a", "n1", &[])).unwrap();
    let api: Api<Pod> = Api::all(client(&server));
    let mut events = watcher::watcher(api, watcher::Config::default()).boxed();
    assert!(matches!(next(&mut events).await.unwrap(), Event::Init));
    assert!(matches!(next(&mut events).await.unwrap(), Event::InitApply(p) if name(&p) == "a"));
    assert!(matches!(next(&mut events).await.unwrap(), Event::InitDone));

    server.insert(&pod("default", "b", "n1", &[])).unwrap();
    let modified = server
        .insert(&pod("default", "a", "n1", &[("v", "2")]))
        .unwrap();
    server.delete::<Pod>("default", "b").unwrap();
    assert!(matches!(next(&mut events).await.unwrap(), Event::Apply(p) if name(&p) == "b"));
    match next(&mut events).await.unwrap() {
        Event::Apply(p) => assert_eq!(
            p.metadata.resource_version,
            modified.metadata.resource_version
        ),
        other => panic!("expected the modification of a, got {other:?}"),
    }
    match next(&mut events).await.unwrap() {
        Event::Delete(p) => {
            assert_eq!(name(&p), "b");
            assert_eq!(
                p.metadata.resource_version,
                Some(server.resource_version().to_string())
            );
        }
        other => panic!("expected the deletion of b, got {other:?}"),
    }
    assert_eq!(server.active_watches_of::<Pod>(), 1);
    drop(events);
    eventually("the watch closes", || server.active_watches() == 0).await;
}

#[tokio::test]
async fn raw_watch_replays_from_a_version_and_sends_bookmarks() {
    let server = FakeApiServer::new();
    let first = server.insert(&pod("default", "a", "n1", &[])).unwrap();
    server.insert(&pod("default", "b", "n1", &[])).unwrap();
    server.insert(&pod("other", "c", "n1", &[])).unwrap();
    let api: Api<Pod> = Api::namespaced(client(&server), "default");
    let rv = first.metadata.resource_version.unwrap();
    let mut stream = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    assert!(matches!(next(&mut stream).await.unwrap(), WatchEvent::Added(p) if name(&p) == "b"));
    server.send_bookmarks();
    match next(&mut stream).await.unwrap() {
        WatchEvent::Bookmark(bm) => assert_eq!(
            bm.metadata.resource_version,
            server.resource_version().to_string()
        ),
        other => panic!("expected a bookmark, got {other:?}"),
    }
}

#[tokio::test]
async fn watch_without_version_starts_with_the_current_state() {
    let server = FakeApiServer::new();
    server.insert(&pod("default", "a", "n1", &[])).unwrap();
    let api: Api<Pod> = Api::all(client(&server));
    let mut stream = api
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    assert!(matches!(next(&mut stream).await.unwrap(), WatchEvent::Added(p) if name(&p) == "a"));
    server.delete::<Pod>("default", "a").unwrap();
    assert!(matches!(next(&mut stream).await.unwrap(), WatchEvent::Deleted(p) if name(&p) == "a"));
}

#[tokio::test]
async fn streaming_list_watcher_gets_initial_events_and_the_end_bookmark() {
    let server = FakeApiServer::new();
    server.insert(&pod("default", "a", "n1", &[])).unwrap();
    let (store, _task) = reflect_pods(&server, watcher::Config::default().streaming_lists());
    bounded(store.wait_until_ready()).await.unwrap();
    assert_eq!(store_names(&store), ["a"]);
    let watch = server
        .requests()
        .into_iter()
        .find(|r| r.has_param("watch", "true"))
        .unwrap();
    assert!(watch.has_param("sendInitialEvents", "true"));
    assert!(
        !server
            .requests()
            .iter()
            .any(|r| !r.has_param("watch", "true")),
        "no list request"
    );
}

#[tokio::test]
async fn selector_watch_turns_moves_into_added_and_deleted() {
    let server = FakeApiServer::new();
    server.insert(&pod("default", "a", "n2", &[])).unwrap();
    let api: Api<Pod> = Api::all(client(&server));
    let config = watcher::Config::default()
        .fields("spec.nodeName=n1")
        .labels("app=web");
    let mut events = watcher::watcher(api, config).boxed();
    assert!(matches!(next(&mut events).await.unwrap(), Event::Init));
    assert!(matches!(next(&mut events).await.unwrap(), Event::InitDone));

    server
        .insert(&pod("default", "a", "n1", &[("app", "web")]))
        .unwrap();
    assert!(matches!(next(&mut events).await.unwrap(), Event::Apply(p) if name(&p) == "a"));
    server
        .insert(&pod("default", "other-node", "n2", &[("app", "web")]))
        .unwrap();
    server
        .insert(&pod("default", "other-label", "n1", &[("app", "db")]))
        .unwrap();
    server
        .insert(&pod("default", "a", "n2", &[("app", "web")]))
        .unwrap();
    match next(&mut events).await.unwrap() {
        Event::Delete(p) => assert_eq!(
            (name(&p), p.spec.unwrap().node_name),
            ("a".into(), Some("n2".into()))
        ),
        other => panic!("expected a to leave the selection, got {other:?}"),
    }
}

#[tokio::test]
async fn compaction_makes_the_watcher_relist_and_the_store_converge() {
    let server = FakeApiServer::new();
    server.insert(&pod("default", "a", "n1", &[])).unwrap();
    server.insert(&pod("default", "b", "n1", &[])).unwrap();
    let (store, _task) = reflect_pods(&server, watcher::Config::default());
    bounded(store.wait_until_ready()).await.unwrap();
    eventually("the watch is open", || server.active_watches() == 1).await;
    let lists = || {
        server
            .requests()
            .iter()
            .filter(|r| !r.has_param("watch", "true"))
            .count()
    };
    assert_eq!(lists(), 1);

    server.set_available(false);
    server.delete::<Pod>("default", "b").unwrap();
    server.insert(&pod("default", "c", "n1", &[])).unwrap();
    server.compact();
    server.set_available(true);

    eventually("the store converges after a relist", || {
        store_names(&store) == ["a", "c"]
    })
    .await;
    assert_eq!(lists(), 2, "the 410 made the watcher list again");
    let gone_watch = server
        .requests()
        .into_iter()
        .filter(|r| r.has_param("watch", "true"))
        .nth(1)
        .expect("the watcher resumed its watch before relisting");
    assert!(!gone_watch.has_param("resourceVersion", &server.resource_version().to_string()));
}

#[tokio::test]
async fn compaction_ends_open_watches_with_410() {
    let server = FakeApiServer::new();
    server.insert(&pod("default", "a", "n1", &[])).unwrap();
    let api: Api<Pod> = Api::all(client(&server));
    let rv = server.resource_version().to_string();
    let mut stream = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .boxed();
    server.compact();
    match next(&mut stream).await.unwrap() {
        WatchEvent::Error(status) => {
            assert_eq!((status.code, status.reason.as_str()), (410, "Expired"))
        }
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
    assert!(
        bounded(stream.try_next()).await.unwrap().is_none(),
        "the watch ends after the error"
    );
}

#[tokio::test]
async fn an_outage_breaks_the_watch_and_the_watcher_resumes_without_relisting() {
    let server = FakeApiServer::new();
    server.insert(&pod("default", "a", "n1", &[])).unwrap();
    let api: Api<Pod> = Api::all(client(&server));
    let mut events =
        spawn_stream(watcher::watcher(api, watcher::Config::default()).default_backoff());
    for _ in 0..3 {
        recv(&mut events).await.unwrap();
    }
    eventually("the watch is open", || server.active_watches() == 1).await;

    server.set_available(false);
    assert!(
        recv(&mut events).await.is_err(),
        "the broken watch surfaces as an error"
    );
    assert_eq!(server.active_watches(), 0);
    server.delete::<Pod>("default", "a").unwrap();
    server.set_available(true);

    assert!(matches!(recv(&mut events).await.unwrap(), Event::Delete(p) if name(&p) == "a"));
    let lists = server
        .requests()
        .iter()
        .filter(|r| !r.has_param("watch", "true") && r.method == http::Method::GET)
        .count();
    assert_eq!(lists, 1, "resuming from the last version needs no relist");
    let watches = server
        .requests()
        .iter()
        .filter(|r| r.has_param("watch", "true"))
        .count();
    assert!(watches >= 2, "the watcher re-watched after the outage");
}
