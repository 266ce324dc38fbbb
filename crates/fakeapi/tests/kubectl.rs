//! The real kubectl (`/usr/bin/kubectl`) against the fake over TCP, as a user would drive a real
//! cluster: discovery with short names and categories, server-side Tables (`get`, `get -o wide`,
//! `get -w`), `describe`, `apply` validated through OpenAPI v3 and `fieldValidation=Strict`
//! (create and update), `label` and `delete`, for each printed kind. Assertions are on kubectl's
//! own output and on the objects the fake then holds; `apply` of a Pod and a Service yields the
//! EndpointSlice the fake's controller makes. Without kubectl these tests fail.

#![cfg(target_os = "linux")]

mod support;

use fakeapi::{FakeApiServer, ResourceType, TcpServer};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use support::PATIENCE;

const KUBECTL: &str = "/usr/bin/kubectl";

/// One fake served over TCP with a kubeconfig and a private kubectl cache.
struct Cluster {
    server: FakeApiServer,
    _tcp: TcpServer,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

impl Cluster {
    async fn new() -> Self {
        Self::serving(FakeApiServer::new()).await
    }

    /// `server` served over TCP, with a kubeconfig for it.
    async fn serving(server: FakeApiServer) -> Self {
        let tcp = server.serve_tcp().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        tcp.write_kubeconfig(&kubeconfig).unwrap();
        Self {
            server,
            _tcp: tcp,
            dir,
            kubeconfig,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(KUBECTL);
        command
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.path().join("cache"))
            .args(args)
            .env_remove("KUBECONFIG");
        command
    }

    /// Runs kubectl to completion (off the runtime's threads, which serve it).
    async fn kubectl(&self, args: &[&str]) -> Output {
        let mut command = self.command(args);
        let shown = args.join(" ");
        tokio::task::spawn_blocking(move || {
            command.output().unwrap_or_else(|e| {
                panic!("{KUBECTL} cannot run ({e}): install Debian's kubectl to run these tests")
            })
        })
        .await
        .unwrap_or_else(|e| panic!("kubectl {shown}: {e}"))
    }

    /// kubectl's standard output; the command must succeed.
    async fn ok(&self, args: &[&str]) -> String {
        let out = self.kubectl(args).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "kubectl {} failed: {stderr}",
            args.join(" ")
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// kubectl's standard error; the command must fail.
    async fn fails(&self, args: &[&str]) -> String {
        let out = self.kubectl(args).await;
        assert!(
            !out.status.success(),
            "kubectl {} succeeded: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stderr).unwrap()
    }

    /// Writes a manifest into the test's directory and returns its path.
    fn manifest(&self, name: &str, yaml: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, yaml).unwrap();
        path.to_str().unwrap().to_owned()
    }

    fn stored(&self, kind: &Kind, name: &str) -> Option<Value> {
        self.server.get_json(&kind.resource(), kind.namespace, name)
    }

    /// Replaces the stored object's `status` (what a kubelet or controller would write).
    fn set_status(&self, kind: &Kind, name: &str, status: Value) {
        let mut object = self.stored(kind, name).expect("object to give a status");
        object["status"] = status;
        self.server.insert_json(&kind.resource(), object).unwrap();
    }
}

/// The rows of a kubectl table, cells split where kubectl pads (two spaces or more).
fn table(stdout: &str) -> Vec<Vec<String>> {
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            line.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// Whether `cell` is an AGE kubectl prints for an object made seconds ago.
fn is_fresh_age(cell: &str) -> bool {
    cell.strip_suffix('s')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// One printed kind and how the test drives it.
struct Kind {
    group: &'static str,
    plural: &'static str,
    /// What kubectl calls objects of it (`pod`, `networkpolicy.networking.k8s.io`).
    display: &'static str,
    namespace: &'static str,
    /// The columns of `get` and of `get -o wide`.
    columns: &'static [&'static str],
    wide: &'static [&'static str],
}

impl Kind {
    fn resource(&self) -> ResourceType {
        ResourceType::builtin()
            .into_iter()
            .find(|r| r.group == self.group && r.plural == self.plural)
            .unwrap()
    }

    fn namespace_args(&self) -> Vec<&str> {
        if self.namespace.is_empty() {
            Vec::new()
        } else {
            vec!["-n", self.namespace]
        }
    }
}

/// get, get -o wide, describe, apply (create and update), label and delete of one object of
/// `kind`; `first` and `second` are two versions of its manifest, `status` what the cluster
/// then reports for it, `row` the cells `get -o wide` must show (None: not checked, the AGE
/// column is checked to be fresh).
struct Exercise<'a> {
    kind: &'a Kind,
    name: &'a str,
    first: &'a str,
    second: &'a str,
    status: Option<Value>,
    row: &'a [Option<&'a str>],
    /// A JSON pointer the update changes, and its value after it.
    updated: (&'a str, Value),
    /// A JSON pointer the update leaves as the first apply set it.
    kept: (&'a str, Value),
}

async fn exercise(cluster: &Cluster, e: Exercise<'_>) {
    let kind = e.kind;
    let ns = kind.namespace_args();
    let with_ns = |args: &[&'static str]| -> Vec<String> {
        args.iter()
            .map(|a| (*a).to_owned())
            .chain(ns.iter().map(|a| (*a).to_owned()))
            .collect()
    };
    let run = |args: Vec<String>| async move {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cluster.ok(&args).await
    };
    let first = cluster.manifest(&format!("{}-1.yaml", e.name), e.first);
    let second = cluster.manifest(&format!("{}-2.yaml", e.name), e.second);

    let created = run(["apply", "-f", first.as_str()]
        .iter()
        .map(|a| (*a).to_owned())
        .collect())
    .await;
    assert_eq!(
        created.trim(),
        format!("{}/{} created", kind.display, e.name)
    );
    if let Some(status) = e.status.clone() {
        cluster.set_status(kind, e.name, status);
    }

    let listed = table(&run(with_ns(&["get", kind.plural])).await);
    assert_eq!(listed[0], kind.columns, "{} columns", kind.plural);
    assert_eq!(listed.len(), 2, "one {} row: {listed:?}", kind.plural);
    assert_eq!(listed[1][0], e.name);
    let age = kind.columns.iter().position(|c| *c == "AGE").unwrap();
    assert!(is_fresh_age(&listed[1][age]), "AGE {:?}", listed[1][age]);

    let mut wide_args = with_ns(&["get", kind.plural, "-o", "wide"]);
    wide_args.push(e.name.to_owned());
    let wide = table(&run(wide_args).await);
    assert_eq!(wide[0], kind.wide, "{} wide columns", kind.plural);
    assert_eq!(wide[1].len(), kind.wide.len(), "{:?}", wide[1]);
    for (i, (cell, want)) in wide[1].iter().zip(e.row).enumerate() {
        if let Some(want) = want {
            assert_eq!(cell, want, "{} column {}", kind.plural, kind.wide[i]);
        }
    }

    let mut describe = with_ns(&["describe", kind.plural]);
    describe.push(e.name.to_owned());
    let described = run(describe).await;
    assert!(
        described
            .lines()
            .any(|l| l.starts_with("Name:") && l.trim_end().ends_with(e.name)),
        "describe {}:\n{described}",
        kind.plural
    );

    let configured = run(["apply", "-f", second.as_str()]
        .iter()
        .map(|a| (*a).to_owned())
        .collect())
    .await;
    assert_eq!(
        configured.trim(),
        format!("{}/{} configured", kind.display, e.name)
    );
    let stored = cluster.stored(kind, e.name).unwrap();
    assert_eq!(stored.pointer(e.updated.0), Some(&e.updated.1), "{stored}");
    assert_eq!(stored.pointer(e.kept.0), Some(&e.kept.1), "{stored}");

    let mut label = with_ns(&["label", kind.plural]);
    label.extend([e.name.to_owned(), "checked=yes".to_owned()]);
    let labeled = run(label).await;
    assert_eq!(
        labeled.trim(),
        format!("{}/{} labeled", kind.display, e.name)
    );
    let stored = cluster.stored(kind, e.name).unwrap();
    assert_eq!(stored["metadata"]["labels"]["checked"], "yes");
    let mut selected = with_ns(&["get", kind.plural, "-l", "checked=yes", "-o", "name"]);
    selected.push("--no-headers".to_owned());
    assert_eq!(
        run(selected).await.trim(),
        format!("{}/{}", kind.display, e.name)
    );

    let mut delete = with_ns(&["delete", kind.plural]);
    delete.push(e.name.to_owned());
    let deleted = run(delete).await;
    assert_eq!(
        deleted.trim(),
        format!("{} \"{}\" deleted", kind.display, e.name)
    );
    assert!(cluster.stored(kind, e.name).is_none());
}

const PODS: Kind = Kind {
    group: "",
    plural: "pods",
    display: "pod",
    namespace: "default",
    columns: &["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
    wide: &[
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ],
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pods_print_apply_label_and_delete_as_against_a_real_server() {
    let cluster = Cluster::new().await;
    let pod = |image: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: default\nspec:\n  nodeName: n1\n  containers:\n  - name: app\n    image: {image}\n    ports:\n    - containerPort: 80\n  - name: side\n    image: busybox\n"
        )
    };
    let status = json!({"phase": "Running", "podIP": "10.10.1.5", "containerStatuses": [
        {"name": "app", "ready": true, "restartCount": 2, "image": "nginx", "imageID": "", "state": {"running": {}}},
        {"name": "side", "ready": true, "restartCount": 0, "image": "busybox", "imageID": "", "state": {"running": {}}}]});
    exercise(
        &cluster,
        Exercise {
            kind: &PODS,
            name: "web",
            first: &pod("nginx:1"),
            second: &pod("nginx:2"),
            status: Some(status),
            row: &[
                Some("web"),
                Some("2/2"),
                Some("Running"),
                Some("2"),
                None,
                Some("10.10.1.5"),
                Some("n1"),
                Some("<none>"),
                Some("<none>"),
            ],
            updated: ("/spec/containers/0/image", json!("nginx:2")),
            kept: ("/spec/containers/0/ports/0/containerPort", json!(80)),
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_print_their_status_roles_and_wide_columns() {
    let cluster = Cluster::new().await;
    let kind = Kind {
        group: "",
        plural: "nodes",
        display: "node",
        namespace: "",
        columns: &["NAME", "STATUS", "ROLES", "AGE", "VERSION"],
        wide: &[
            "NAME",
            "STATUS",
            "ROLES",
            "AGE",
            "VERSION",
            "INTERNAL-IP",
            "EXTERNAL-IP",
            "OS-IMAGE",
            "KERNEL-VERSION",
            "CONTAINER-RUNTIME",
        ],
    };
    let node = |cidr: &str| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n    node-role.kubernetes.io/worker: \"\"\nspec:\n  podCIDR: {cidr}\n  providerID: lab://n1\n"
        )
    };
    let status = json!({"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ready"}],
        "addresses": [{"type": "InternalIP", "address": "10.10.0.11"}, {"type": "Hostname", "address": "n1"}],
        "nodeInfo": {"kubeletVersion": "v1.33.0", "osImage": "Debian GNU/Linux 12", "kernelVersion": "6.1.0",
            "containerRuntimeVersion": "containerd://1.7.24", "machineID": "", "systemUUID": "", "bootID": "",
            "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"}});
    exercise(
        &cluster,
        Exercise {
            kind: &kind,
            name: "n1",
            first: &node("10.10.1.0/24"),
            second: &node("10.10.2.0/24"),
            status: Some(status),
            row: &[
                Some("n1"),
                Some("Ready"),
                Some("worker"),
                None,
                Some("v1.33.0"),
                Some("10.10.0.11"),
                Some("<none>"),
                Some("Debian GNU/Linux 12"),
                Some("6.1.0"),
                Some("containerd://1.7.24"),
            ],
            updated: ("/spec/podCIDR", json!("10.10.2.0/24")),
            kept: ("/spec/providerID", json!("lab://n1")),
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn services_print_type_ips_ports_and_selector() {
    let cluster = Cluster::new().await;
    let kind = Kind {
        group: "",
        plural: "services",
        display: "service",
        namespace: "default",
        columns: &[
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
        ],
        wide: &[
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
            "SELECTOR",
        ],
    };
    let service = |target: u16| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: default\nspec:\n  type: NodePort\n  clusterIP: 10.96.0.10\n  selector:\n    app: web\n  ports:\n  - name: http\n    port: 80\n    targetPort: {target}\n    nodePort: 30080\n    protocol: TCP\n  - name: dns\n    port: 53\n    protocol: UDP\n"
        )
    };
    exercise(
        &cluster,
        Exercise {
            kind: &kind,
            name: "web",
            first: &service(8080),
            second: &service(9090),
            status: None,
            row: &[
                Some("web"),
                Some("NodePort"),
                Some("10.96.0.10"),
                Some("<none>"),
                Some("80:30080/TCP,53/UDP"),
                None,
                Some("app=web"),
            ],
            updated: ("/spec/ports/0/targetPort", json!(9090)),
            kept: ("/spec/ports/1/port", json!(53)),
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_slices_print_address_type_ports_and_endpoints() {
    let cluster = Cluster::new().await;
    let columns: &[&str] = &["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"];
    let kind = Kind {
        group: "discovery.k8s.io",
        plural: "endpointslices",
        display: "endpointslice.discovery.k8s.io",
        namespace: "default",
        columns,
        wide: columns,
    };
    let slice = |last: &str| {
        format!(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: web-abc\n  namespace: default\n  labels:\n    kubernetes.io/service-name: web\naddressType: IPv4\nports:\n- name: http\n  port: 8080\n  protocol: TCP\nendpoints:\n- addresses: [10.10.1.5]\n- addresses: [10.10.1.6]\n- addresses: [10.10.2.7]\n- addresses: [{last}]\n"
        )
    };
    exercise(
        &cluster,
        Exercise {
            kind: &kind,
            name: "web-abc",
            first: &slice("10.10.2.8"),
            second: &slice("10.10.2.9"),
            status: None,
            row: &[
                Some("web-abc"),
                Some("IPv4"),
                Some("8080"),
                Some("10.10.1.5,10.10.1.6,10.10.2.7 + 1 more..."),
                None,
            ],
            updated: ("/endpoints/3/addresses/0", json!("10.10.2.9")),
            kept: ("/ports/0/port", json!(8080)),
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_of_a_pod_and_a_service_yields_an_endpoint_slice() {
    let server = FakeApiServer::new();
    server.start_endpointslice_controller().unwrap();
    let cluster = Cluster::serving(server).await;
    let manifest = cluster.manifest(
        "web.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: default\n  labels:\n    app: web\nspec:\n  nodeName: n1\n  containers:\n  - name: app\n    image: nginx\n    ports:\n    - name: http\n      containerPort: 8080\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: default\nspec:\n  selector:\n    app: web\n  ports:\n  - name: http\n    port: 80\n    targetPort: http\n",
    );
    cluster.ok(&["apply", "-f", &manifest]).await;
    // The kubelet's part: the Pod runs with its IP and is Ready.
    cluster.set_status(
        &PODS,
        "web",
        json!({"phase": "Running", "podIP": "10.10.1.5", "podIPs": [{"ip": "10.10.1.5"}],
               "conditions": [{"type": "Ready", "status": "True"}]}),
    );
    let args = [
        "get",
        "endpointslices",
        "-l",
        "kubernetes.io/service-name=web",
    ];
    let deadline = std::time::Instant::now() + PATIENCE;
    let rows = loop {
        let rows = table(&cluster.ok(&args).await);
        if rows
            .get(1)
            .is_some_and(|row| row.get(3).map(String::as_str) == Some("10.10.1.5"))
        {
            break rows;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no slice of web with the Pod's address within {PATIENCE:?}: {rows:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(
        rows[0],
        ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    );
    assert!(rows[1][0].starts_with("web-"), "{rows:?}");
    assert_eq!(rows[1][1..4], ["IPv4", "8080", "10.10.1.5"]);
    assert!(is_fresh_age(&rows[1][4]), "{rows:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_policies_print_their_pod_selector() {
    let cluster = Cluster::new().await;
    let columns: &[&str] = &["NAME", "POD-SELECTOR", "AGE"];
    let kind = Kind {
        group: "networking.k8s.io",
        plural: "networkpolicies",
        display: "networkpolicy.networking.k8s.io",
        namespace: "default",
        columns,
        wide: columns,
    };
    let policy = |port: u16| {
        format!(
            "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: web-ingress\n  namespace: default\nspec:\n  podSelector:\n    matchLabels:\n      app: web\n  policyTypes: [Ingress]\n  ingress:\n  - ports:\n    - port: {port}\n      protocol: TCP\n"
        )
    };
    exercise(
        &cluster,
        Exercise {
            kind: &kind,
            name: "web-ingress",
            first: &policy(80),
            second: &policy(8080),
            status: None,
            row: &[Some("web-ingress"), Some("app=web"), None],
            updated: ("/spec/ingress/0/ports/0/port", json!(8080)),
            kept: ("/spec/policyTypes/0", json!("Ingress")),
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespaces_and_leases_print_their_columns() {
    let cluster = Cluster::new().await;
    let columns: &[&str] = &["NAME", "STATUS", "AGE"];
    let namespaces = Kind {
        group: "",
        plural: "namespaces",
        display: "namespace",
        namespace: "",
        columns,
        wide: columns,
    };
    let namespace = |team: &str| {
        format!(
            "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n  annotations:\n    owner: {team}\n    keep: \"1\"\n"
        )
    };
    exercise(
        &cluster,
        Exercise {
            kind: &namespaces,
            name: "team",
            first: &namespace("blue"),
            second: &namespace("green"),
            status: Some(json!({"phase": "Active"})),
            row: &[Some("team"), Some("Active"), None],
            updated: ("/metadata/annotations/owner", json!("green")),
            kept: ("/metadata/annotations/keep", json!("1")),
        },
    )
    .await;

    let columns: &[&str] = &["NAME", "HOLDER", "AGE"];
    let leases = Kind {
        group: "coordination.k8s.io",
        plural: "leases",
        display: "lease.coordination.k8s.io",
        namespace: "kube-node-lease",
        columns,
        wide: columns,
    };
    let lease = |seconds: u32| {
        format!(
            "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: n1\n  namespace: kube-node-lease\nspec:\n  holderIdentity: n1\n  leaseDurationSeconds: {seconds}\n"
        )
    };
    exercise(
        &cluster,
        Exercise {
            kind: &leases,
            name: "n1",
            first: &lease(40),
            second: &lease(60),
            status: None,
            row: &[Some("n1"), Some("n1"), None],
            updated: ("/spec/leaseDurationSeconds", json!(60)),
            kept: ("/spec/holderIdentity", json!("n1")),
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_node_reads_the_node_lease() {
    let cluster = Cluster::new().await;
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "n1", "namespace": "kube-node-lease"},
        "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 40, "renewTime": "2026-01-02T03:04:05.000000Z"}});
    let resource = |plural: &str| {
        ResourceType::builtin()
            .into_iter()
            .find(|r| r.plural == plural)
            .unwrap()
    };
    cluster
        .server
        .insert_json(&resource("nodes"), node)
        .unwrap();
    cluster
        .server
        .insert_json(&resource("leases"), lease)
        .unwrap();
    let described = cluster.ok(&["describe", "node", "n1"]).await;
    let lines: Vec<Vec<&str>> = described
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let at = lines
        .iter()
        .position(|l| l.as_slice() == ["Lease:"])
        .unwrap_or_else(|| panic!("no Lease section:\n{described}"));
    assert_eq!(lines[at + 1], ["HolderIdentity:", "n1"], "{described}");
    assert_eq!(lines[at + 3][0], "RenewTime:");
    assert!(lines[at + 3].contains(&"2026"), "{described}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_names_and_the_all_category_resolve() {
    let cluster = Cluster::new().await;
    let objects = [
        (
            "namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}, "status": {"phase": "Active"}}),
        ),
        (
            "nodes",
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}),
        ),
        (
            "pods",
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}, "status": {"phase": "Pending"}}),
        ),
        (
            "services",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"}, "spec": {"clusterIP": "10.96.0.10", "ports": [{"port": 80}]}}),
        ),
        (
            "networkpolicies",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "deny", "namespace": "default"}, "spec": {"podSelector": {}}}),
        ),
    ];
    for (plural, object) in objects {
        let resource = ResourceType::builtin()
            .into_iter()
            .find(|r| r.plural == plural)
            .unwrap();
        cluster.server.insert_json(&resource, object).unwrap();
    }
    let names = |out: &str| -> Vec<String> {
        table(out)
            .into_iter()
            .filter(|row| row[0] != "NAME")
            .map(|row| row[0].clone())
            .collect()
    };
    let out = cluster.ok(&["get", "ns,no,po,svc"]).await;
    assert_eq!(
        names(&out),
        ["namespace/default", "node/n1", "pod/web", "service/web"],
        "{out}"
    );
    let out = cluster.ok(&["get", "all"]).await;
    assert_eq!(names(&out), ["pod/web", "service/web"], "{out}");
    let out = cluster.ok(&["get", "netpol", "-o", "name"]).await;
    assert_eq!(out.trim(), "networkpolicy.networking.k8s.io/deny");
    for short in [
        "ep",
        "ev",
        "cm",
        "sa",
        "lease",
        "endpointslices",
        "ds",
        "deploy",
        "roles",
        "rolebindings",
    ] {
        let out = cluster.kubectl(&["get", short]).await;
        assert!(
            out.status.success(),
            "get {short}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    let resources = cluster.ok(&["api-resources", "--no-headers"]).await;
    let row = |name: &str| -> Vec<String> {
        resources
            .lines()
            .map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .find(|cells| cells[0] == name)
            .unwrap_or_else(|| panic!("no {name} in api-resources:\n{resources}"))
    };
    assert_eq!(row("pods"), ["pods", "po", "v1", "true", "Pod"]);
    assert_eq!(
        row("namespaces"),
        ["namespaces", "ns", "v1", "false", "Namespace"]
    );
    assert_eq!(
        row("networkpolicies"),
        [
            "networkpolicies",
            "netpol",
            "networking.k8s.io/v1",
            "true",
            "NetworkPolicy"
        ]
    );
    assert_eq!(
        row("endpointslices"),
        [
            "endpointslices",
            "discovery.k8s.io/v1",
            "true",
            "EndpointSlice"
        ]
    );
    assert_eq!(
        row("leases"),
        ["leases", "coordination.k8s.io/v1", "true", "Lease"]
    );
    assert_eq!(
        row("daemonsets"),
        ["daemonsets", "ds", "apps/v1", "true", "DaemonSet"]
    );
    assert_eq!(
        row("deployments"),
        ["deployments", "deploy", "apps/v1", "true", "Deployment"]
    );
    assert_eq!(
        row("roles"),
        ["roles", "rbac.authorization.k8s.io/v1", "true", "Role"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_rejects_an_unknown_field_as_a_real_server_does() {
    let cluster = Cluster::new().await;
    let bad = cluster.manifest(
        "bad.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\nspec:\n  containers:\n  - name: c\n    image: busybox\n    imagePullPolicyy: Always\n",
    );
    let stderr = cluster.fails(&["apply", "-f", &bad]).await;
    assert_eq!(
        stderr.trim(),
        format!(
            "Error from server (BadRequest): error when creating \"{bad}\": Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field \"spec.containers[0].imagePullPolicyy\""
        )
    );
    assert!(cluster.stored(&PODS, "bad").is_none());

    // An update with an unknown field is refused too, and the object stays as it was.
    let good = cluster.manifest(
        "good.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 80\n",
    );
    cluster.ok(&["apply", "-f", &good]).await;
    let worse = cluster.manifest(
        "worse.yaml",
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  ports:\n  - port: 81\n  colour: red\n",
    );
    let stderr = cluster.fails(&["apply", "-f", &worse]).await;
    assert!(
        stderr.contains("strict decoding error: unknown field \"spec.colour\""),
        "{stderr}"
    );
    let services = Kind {
        group: "",
        plural: "services",
        display: "service",
        namespace: "default",
        columns: &[],
        wide: &[],
    };
    assert_eq!(
        cluster.stored(&services, "web").unwrap()["spec"]["ports"][0]["port"],
        80
    );

    // --validate=warn: created, with the server's warning printed.
    let out = cluster
        .kubectl(&["apply", "--validate=warn", "-f", &bad])
        .await;
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "pod/bad created"
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Warning: unknown field \"spec.containers[0].imagePullPolicyy\""
    );
}

/// Lines of a running `kubectl get -w`, read on a thread of their own.
fn watch_lines(mut command: Command) -> (std::process::Child, mpsc::Receiver<String>) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{KUBECTL} cannot run ({e})"));
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// The next watch line that starts with `prefix` (cells split as in [`table`]).
async fn line_starting(rx: &mut mpsc::Receiver<String>, prefix: &[&str]) -> Vec<String> {
    let (owned, prefix): (mpsc::Receiver<String>, Vec<String>) = (
        std::mem::replace(rx, mpsc::channel().1),
        prefix.iter().map(|p| (*p).to_owned()).collect(),
    );
    let (found, back) = tokio::task::spawn_blocking(move || {
        loop {
            match owned.recv_timeout(PATIENCE) {
                Ok(line) => {
                    let cells = table(&line).pop().unwrap_or_default();
                    if cells.starts_with(&prefix) {
                        return (cells, owned);
                    }
                }
                Err(e) => panic!("no watch line starting {prefix:?}: {e}"),
            }
        }
    })
    .await
    .unwrap();
    *rx = back;
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_watch_prints_each_event_as_a_table_row() {
    let cluster = Cluster::new().await;
    let pods = PODS.resource();
    let pod = |name: &str, phase: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}, "status": {"phase": phase}})
    };
    cluster
        .server
        .insert_json(&pods, pod("a", "Running"))
        .unwrap();
    let (mut child, mut rx) =
        watch_lines(cluster.command(&["get", "pods", "-w", "--output-watch-events", "-o", "wide"]));
    let header = line_starting(&mut rx, &["EVENT"]).await;
    assert_eq!(header[1..], PODS.wide[..]);
    let first = line_starting(&mut rx, &["ADDED", "a"]).await;
    assert_eq!(first[2..4], ["0/1", "Running"]);
    cluster
        .server
        .insert_json(&pods, pod("b", "Pending"))
        .unwrap();
    let added = line_starting(&mut rx, &["ADDED", "b"]).await;
    assert_eq!(added[3], "Pending");
    cluster
        .server
        .insert_json(&pods, pod("b", "Running"))
        .unwrap();
    let modified = line_starting(&mut rx, &["MODIFIED", "b"]).await;
    assert_eq!(modified[3], "Running");
    cluster.server.delete_json(&pods, "default", "a").unwrap();
    line_starting(&mut rx, &["DELETED", "a"]).await;
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The AGE check accepts only what kubectl prints for a fresh object.
#[test]
fn fresh_ages() {
    assert!(is_fresh_age("0s") && is_fresh_age("12s"));
    assert!(!is_fresh_age("s") && !is_fresh_age("3m") && !is_fresh_age("<unknown>"));
    assert_eq!(
        table("NAME   READY   NOMINATED NODE\nweb    1/1     <none>\n"),
        [
            ["NAME", "READY", "NOMINATED NODE"],
            ["web", "1/1", "<none>"]
        ]
    );
}
