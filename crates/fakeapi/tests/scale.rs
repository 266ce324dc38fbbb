//! Many objects: kube-rs's paged initial list fills a reflector with every Pod, and a
//! node-filtered watcher gets exactly its Node's share.

mod support;

use fakeapi::FakeApiServer;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;
use kube::runtime::{reflector, watcher};
use support::{bounded, client, pod};

const PODS: usize = 20_000;
const NODES: usize = 10;

#[tokio::test]
async fn paged_initial_lists_fill_reflectors_with_many_pods() {
    let server = FakeApiServer::builder().record_requests(false).build();
    for i in 0..PODS {
        let ns = format!("ns{}", i % 7);
        server
            .insert(&pod(
                &ns,
                &format!("p{i}"),
                &format!("n{}", i % NODES),
                &[("app", "bench")],
            ))
            .unwrap();
    }
    let api: Api<Pod> = Api::all(client(&server));

    let (all, writer) = reflector::store();
    let config = watcher::Config::default().page_size(500);
    tokio::spawn(
        reflector::reflector(writer, watcher::watcher(api.clone(), config)).for_each(|_| async {}),
    );
    let (mine, writer) = reflector::store();
    let config = watcher::Config::default().fields("spec.nodeName=n7");
    tokio::spawn(
        reflector::reflector(writer, watcher::watcher(api, config)).for_each(|_| async {}),
    );

    bounded(all.wait_until_ready()).await.unwrap();
    bounded(mine.wait_until_ready()).await.unwrap();
    assert_eq!(all.state().len(), PODS);
    assert_eq!(mine.state().len(), PODS / NODES);
    assert!(
        mine.state()
            .iter()
            .all(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some("n7"))
    );
}
