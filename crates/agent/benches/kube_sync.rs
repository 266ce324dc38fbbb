//! The agent's Kubernetes stores at scale: 100,000 Pods (on 1,000 Nodes, in 100 Namespaces),
//! 10,000 Services with one 10-endpoint EndpointSlice each, and 50,000 NetworkPolicies,
//! generated in the fake API server (`fakeapi`, served over TCP on loopback by this process).
//!
//! The stores are measured in a child process that holds nothing but them: it connects as the
//! agent does, starts the agent's [`SharedReflectors`] and reports the time until each kind is
//! synced (its first paged list stored), its resident memory (VmRSS) before the reflectors
//! start and once every kind is synced, its peak (VmHWM), and the JSON size of what the stores
//! hold. The fake API server and its objects stay in this process, so the child's RSS delta is
//! the stores plus what the allocator keeps of the list pages' buffers.
//!
//! One scenario per kind (the server holds only that kind and the 100 Namespaces, so the other
//! reflectors list nothing) and one with every kind; each runs once keeping objects whole and
//! once as the agent does ([`Keep::WhatControllersUse`]). The objects carry what real ones do
//! (labels, owner references, the fields the API server defaults, kubelet's and the controller
//! manager's managedFields, kubectl's last-applied annotation, conditions, container statuses).
//!
//! Run: `cargo bench -p agent --bench kube_sync` (`KUBE_SYNC_SCALE=0.1` for a tenth of every
//! count). Linux only for the memory figures (they come from `/proc/self/status`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent::kubernetes::connection::{ApiAccess, connect};
use agent::kubernetes::reflectors::Reflected;
use agent::kubernetes::{Keep, Kinds, SharedReflectors};
use fakeapi::FakeApiServer;
use k8s_openapi::api::core::v1::{Namespace, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use kube::Resource;
use serde::Serialize;
use serde_json::{Value, json};

const PODS: usize = 100_000;
const SERVICES: usize = 10_000;
const POLICIES: usize = 50_000;
const NAMESPACES: usize = 100;
const NODES: usize = 1_000;
/// Set in the child: what it keeps.
const ROLE: &str = "KUBE_SYNC_KEEP";
/// Set in the child: how many objects of each kind the server holds (checked after the sync).
const EXPECTED: &str = "KUBE_SYNC_EXPECTED";
/// The kinds the benchmark generates, in the order the child reports them.
const KINDS: [Kind; 4] = [
    Kind::Pods,
    Kind::Services,
    Kind::EndpointSlices,
    Kind::NetworkPolicies,
];

fn main() {
    match std::env::var(ROLE) {
        Ok(keep) => measure(&keep),
        Err(_) => orchestrate(),
    }
}

fn scale() -> f64 {
    std::env::var("KUBE_SYNC_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0)
}

fn scaled(n: usize) -> usize {
    ((n as f64) * scale()).max(1.0) as usize
}

/// A kind of object the server is filled with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pods,
    Services,
    EndpointSlices,
    NetworkPolicies,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Pods => "Pods",
            Kind::Services => "Services",
            Kind::EndpointSlices => "EndpointSlices",
            Kind::NetworkPolicies => "NetworkPolicies",
        }
    }

    fn count(self) -> usize {
        match self {
            Kind::Pods => scaled(PODS),
            Kind::Services | Kind::EndpointSlices => scaled(SERVICES),
            Kind::NetworkPolicies => scaled(POLICIES),
        }
    }

    /// Fills `fake` with this kind's objects.
    fn seed(self, fake: &FakeApiServer) {
        let (resource, make): (_, fn(usize) -> Value) = match self {
            Kind::Pods => (fake.resource_of::<Pod>(), pod),
            Kind::Services => (fake.resource_of::<Service>(), service),
            Kind::EndpointSlices => (fake.resource_of::<EndpointSlice>(), endpoint_slice),
            Kind::NetworkPolicies => (fake.resource_of::<NetworkPolicy>(), policy),
        };
        let resource = resource.expect("a built-in resource");
        for i in 0..self.count() {
            fake.insert_json(&resource, make(i))
                .expect("insert a generated object");
        }
    }
}

fn managed_fields(manager: &str, fields: Value) -> Value {
    json!({
        "manager": manager, "operation": "Update", "apiVersion": "v1",
        "time": "2026-11-29T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields,
    })
}

/// A Deployment's Pod as the API server returns it once kubelet runs it: the defaults the API
/// server fills in (service account token volume, tolerations, termination message, ...)
/// included.
fn pod(i: usize) -> Value {
    let ns = format!("ns-{}", i % NAMESPACES);
    let app = format!("app-{}", i % scaled(SERVICES));
    let ip = format!("10.{}.{}.{}", 128 + (i >> 16) % 64, (i >> 8) % 256, i % 256);
    let host_ip = format!("10.10.{}.{}", (i % NODES) / 256, (i % NODES) % 256);
    let token_volume = format!("kube-api-access-{:05x}", i % 0xfffff);
    let conditions: Vec<Value> = [
        "PodReadyToStartContainers",
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    .iter()
    .map(|t| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": "2026-11-29T10:00:00Z"}))
    .collect();
    let tolerations: Vec<Value> = ["not-ready", "unreachable"]
        .iter()
        .map(|t| json!({"key": format!("node.kubernetes.io/{t}"), "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}))
        .collect();
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{app}-7d9f8b6c5-{i:05x}"), "generateName": format!("{app}-7d9f8b6c5-"),
            "namespace": ns,
            "labels": {"app": app, "pod-template-hash": "7d9f8b6c5", "tier": "backend"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": format!("{app}-7d9f8b6c5"), "uid": format!("00000000-0000-0000-0000-{i:012}"),
                "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [
                managed_fields("kube-controller-manager", json!({"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:tier": {}}, "f:ownerReferences": {".": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"main\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:ports": {".": {}}, "f:resources": {".": {}}, "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {}}}, "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {}, "f:terminationGracePeriodSeconds": {}}})),
                managed_fields("kubelet", json!({"f:status": {"f:conditions": {"k:{\"type\":\"ContainersReady\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}, "k:{\"type\":\"Initialized\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}, "k:{\"type\":\"Ready\"}": {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}}, "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {".": {}, "k:{\"ip\":\"10.0.0.1\"}": {".": {}, "f:ip": {}}}, "f:startTime": {}}})),
            ],
        },
        "spec": {
            "nodeName": format!("node-{}", i % NODES),
            "volumes": [{"name": token_volume, "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ]}}],
            "containers": [{"name": "main", "image": "registry.example/app:1.2.3",
                "imagePullPolicy": "IfNotPresent", "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                "volumeMounts": [{"name": token_volume, "readOnly": true,
                    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}],
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
            "serviceAccountName": "default", "serviceAccount": "default", "terminationGracePeriodSeconds": 30,
            "securityContext": {}, "tolerations": tolerations, "priority": 0,
            "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority",
        },
        "status": {
            "phase": "Running", "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
            "podIP": ip, "podIPs": [{"ip": ip}], "startTime": "2026-11-29T10:00:00Z",
            "conditions": conditions, "qosClass": "Burstable",
            "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0,
                "image": "registry.example/app:1.2.3", "imageID": "registry.example/app@sha256:0123456789abcdef",
                "containerID": format!("containerd://{i:064x}"), "started": true, "lastState": {},
                "state": {"running": {"startedAt": "2026-11-29T10:00:01Z"}},
                "volumeMounts": [{"name": token_volume, "readOnly": true, "recursiveReadOnly": "Disabled",
                    "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
        },
    })
}

fn last_applied(object: &Value) -> String {
    object.to_string()
}

fn service(i: usize) -> Value {
    let app = format!("app-{i}");
    let mut s = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": app, "namespace": format!("ns-{}", i % NAMESPACES), "labels": {"app": app}},
        "spec": {"selector": {"app": app}, "type": "ClusterIP",
            "clusterIP": format!("10.96.{}.{}", i / 256, i % 256),
            "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]},
    });
    let applied = last_applied(&s);
    s["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": applied});
    s["metadata"]["managedFields"] = json!([managed_fields(
        "kubectl-client-side-apply",
        json!({"f:metadata": {"f:annotations": {}, "f:labels": {}}, "f:spec": {"f:ports": {}, "f:selector": {}, "f:type": {}}})
    )]);
    s
}

fn endpoint_slice(i: usize) -> Value {
    let app = format!("app-{i}");
    let endpoints: Vec<Value> = (0..10)
        .map(|e| {
            json!({
                "addresses": [format!("10.{}.{}.{}", 128 + e, i / 256 % 256, i % 256)],
                "conditions": {"ready": true, "serving": true, "terminating": false},
                "nodeName": format!("node-{}", (i + e) % NODES),
                "targetRef": {"kind": "Pod", "namespace": format!("ns-{}", i % NAMESPACES),
                    "name": format!("{app}-{e}")},
            })
        })
        .collect();
    json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": format!("{app}-abcde"), "namespace": format!("ns-{}", i % NAMESPACES),
            "labels": {"kubernetes.io/service-name": app, "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"}},
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
    })
}

fn policy(i: usize) -> Value {
    let mut p = json!({
        "apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
        "metadata": {"name": format!("policy-{i}"), "namespace": format!("ns-{}", i % NAMESPACES)},
        "spec": {
            "podSelector": {"matchLabels": {"app": format!("app-{}", i % scaled(SERVICES))}},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"team": format!("t{}", i % 20)}},
                "podSelector": {"matchLabels": {"tier": "frontend"}}}],
                "ports": [{"protocol": "TCP", "port": 8080}]}],
        },
    });
    let applied = last_applied(&p);
    p["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": applied});
    p
}

/// A fake API server holding the Namespaces and `kinds`.
fn server_with(kinds: &[Kind]) -> FakeApiServer {
    let fake = FakeApiServer::builder().record_requests(false).build();
    let namespaces = fake.resource_of::<Namespace>().expect("Namespaces");
    for i in 0..NAMESPACES {
        fake.insert_json(
            &namespaces,
            json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": format!("ns-{i}"), "labels": {"team": format!("t{}", i % 20)}}}),
        )
        .expect("insert a Namespace");
    }
    for kind in kinds {
        kind.seed(&fake);
    }
    fake
}

/// What one child reported.
struct Measured {
    /// Seconds from starting the reflectors to every kind synced.
    sync: f64,
    /// Seconds to each kind synced, in [`KINDS`] order.
    kind_sync: Vec<f64>,
    rss_before_kib: f64,
    rss_synced_kib: f64,
    hwm_kib: f64,
    /// Objects in the stores (Namespaces included).
    objects: f64,
    /// JSON size of what the stores hold (Namespaces included).
    json_bytes: f64,
}

/// Runs the measuring child against the server `kubeconfig` points at.
fn run_child(keep: &str, kubeconfig: &std::path::Path, kinds: &[Kind]) -> Measured {
    let expected: Vec<String> = KINDS
        .iter()
        .map(|k| {
            if kinds.contains(k) {
                k.count().to_string()
            } else {
                "0".into()
            }
        })
        .collect();
    let child = Command::new(std::env::current_exe().expect("this benchmark's path"))
        .env(ROLE, keep)
        .env(EXPECTED, expected.join(","))
        .env("KUBECONFIG_PATH", kubeconfig)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the measuring child");
    let out = child.wait_with_output().expect("the measuring child");
    assert!(out.status.success(), "the measuring child failed");
    let text = String::from_utf8_lossy(&out.stdout);
    let result: Value = BufReader::new(text.as_bytes())
        .lines()
        .map_while(Result::ok)
        .find_map(|l| serde_json::from_str(&l).ok())
        .unwrap_or_else(|| panic!("no result from the child: {text}"));
    let number = |k: &str| result[k].as_f64().unwrap_or(0.0);
    Measured {
        sync: number("sync_seconds"),
        kind_sync: result["kind_sync_seconds"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect())
            .unwrap_or_default(),
        rss_before_kib: number("rss_before_kib"),
        rss_synced_kib: number("rss_synced_kib"),
        hwm_kib: number("hwm_kib"),
        objects: number("objects"),
        json_bytes: number("json_bytes"),
    }
}

/// Every scenario: a server per kind, then one with every kind; a child per way of keeping.
fn orchestrate() {
    let runtime = tokio::runtime::Runtime::new().expect("a Tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kubeconfig = dir.path().join("kubeconfig");
    println!(
        "kube_sync: {} Pods, {} Services, {} EndpointSlices, {} NetworkPolicies, \
         {NAMESPACES} Namespaces in every scenario; the stores in a child process",
        scaled(PODS),
        scaled(SERVICES),
        scaled(SERVICES),
        scaled(POLICIES),
    );
    println!(
        "the typed objects' own sizes (allocated per stored object, whatever it keeps): \
         Pod {} B, Service {} B, EndpointSlice {} B, NetworkPolicy {} B",
        std::mem::size_of::<Pod>(),
        std::mem::size_of::<Service>(),
        std::mem::size_of::<EndpointSlice>(),
        std::mem::size_of::<NetworkPolicy>(),
    );
    println!(
        "{:<16} {:<11} {:>8} {:>9} {:>11} {:>11} {:>11} {:>10} {:>10}",
        "scenario",
        "kept",
        "objects",
        "sync",
        "RSS before",
        "RSS delta",
        "peak delta",
        "B/object",
        "JSON B/obj"
    );
    let mut scenarios: Vec<(&str, Vec<Kind>)> =
        KINDS.iter().map(|k| (k.name(), vec![*k])).collect();
    scenarios.push(("all", KINDS.to_vec()));
    for (name, kinds) in scenarios {
        let fake = server_with(&kinds);
        let server = runtime
            .block_on(fake.serve_tcp())
            .expect("serve the fake over TCP");
        server
            .write_kubeconfig(&kubeconfig)
            .expect("write the kubeconfig");
        for keep in ["everything", "agent"] {
            let m = run_child(keep, &kubeconfig, &kinds);
            let mib = |kib: f64| kib / 1024.0;
            let delta_kib = m.rss_synced_kib - m.rss_before_kib;
            println!(
                "{:<16} {:<11} {:>8} {:>8.2}s {:>7.1} MiB {:>7.1} MiB {:>7.1} MiB {:>10.0} {:>10.0}",
                name,
                keep,
                m.objects,
                m.sync,
                mib(m.rss_before_kib),
                mib(delta_kib),
                mib(m.hwm_kib - m.rss_before_kib),
                delta_kib * 1024.0 / m.objects,
                m.json_bytes / m.objects,
            );
            if kinds.len() > 1 {
                let each: Vec<String> = KINDS
                    .iter()
                    .zip(&m.kind_sync)
                    .map(|(k, s)| format!("{} {s:.2}s", k.name()))
                    .collect();
                println!("{:<16} {:<11} synced: {}", "", "", each.join(", "));
            }
        }
        drop(server);
    }
}

/// `VmRSS` and `VmHWM` of this process, in KiB (0 where `/proc` is not there).
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Seconds from `started` until `kind` is synced.
async fn synced_after<K>(kind: &Reflected<K>, started: Instant) -> f64
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    assert!(kind.synced().await, "a reflector stopped");
    started.elapsed().as_secs_f64()
}

/// How many objects a store holds, and their JSON size.
fn json_size<K>(kind: &Reflected<K>) -> (usize, usize)
where
    K: Resource<DynamicType = ()> + Clone + Serialize + 'static,
{
    let objects = kind.store().state();
    let bytes = objects
        .iter()
        .map(|o| serde_json::to_vec(&**o).map_or(0, |j| j.len()))
        .sum();
    (objects.len(), bytes)
}

/// The child: connect as the agent does, start the reflectors, wait for every kind.
fn measure(keep: &str) {
    let keep = match keep {
        "everything" => Keep::Everything,
        _ => Keep::WhatControllersUse,
    };
    let kubeconfig = std::env::var("KUBECONFIG_PATH").expect("KUBECONFIG_PATH");
    let expected: Vec<usize> = std::env::var(EXPECTED)
        .expect("KUBE_SYNC_EXPECTED")
        .split(',')
        .map(|n| n.parse().expect("a count"))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    runtime.block_on(async {
        let (client, _) = connect(&ApiAccess {
            kubeconfig: Some(kubeconfig.into()),
            server_override: None,
        })
        .await
        .expect("a client");
        let (rss_before, _) = memory();
        let started = Instant::now();
        let reflectors = SharedReflectors::start(&client, keep, Kinds::PolicyAndServices);
        let policy = reflectors.policy.as_ref().expect("the policy kinds");
        let all = async {
            tokio::join!(
                synced_after(&policy.namespaces, started),
                synced_after(&policy.pods, started),
                synced_after(&reflectors.services, started),
                synced_after(&reflectors.endpoint_slices, started),
                synced_after(&policy.network_policies, started),
            )
        };
        let (_, pods, services, slices, policies) =
            tokio::time::timeout(Duration::from_secs(1200), all)
                .await
                .expect("synced within 20 minutes");
        let sync = started.elapsed();
        let (rss_synced, hwm) = memory();
        let sizes = [
            json_size(&policy.pods),
            json_size(&reflectors.services),
            json_size(&reflectors.endpoint_slices),
            json_size(&policy.network_policies),
        ];
        let counts: Vec<usize> = sizes.iter().map(|(n, _)| *n).collect();
        assert_eq!(counts, expected, "objects stored per kind");
        let namespaces = json_size(&policy.namespaces);
        let (objects, bytes) = sizes
            .iter()
            .fold(namespaces, |(n, b), (kn, kb)| (n + kn, b + kb));
        println!(
            "{}",
            json!({"sync_seconds": sync.as_secs_f64(),
                "kind_sync_seconds": [pods, services, slices, policies],
                "rss_before_kib": rss_before, "rss_synced_kib": rss_synced, "hwm_kib": hwm,
                "objects": objects, "json_bytes": bytes})
        );
    });
}
