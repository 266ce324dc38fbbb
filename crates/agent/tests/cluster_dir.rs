//! `agent::cluster::DirectorySource` over temporary directories: files added, changed, renamed
//! and removed; malformed files keeping their last good objects; events in order.

use std::fs;
use std::path::Path;
use std::time::Duration;

use agent::cluster::{ClusterEvent, DirectorySource, ObjectKey, PollOutcome, SourceProblem};

fn node(name: &str, cidr: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\nspec:\n  podCIDR: {cidr}\nstatus:\n  addresses:\n  - type: InternalIP\n    address: 192.168.77.1\n"
    )
}

fn pod(name: &str, node: &str, ip: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels: {{app: x}}\nspec:\n  nodeName: {node}\nstatus:\n  podIP: {ip}\n"
    )
}

fn write(dir: &Path, file: &str, text: &str) {
    fs::write(dir.join(file), text).unwrap();
}

fn names(outcome: &PollOutcome) -> Vec<String> {
    outcome.events.iter().map(ToString::to_string).collect()
}

fn problems(outcome: &PollOutcome) -> Vec<String> {
    outcome.problems.iter().map(ToString::to_string).collect()
}

fn started(dir: &Path) -> DirectorySource {
    let mut source = DirectorySource::new(dir);
    source.poll();
    source
}

#[test]
fn first_poll_lists_everything_then_synced() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "nodes.yaml",
        &format!(
            "{}---\n{}",
            node("n2", "10.0.2.0/24"),
            node("n1", "10.0.1.0/24")
        ),
    );
    write(dir.path(), "pods.yml", &pod("web", "n1", "10.0.1.5"));
    let mut source = DirectorySource::new(dir.path());
    let store = source.store();
    assert!(!store.is_synced());
    let outcome = source.poll();
    assert_eq!(
        names(&outcome),
        [
            "NodeAdded n1",
            "NodeAdded n2",
            "PodAdded default/web",
            "Synced"
        ]
    );
    assert_eq!(problems(&outcome), Vec::<String>::new());
    assert!(store.is_synced());
    assert_eq!(store.nodes().len(), 2);
    assert_eq!(store.pods_on_node("n1").len(), 1);
    let again = source.poll();
    assert_eq!(names(&again), Vec::<String>::new());
}

#[test]
fn an_empty_directory_is_synced_and_a_missing_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut source = DirectorySource::new(dir.path());
    assert_eq!(names(&source.poll()), ["Synced"]);

    let missing = dir.path().join("later");
    let mut source = DirectorySource::new(&missing);
    let outcome = source.poll();
    assert_eq!(names(&outcome), Vec::<String>::new());
    assert!(problems(&outcome)[0].starts_with(&format!(
        "cannot list cluster directory {}: ",
        missing.display()
    )));
    assert!(!source.store().is_synced());
    fs::create_dir(&missing).unwrap();
    write(&missing, "n.yaml", &node("n1", "10.0.1.0/24"));
    assert_eq!(names(&source.poll()), ["NodeAdded n1", "Synced"]);
}

#[test]
fn changes_become_updates_with_old_and_new() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "n1.yaml", &node("n1", "10.0.1.0/24"));
    write(dir.path(), "p.yaml", &pod("web", "n1", "10.0.1.5"));
    let mut source = started(dir.path());
    write(dir.path(), "n1.yaml", &node("n1", "10.0.9.0/24"));
    write(dir.path(), "p.yaml", &pod("web", "n1", "10.0.9.5"));
    let outcome = source.poll();
    assert_eq!(
        names(&outcome),
        ["NodeUpdated n1", "PodUpdated default/web"]
    );
    let ClusterEvent::NodeUpdated { old, new } = &outcome.events[0] else {
        panic!()
    };
    assert_eq!(
        old.spec.as_ref().unwrap().pod_cidr.as_deref(),
        Some("10.0.1.0/24")
    );
    assert_eq!(
        new.spec.as_ref().unwrap().pod_cidr.as_deref(),
        Some("10.0.9.0/24")
    );
    let stored = source
        .store()
        .pod(&ObjectKey::new("default", "web"))
        .unwrap();
    assert_eq!(
        stored.status.as_ref().unwrap().pod_ip.as_deref(),
        Some("10.0.9.5")
    );
    // Rewriting a file with only a comment added changes no object.
    write(
        dir.path(),
        "n1.yaml",
        &format!("# edited\n{}", node("n1", "10.0.9.0/24")),
    );
    assert_eq!(names(&source.poll()), Vec::<String>::new());
}

#[test]
fn removed_files_delete_pods_before_nodes() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "all.yaml",
        &format!(
            "{}---\n{}",
            node("n1", "10.0.1.0/24"),
            pod("web", "n1", "10.0.1.5")
        ),
    );
    let mut source = started(dir.path());
    fs::remove_file(dir.path().join("all.yaml")).unwrap();
    assert_eq!(
        names(&source.poll()),
        ["PodDeleted default/web", "NodeDeleted n1"]
    );
    assert!(source.store().nodes().is_empty());
    assert!(source.store().pods().is_empty());
}

#[test]
fn documents_added_to_a_multi_document_file_are_added() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "c.yaml", &node("n1", "10.0.1.0/24"));
    let mut source = started(dir.path());
    let text = format!(
        "{}---\n{}---\n{}",
        node("n1", "10.0.1.0/24"),
        node("n2", "10.0.2.0/24"),
        pod("a", "n2", "10.0.2.2")
    );
    write(dir.path(), "c.yaml", &text);
    assert_eq!(
        names(&source.poll()),
        ["NodeAdded n2", "PodAdded default/a"]
    );
}

#[test]
fn a_malformed_file_keeps_its_last_good_objects() {
    let dir = tempfile::tempdir().unwrap();
    let good = format!(
        "{}---\n{}",
        node("n1", "10.0.1.0/24"),
        node("n2", "10.0.2.0/24")
    );
    write(dir.path(), "nodes.yaml", &good);
    write(dir.path(), "other.yaml", &node("n3", "10.0.3.0/24"));
    let mut source = started(dir.path());

    // Mid-edit: the second document lost a value's type; another file changes meanwhile.
    write(
        dir.path(),
        "nodes.yaml",
        &good.replace("podCIDR: 10.0.2.0/24", "podCIDR: {}"),
    );
    write(dir.path(), "other.yaml", &node("n3", "10.0.33.0/24"));
    let outcome = source.poll();
    assert_eq!(names(&outcome), ["NodeUpdated n3"]);
    let path = dir.path().join("nodes.yaml");
    assert_eq!(
        problems(&outcome),
        [format!(
            "{}: document 2: spec.podCIDR: invalid type: map, expected a string; keeping the objects it last held",
            path.display()
        )]
    );
    assert_eq!(source.store().nodes().len(), 3);
    // Reported once, not on every poll.
    assert_eq!(problems(&source.poll()), Vec::<String>::new());

    write(
        dir.path(),
        "nodes.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: [\n",
    );
    let outcome = source.poll();
    assert!(
        problems(&outcome)[0].contains("not valid YAML"),
        "{:?}",
        problems(&outcome)
    );
    assert_eq!(source.store().nodes().len(), 3);

    write(dir.path(), "nodes.yaml", &node("n1", "10.0.1.0/24"));
    assert_eq!(names(&source.poll()), ["NodeDeleted n2"]);
}

#[test]
fn a_new_malformed_file_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {}\n",
    );
    write(dir.path(), "b.yaml", &node("n1", "10.0.1.0/24"));
    let mut source = DirectorySource::new(dir.path());
    let outcome = source.poll();
    assert_eq!(names(&outcome), ["NodeAdded n1", "Synced"]);
    assert_eq!(
        problems(&outcome),
        [format!(
            "{}: document 1: metadata.name: missing; keeping the objects it last held",
            dir.path().join("a.yaml").display()
        )]
    );
}

#[test]
fn renaming_a_file_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "node.yaml", &node("n1", "10.0.1.0/24"));
    let mut source = started(dir.path());
    fs::rename(dir.path().join("node.yaml"), dir.path().join("renamed.yml")).unwrap();
    assert_eq!(names(&source.poll()), Vec::<String>::new());
    assert!(source.store().node("n1").is_some());
    // Renamed out of the watched names: the Node goes.
    fs::rename(
        dir.path().join("renamed.yml"),
        dir.path().join("renamed.yml.bak"),
    )
    .unwrap();
    assert_eq!(names(&source.poll()), ["NodeDeleted n1"]);
}

#[test]
fn unknown_kinds_are_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d}}\n---\n{}",
        node("n1", "10.0.1.0/24")
    );
    write(dir.path(), "mixed.yaml", &text);
    let outcome = DirectorySource::new(dir.path()).poll();
    assert_eq!(names(&outcome), ["NodeAdded n1", "Synced"]);
    assert_eq!(
        problems(&outcome),
        [format!(
            r#"{}: document 1: kind "Deployment" of apiVersion "apps/v1" is not used by the agent, ignored"#,
            dir.path().join("mixed.yaml").display()
        )]
    );
}

#[test]
fn hidden_files_other_extensions_and_subdirectories_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".n1.yaml.swp", &node("n1", "10.0.1.0/24"));
    write(dir.path(), "notes.txt", &node("n2", "10.0.2.0/24"));
    fs::create_dir(dir.path().join("sub.yaml")).unwrap();
    write(
        &dir.path().join("sub.yaml"),
        "n3.yaml",
        &node("n3", "10.0.3.0/24"),
    );
    write(
        dir.path(),
        "n4.json",
        r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n4"}}"#,
    );
    assert_eq!(
        names(&DirectorySource::new(dir.path()).poll()),
        ["NodeAdded n4", "Synced"]
    );
}

#[test]
fn an_object_in_two_files_is_taken_from_the_first() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.yaml", &node("n1", "10.0.1.0/24"));
    write(dir.path(), "b.yaml", &node("n1", "10.0.99.0/24"));
    let mut source = DirectorySource::new(dir.path());
    let outcome = source.poll();
    assert_eq!(names(&outcome), ["NodeAdded n1", "Synced"]);
    assert_eq!(
        outcome.problems,
        [SourceProblem::Duplicate {
            path: dir.path().join("b.yaml"),
            object: "Node n1".into(),
            used: dir.path().join("a.yaml"),
        }]
    );
    let stored = source.store().node("n1").unwrap();
    assert_eq!(
        stored.spec.as_ref().unwrap().pod_cidr.as_deref(),
        Some("10.0.1.0/24")
    );
    fs::remove_file(dir.path().join("a.yaml")).unwrap();
    assert_eq!(names(&source.poll()), ["NodeUpdated n1"]);
}

#[tokio::test]
async fn run_sends_events_until_the_receiver_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "n.yaml", &node("n1", "10.0.1.0/24"));
    let source = DirectorySource::new(dir.path());
    let store = source.store();
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let task = tokio::spawn(source.run(Duration::from_millis(10), tx));
    assert_eq!(rx.recv().await.unwrap().to_string(), "NodeAdded n1");
    assert_eq!(rx.recv().await.unwrap(), ClusterEvent::Synced);
    assert!(store.is_synced());
    write(dir.path(), "p.yaml", &pod("web", "n1", "10.0.1.5"));
    assert_eq!(rx.recv().await.unwrap().to_string(), "PodAdded default/web");
    drop(rx);
    write(dir.path(), "p.yaml", &pod("web", "n1", "10.0.1.6"));
    task.await.unwrap();
}

#[test]
fn the_documented_example_directory_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/cluster");
    let mut source = DirectorySource::new(&dir);
    let outcome = source.poll();
    assert_eq!(problems(&outcome), Vec::<String>::new());
    assert_eq!(
        names(&outcome),
        [
            "NodeAdded node1",
            "NodeAdded node2",
            "PodAdded default/web-0",
            "PodAdded test/client",
            "Synced"
        ]
    );
    let store = source.store();
    let node1 = store.node("node1").unwrap();
    let annotations = node1.metadata.annotations.as_ref().unwrap();
    assert_eq!(
        annotations["node.antrea.io/mac-address"],
        "0a:00:00:00:00:01"
    );
    let on_node2: Vec<String> = store
        .pods_on_node("node2")
        .iter()
        .map(|p| p.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(on_node2, ["client"]);
}
