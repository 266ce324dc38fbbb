//! Shared helpers for the kube-rs client tests: typed fixtures and bounded waits.

#![allow(dead_code)]

use fakeapi::FakeApiServer;
use futures_util::{Stream, StreamExt};
use k8s_openapi::api::core::v1::{Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

/// Upper bound for anything that should happen promptly; only reached when the test fails.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// A Pod in `namespace` with `labels`, scheduled to `node` (unscheduled if empty).
pub fn pod(namespace: &str, name: &str, node: &str, labels: &[(&str, &str)]) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            labels: Some(
                labels
                    .iter()
                    .map(|(k, v)| ((*k).into(), (*v).into()))
                    .collect::<BTreeMap<_, _>>(),
            ),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            node_name: (!node.is_empty()).then(|| node.into()),
            ..PodSpec::default()
        }),
        status: None,
    }
}

/// A kube client talking to `server` in-process.
pub fn client(server: &FakeApiServer) -> kube::Client {
    kube::Client::new(server.service(), "default")
}

/// The next item of `stream`, failing the test if none comes.
pub async fn next<S: Stream + Unpin>(stream: &mut S) -> S::Item {
    match tokio::time::timeout(PATIENCE, stream.next()).await {
        Ok(Some(item)) => item,
        Ok(None) => panic!("stream ended"),
        Err(_) => panic!("no stream item within {PATIENCE:?}"),
    }
}

/// Waits until `condition` holds (checked after each yield), failing the test if it never does.
pub async fn eventually<F: Fn() -> bool>(what: &str, condition: F) {
    let wait = async {
        while !condition() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    if tokio::time::timeout(PATIENCE, wait).await.is_err() {
        panic!("{what} did not happen within {PATIENCE:?}");
    }
}

/// Runs `future` to completion, failing the test if it hangs.
pub async fn bounded<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(PATIENCE, future)
        .await
        .expect("operation hung")
}

/// Polls `stream` in a task (so it makes progress while the test waits for something else) and
/// hands its items over a channel; read them with [`recv`].
pub fn spawn_stream<S>(stream: S) -> tokio::sync::mpsc::UnboundedReceiver<S::Item>
where
    S: Stream + Send + 'static,
    S::Item: Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while let Some(item) = stream.next().await {
            if tx.send(item).is_err() {
                break;
            }
        }
    });
    rx
}

/// The next item from a [`spawn_stream`] channel, failing the test if none comes.
pub async fn recv<T>(rx: &mut tokio::sync::mpsc::UnboundedReceiver<T>) -> T {
    match tokio::time::timeout(PATIENCE, rx.recv()).await {
        Ok(Some(item)) => item,
        Ok(None) => panic!("stream ended"),
        Err(_) => panic!("no stream item within {PATIENCE:?}"),
    }
}
