//! The agent's Kubernetes stores at scale: 100,000 Pods (on 1,000 Nodes, in 100 Namespaces),
//! 10,000 Services with one 10-endpoint EndpointSlice each, and 50,000 NetworkPolicies,
//! generated in the fake API server (`fakeapi`, served over TCP on loopback by this process),
//! listed by the agent's [`SharedReflectors`] in a child process: time from start to every kind
//! synced, and the child's resident memory (VmRSS) before and after, and its peak (VmHWM). Run
//! once keeping objects whole and once without `managedFields` and the last-applied annotation
//! (what the agent does). The objects carry the metadata real ones do (labels, owner
//! references, kubelet's and kubectl's managedFields, conditions).
//! Run: `cargo bench -p agent --bench kube_sync` (`KUBE_SYNC_SCALE=0.1` for a tenth).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent::kubernetes::connection::{ApiAccess, connect};
use agent::kubernetes::{Keep, SharedReflectors};
use fakeapi::FakeApiServer;
use k8s_openapi::api::core::v1::{Namespace, Pod, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::api::networking::v1::NetworkPolicy;
use serde_json::{Value, json};

const PODS: usize = 100_000;
const SERVICES: usize = 10_000;
const POLICIES: usize = 50_000;
const NAMESPACES: usize = 100;
const NODES: usize = 1_000;
/// The child's role and what it keeps.
const ROLE: &str = "KUBE_SYNC_KEEP";

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

fn managed_fields(manager: &str, fields: Value) -> Value {
    json!({
        "manager": manager, "operation": "Update", "apiVersion": "v1",
        "time": "2026-11-29T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields,
    })
}

fn pod(i: usize) -> Value {
    let ns = format!("ns-{}", i % NAMESPACES);
    let app = format!("app-{}", i % scaled(SERVICES));
    let ip = format!("10.{}.{}.{}", 128 + (i >> 16) % 64, (i >> 8) % 256, i % 256);
    let conditions: Vec<Value> = ["Initialized", "Ready", "ContainersReady", "PodScheduled"]
        .iter()
        .map(|t| json!({"type": t, "status": "True", "lastTransitionTime": "2026-11-29T10:00:00Z"}))
        .collect();
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("{app}-7d9f8b6c5-{i:05x}"), "namespace": ns,
            "labels": {"app": app, "pod-template-hash": "7d9f8b6c5", "tier": "backend"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": format!("{app}-7d9f8b6c5"), "uid": format!("00000000-0000-0000-0000-{i:012}"),
                "controller": true, "blockOwnerDeletion": true}],
            "managedFields": [
                managed_fields("kube-controller-manager", json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:pod-template-hash": {}, "f:tier": {}}, "f:ownerReferences": {".": {}}}, "f:spec": {"f:containers": {"k:{\"name\":\"main\"}": {".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {}, "f:ports": {".": {}}, "f:resources": {".": {}}}}, "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {}}})),
                managed_fields("kubelet", json!({"f:status": {"f:conditions": {"k:{\"type\":\"Ready\"}": {".": {}, "f:lastTransitionTime": {}, "f:status": {}, "f:type": {}}}, "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {".": {}}, "f:startTime": {}}})),
            ],
        },
        "spec": {
            "nodeName": format!("node-{}", i % NODES),
            "containers": [{"name": "main", "image": "registry.example/app:1.2.3",
                "imagePullPolicy": "IfNotPresent", "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}],
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        },
        "status": {
            "phase": "Running", "hostIP": format!("10.10.{}.{}", (i % NODES) / 256, (i % NODES) % 256),
            "podIP": ip, "podIPs": [{"ip": ip}], "startTime": "2026-11-29T10:00:00Z",
            "conditions": conditions,
            "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0,
                "image": "registry.example/app:1.2.3", "imageID": "registry.example/app@sha256:0123456789abcdef",
                "containerID": format!("containerd://{i:064x}"), "started": true,
                "state": {"running": {"startedAt": "2026-11-29T10:00:01Z"}}}],
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

/// Makes object number `i` of a kind.
type Generator = fn(usize) -> Value;

fn seed(fake: &FakeApiServer) {
    let namespaces = fake.resource_of::<Namespace>().unwrap();
    for i in 0..NAMESPACES {
        fake.insert_json(
            &namespaces,
            json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": format!("ns-{i}"), "labels": {"team": format!("t{}", i % 20)}}}),
        )
        .unwrap();
    }
    let kinds: [(fakeapi::ResourceType, usize, Generator); 4] = [
        (fake.resource_of::<Pod>().unwrap(), scaled(PODS), pod),
        (
            fake.resource_of::<Service>().unwrap(),
            scaled(SERVICES),
            service,
        ),
        (
            fake.resource_of::<EndpointSlice>().unwrap(),
            scaled(SERVICES),
            endpoint_slice,
        ),
        (
            fake.resource_of::<NetworkPolicy>().unwrap(),
            scaled(POLICIES),
            policy,
        ),
    ];
    for (resource, count, make) in kinds {
        for i in 0..count {
            fake.insert_json(&resource, make(i)).unwrap();
        }
    }
}

/// The fake API server with the objects, and one measuring child per way of keeping them.
fn orchestrate() {
    let runtime = tokio::runtime::Runtime::new().expect("a Tokio runtime");
    let fake = FakeApiServer::builder().record_requests(false).build();
    let started = Instant::now();
    seed(&fake);
    println!(
        "kube_sync: {} Pods, {} Services, {} EndpointSlices, {} NetworkPolicies, {NAMESPACES} Namespaces generated in {:.1?}",
        scaled(PODS),
        scaled(SERVICES),
        scaled(SERVICES),
        scaled(POLICIES),
        started.elapsed()
    );
    let server = runtime
        .block_on(fake.serve_tcp())
        .expect("serve the fake over TCP");
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    println!(
        "{:<22} {:>10} {:>12} {:>12} {:>12} {:>12}",
        "objects kept", "sync", "RSS before", "RSS synced", "RSS delta", "peak RSS"
    );
    for keep in ["everything", "what-controllers-use"] {
        let child = Command::new(std::env::current_exe().unwrap())
            .env(ROLE, keep)
            .env("KUBECONFIG_PATH", &kubeconfig)
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn the measuring child");
        let out = child.wait_with_output().expect("the measuring child");
        let line = String::from_utf8_lossy(&out.stdout);
        let result: Value = BufReader::new(line.as_bytes())
            .lines()
            .map_while(Result::ok)
            .find_map(|l| serde_json::from_str(&l).ok())
            .unwrap_or_else(|| panic!("no result from the child: {line}"));
        let mib = |k: &str| result[k].as_f64().unwrap_or(0.0) / 1024.0;
        println!(
            "{:<22} {:>9.2}s {:>8.1} MiB {:>8.1} MiB {:>8.1} MiB {:>8.1} MiB",
            keep,
            result["sync_seconds"].as_f64().unwrap_or(0.0),
            mib("rss_before_kib"),
            mib("rss_synced_kib"),
            mib("rss_synced_kib") - mib("rss_before_kib"),
            mib("hwm_kib"),
        );
    }
    drop(server);
}

/// `VmRSS` and `VmHWM` of this process, in KiB.
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

/// The child: connect as the agent does, start the reflectors, wait for every kind.
fn measure(keep: &str) {
    let keep = match keep {
        "everything" => Keep::Everything,
        _ => Keep::WhatControllersUse,
    };
    let kubeconfig = std::env::var("KUBECONFIG_PATH").expect("KUBECONFIG_PATH");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a Tokio runtime");
    runtime.block_on(async {
        let client = connect(&ApiAccess {
            kubeconfig: Some(kubeconfig.into()),
            server_override: None,
        })
        .await
        .expect("a client");
        let (rss_before, _) = memory();
        let started = Instant::now();
        let reflectors = SharedReflectors::start(&client, keep);
        assert!(
            tokio::time::timeout(Duration::from_secs(1200), reflectors.wait_synced())
                .await
                .expect("synced within 20 minutes"),
            "a reflector stopped"
        );
        let sync = started.elapsed();
        // Let the last page's buffers go before reading the resident set.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (rss_synced, hwm) = memory();
        assert_eq!(reflectors.pods.store().len(), scaled(PODS));
        println!(
            "{}",
            json!({"sync_seconds": sync.as_secs_f64(), "rss_before_kib": rss_before,
                "rss_synced_kib": rss_synced, "hwm_kib": hwm})
        );
    });
}
