//! build/yamls/antrea-controller.yml as an operator applies it: kubectl applies it to the fake
//! API server, and what kubectl reads back is what runs. One replica on the control plane, its
//! ServiceAccount, the Service `antrea` on 443 reaching the container's `api` port 10349, and
//! the Deployment's command — with `POD_NAME` as the Downward API would set it — starts a
//! replica that takes the Lease under that name and watches its three kinds. Linux only, where
//! Debian's kubectl is (docs/manifests.md).

#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use fakeapi::FakeApiServer;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use serde_json::Value;

const KUBECTL: &str = "/usr/bin/kubectl";
/// A Pod name as the Deployment's ReplicaSet gives one.
const POD_NAME: &str = "antrea-controller-6d4b9c7f8-x2x7q";

fn manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../build/yamls/antrea-controller.yml")
}

/// kubectl's standard output against the kubeconfig in `dir`; the command must succeed. It runs
/// off the runtime's threads, which serve it.
async fn kubectl(dir: &Path, args: &[&str]) -> String {
    let mut command = Command::new(KUBECTL);
    command
        .arg("--kubeconfig")
        .arg(dir.join("kubeconfig"))
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .args(args)
        .env_remove("KUBECONFIG");
    let shown = args.join(" ");
    let output = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{KUBECTL} cannot run: {e}"));
    assert!(
        output.status.success(),
        "kubectl {shown} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

async fn get(dir: &Path, what: &[&str]) -> Value {
    let mut args = vec!["get"];
    args.extend_from_slice(what);
    args.extend_from_slice(&["-n", "kube-system", "-o", "json"]);
    serde_json::from_str(&kubectl(dir, &args).await).unwrap()
}

fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_runs_as_the_applied_deployment_says() {
    if !Path::new(KUBECTL).is_file() {
        testskip::skip(
            "the_controller_runs_as_the_applied_deployment_says",
            "Debian's kubectl is not installed",
        );
        return;
    }
    let fake = FakeApiServer::new();
    let tcp = fake.serve_tcp().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    tcp.write_kubeconfig(&dir.path().join("kubeconfig"))
        .unwrap();
    kubectl(dir.path(), &["apply", "-f", manifest().to_str().unwrap()]).await;

    let deployment = get(dir.path(), &["deployment", "antrea-controller"]).await;
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 1);
    let pod = &spec["template"]["spec"];
    assert_eq!(
        pod["nodeSelector"]["node-role.kubernetes.io/control-plane"],
        ""
    );
    assert!(
        pod["tolerations"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["key"] == "node-role.kubernetes.io/control-plane"
                && t["effect"] == "NoSchedule"),
        "the control plane's taint is tolerated: {pod:#}"
    );
    let account = pod["serviceAccountName"].as_str().unwrap();
    let applied_account = get(dir.path(), &["serviceaccount", account]).await;
    assert_eq!(applied_account["metadata"]["name"], "antrea-controller");
    let container = &pod["containers"][0];
    let pod_name = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "POD_NAME")
        .expect("POD_NAME in the container's environment");
    assert_eq!(
        pod_name["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.name"
    );

    // The Service reaches the container's api port, from the Pods the template labels.
    let service = get(dir.path(), &["service", "antrea"]).await;
    let port = &service["spec"]["ports"][0];
    assert_eq!(port["port"], 443);
    let target = &port["targetPort"];
    let api = container["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| &p["name"] == target || &p["containerPort"] == target)
        .unwrap_or_else(|| panic!("no container port {target}"));
    assert_eq!(api["containerPort"], 10349);
    for (key, value) in service["spec"]["selector"].as_object().unwrap() {
        assert_eq!(&spec["template"]["metadata"]["labels"][key], value, "{key}");
    }

    // The container's command, the image's antrea-controller being this build's.
    let command = strings(&container["command"]);
    assert_eq!(command.first(), Some(&"antrea-controller"));
    let args = command[1..]
        .iter()
        .chain(strings(&container["args"]).iter())
        .map(|a| (*a).to_owned())
        .collect::<Vec<_>>();
    let _replica = Killed(
        Command::new(env!("CARGO_BIN_EXE_antrea-controller"))
            .args(&args)
            .arg("--kubeconfig")
            .arg(dir.path().join("kubeconfig"))
            .env("POD_NAME", POD_NAME)
            .env("RUST_LOG", "info")
            .spawn()
            .expect("antrea-controller starts"),
    );
    let start = Instant::now();
    loop {
        let holder = fake
            .get::<Lease>("kube-system", "antrea-controller")
            .unwrap()
            .and_then(|lease| lease.spec?.holder_identity);
        let watching = fake.active_watches_of::<Pod>() > 0
            && fake.active_watches_of::<Namespace>() > 0
            && fake.active_watches_of::<NetworkPolicy>() > 0;
        if holder.as_deref() == Some(POD_NAME) && watching {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the replica started with {args:?} did not lead (holder {holder:?}) and watch"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
