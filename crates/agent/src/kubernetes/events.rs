//! Kubernetes Events on this Node's Pods (events.k8s.io/v1, through kube-runtime's
//! [`Recorder`], which creates an Event and patches its series when it repeats):
//! `NetworkReady` once a CNI ADD has the Pod's interface and flows in place,
//! `NetworkNotReady` with the reason when it failed.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::Client;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use tokio::sync::mpsc;

use crate::cluster::{ObjectKey, Store};
use crate::cniserver::AddOutcome;

/// The reporting component's name.
pub const COMPONENT: &str = "antrea-agent";

/// The Event for an ADD's outcome.
pub fn pod_event(outcome: &AddOutcome) -> Event {
    match &outcome.error {
        None => Event {
            type_: EventType::Normal,
            reason: "NetworkReady".into(),
            note: Some("Pod network and flows installed".into()),
            action: "SetUpNetwork".into(),
            secondary: None,
        },
        Some(error) => Event {
            type_: EventType::Warning,
            reason: "NetworkNotReady".into(),
            // events.k8s.io limits a note to 1 kB.
            note: Some(truncate(
                &format!("Pod network setup failed: {error}"),
                1024,
            )),
            action: "SetUpNetwork".into(),
            secondary: None,
        },
    }
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

/// A reference to the Pod, with its UID when the cluster store knows the Pod.
pub fn pod_reference(store: &Store, outcome: &AddOutcome) -> ObjectReference {
    let key = ObjectKey::new(&*outcome.pod.namespace, &*outcome.pod.name);
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: Some(outcome.pod.namespace.to_string()),
        name: Some(outcome.pod.name.to_string()),
        uid: store.pod(&key).and_then(|p| p.metadata.uid.clone()),
        ..Default::default()
    }
}

/// Publishes an Event for every ADD outcome received, until the senders are gone. A failed
/// publication is logged and dropped: Events are informational.
pub async fn report_pod_events(
    client: Client,
    node_name: String,
    store: Store,
    mut adds: mpsc::UnboundedReceiver<AddOutcome>,
) {
    let recorder = Recorder::new(
        client,
        Reporter {
            controller: COMPONENT.into(),
            instance: Some(node_name),
        },
    );
    while let Some(outcome) = adds.recv().await {
        let event = pod_event(&outcome);
        let reference = pod_reference(&store, &outcome);
        match recorder.publish(&event, &reference).await {
            Ok(()) => tracing::debug!("Pod {}: Event {}", outcome.pod, event.reason),
            Err(error) => tracing::warn!(
                "Pod {}: Event {} not published: {error}",
                outcome.pod,
                event.reason
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use model::PodKey;

    use super::*;

    #[test]
    fn events_say_ready_or_why_not() {
        let ok = AddOutcome {
            pod: PodKey::new("default", "web"),
            error: None,
        };
        let event = pod_event(&ok);
        assert_eq!(
            (event.type_, event.reason.as_str()),
            (EventType::Normal, "NetworkReady")
        );
        let failed = AddOutcome {
            pod: PodKey::new("default", "web"),
            error: Some("ipam: no address left".into()),
        };
        let event = pod_event(&failed);
        assert_eq!(
            (event.type_, event.reason.as_str()),
            (EventType::Warning, "NetworkNotReady")
        );
        assert!(event.note.unwrap().contains("no address left"));
        let long = AddOutcome {
            pod: PodKey::new("default", "web"),
            error: Some("é".repeat(2000)),
        };
        assert!(pod_event(&long).note.unwrap().len() <= 1024);
    }

    #[test]
    fn references_carry_the_uid_the_store_knows() {
        let mut writer = crate::cluster::StoreWriter::new();
        let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "web", "namespace": "default", "uid": "u-1"}
        }))
        .unwrap();
        writer.apply_pod(pod);
        let outcome = AddOutcome {
            pod: PodKey::new("default", "web"),
            error: None,
        };
        let reference = pod_reference(&writer.store(), &outcome);
        assert_eq!(reference.uid.as_deref(), Some("u-1"));
        assert_eq!(reference.kind.as_deref(), Some("Pod"));
        let other = AddOutcome {
            pod: PodKey::new("default", "db"),
            error: None,
        };
        assert_eq!(pod_reference(&writer.store(), &other).uid, None);
    }
}
