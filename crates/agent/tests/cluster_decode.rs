//! `agent::cluster::decode_documents`: Kubernetes YAML documents into Nodes and Pods.

use agent::cluster::{ClusterObject, DecodeProblem, Node, Pod, Position, decode_documents};

const NODE: &str = r#"
apiVersion: v1
kind: Node
metadata:
  name: node1
  annotations:
    node.antrea.io/mac-address: "0a:00:00:00:00:01"
spec:
  podCIDR: 10.10.1.0/24
  podCIDRs: [10.10.1.0/24]
status:
  addresses:
    - type: InternalIP
      address: 192.168.77.11
    - type: Hostname
      address: node1
"#;

const POD: &str = r#"
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  labels: {app: web}
spec:
  nodeName: node1
  containers: [{name: web, image: nginx}]
status:
  podIP: 10.10.1.5
  podIPs: [{ip: 10.10.1.5}]
"#;

fn node(object: &ClusterObject) -> &Node {
    match object {
        ClusterObject::Node(n) => n,
        other => panic!("not a Node: {other:?}"),
    }
}

fn pod(object: &ClusterObject) -> &Pod {
    match object {
        ClusterObject::Pod(p) => p,
        other => panic!("not a Pod: {other:?}"),
    }
}

fn problem(text: &str) -> String {
    decode_documents(text).expect_err("accepted").to_string()
}

#[test]
fn node_fields_are_decoded() {
    let file = decode_documents(NODE).unwrap();
    assert_eq!(file.skipped, vec![]);
    let [object] = file.objects.as_slice() else {
        panic!("{:?}", file.objects)
    };
    let n = node(object);
    assert_eq!(n.metadata.name.as_deref(), Some("node1"));
    let annotations = n.metadata.annotations.as_ref().unwrap();
    assert_eq!(
        annotations["node.antrea.io/mac-address"],
        "0a:00:00:00:00:01"
    );
    let spec = n.spec.as_ref().unwrap();
    assert_eq!(spec.pod_cidr.as_deref(), Some("10.10.1.0/24"));
    assert_eq!(
        spec.pod_cidrs.as_deref(),
        Some(&["10.10.1.0/24".to_owned()][..])
    );
    let addresses = n.status.as_ref().unwrap().addresses.as_ref().unwrap();
    assert_eq!(
        (addresses[0].type_.as_str(), addresses[0].address.as_str()),
        ("InternalIP", "192.168.77.11")
    );
}

#[test]
fn pod_fields_are_decoded_and_namespace_defaults() {
    let file = decode_documents(POD).unwrap();
    let p = pod(&file.objects[0]);
    assert_eq!(p.metadata.namespace.as_deref(), Some("default"));
    assert_eq!(p.metadata.labels.as_ref().unwrap()["app"], "web");
    assert_eq!(p.spec.as_ref().unwrap().node_name.as_deref(), Some("node1"));
    let status = p.status.as_ref().unwrap();
    assert_eq!(status.pod_ip.as_deref(), Some("10.10.1.5"));
    assert_eq!(status.pod_ips.as_ref().unwrap()[0].ip, "10.10.1.5");
    let explicit =
        decode_documents(&POD.replace("  name: web-0", "  name: web-0\n  namespace: prod"))
            .unwrap();
    assert_eq!(
        pod(&explicit.objects[0]).metadata.namespace.as_deref(),
        Some("prod")
    );
}

#[test]
fn documents_and_lists_keep_file_order() {
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n{}",
        [NODE.replace("node1", "node2"), POD.to_owned()]
            .iter()
            .map(|doc| {
                let mut lines = doc.trim().lines();
                let first = format!("- {}\n", lines.next().unwrap());
                first + &lines.map(|l| format!("  {l}\n")).collect::<String>()
            })
            .collect::<String>()
    );
    let text = format!("{NODE}---\n{list}---\n# only a comment\n");
    let file = decode_documents(&text).unwrap();
    assert_eq!(file.objects.len(), 3);
    assert_eq!(
        node(&file.objects[0]).metadata.name.as_deref(),
        Some("node1")
    );
    assert_eq!(
        node(&file.objects[1]).metadata.name.as_deref(),
        Some("node2")
    );
    assert_eq!(
        pod(&file.objects[2]).metadata.name.as_deref(),
        Some("web-0")
    );
    assert_eq!(decode_documents("").unwrap().objects, vec![]);
    assert_eq!(
        decode_documents("apiVersion: v1\nkind: List\nitems:\n")
            .unwrap()
            .objects,
        vec![]
    );
}

#[test]
fn other_kinds_are_skipped_with_their_position() {
    let text = format!(
        "apiVersion: v1\nkind: Service\nmetadata: {{name: s}}\n---\n{NODE}---\napiVersion: apps/v1\nkind: Pod\n"
    );
    let file = decode_documents(&text).unwrap();
    assert_eq!(file.objects.len(), 1);
    assert_eq!(
        file.skipped,
        vec![
            DecodeProblem::UnknownKind {
                position: Position {
                    document: 1,
                    item: None
                },
                api_version: "v1".into(),
                kind: "Service".into()
            },
            DecodeProblem::UnknownKind {
                position: Position {
                    document: 3,
                    item: None
                },
                api_version: "apps/v1".into(),
                kind: "Pod".into()
            },
        ]
    );
    assert_eq!(
        file.skipped[0].to_string(),
        r#"document 1: kind "Service" of apiVersion "v1" is not used by the agent, ignored"#
    );
}

#[test]
fn malformed_documents_name_position_and_field() {
    let bad_cidr = NODE.replace("podCIDR: 10.10.1.0/24", "podCIDR: [1, 2]");
    let message = problem(&format!("{POD}---\n{bad_cidr}"));
    assert!(
        message.starts_with("document 2: spec.podCIDR: invalid type: sequence, expected a string"),
        "{message}"
    );
    assert_eq!(
        problem("apiVersion: v1\nkind: Node\nmetadata: {}\n"),
        "document 1: metadata.name: missing"
    );
    assert_eq!(
        problem("apiVersion: v1\nmetadata: {name: a}\n"),
        "document 1: kind: expected a non-empty string"
    );
    assert_eq!(
        problem("kind: Node\n"),
        "document 1: apiVersion: expected a non-empty string"
    );
    assert_eq!(
        problem("- a\n"),
        "document 1: expected a Kubernetes object (a mapping)"
    );
    assert_eq!(
        problem(
            "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: ''}\n"
        ),
        "document 1 item 1: metadata.name: missing"
    );
    assert_eq!(
        problem("apiVersion: v1\nkind: List\nitems: 3\n"),
        "document 1: items: expected a list"
    );
    let message = problem("apiVersion: v1\nkind: Node\nmetadata: {name: [\n");
    assert!(
        message.starts_with("not valid YAML: ") && message.contains("line 3"),
        "{message}"
    );
}
