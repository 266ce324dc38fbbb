//! The deployable manifests of build/yamls: every one passes the Kubernetes 1.33 schemas
//! (`kubernetes-validate`, offline, strict), the agent ConfigMaps hold configurations the agent's
//! own parser accepts with every key it implements, and kubectl applies each file to the fake API
//! server and gets back every object it holds. An agent then runs on a Node with the
//! configuration kubectl reads back from the applied ConfigMap, and a Pod is added with the
//! ConfigMap's conflist. docs/manifests.md describes the files. The
//! configuration tests run on every platform; the validator and kubectl ones on Linux, where
//! scripts/setup.sh installs both.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use agent::config::{AgentConfig, Platform};
use serde_json::Value;

#[cfg(target_os = "linux")]
mod objects;
#[cfg(target_os = "linux")]
mod support;

/// The ConfigMaps that carry `antrea-agent.conf`: file, ConfigMap, platform, conflist.
const AGENT_CONFIG_MAPS: &[(&str, &str, Platform, &str)] = &[
    (
        "antrea-agent-linux.yml",
        "antrea-config",
        Platform::Linux,
        "10-antrea.conflist",
    ),
    (
        "antrea-agent-windows.yml",
        "antrea-windows-config",
        Platform::Windows,
        "windows/10-antrea.conflist",
    ),
    (
        "antrea-agent-windows-with-ovs.yml",
        "antrea-windows-config",
        Platform::Windows,
        "windows/10-antrea.conflist",
    ),
];

fn build_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../build")
}

fn manifest_path(file: &str) -> PathBuf {
    build_dir().join("yamls").join(file)
}

/// The documents of a manifest, in order.
fn documents(file: &str) -> Vec<Value> {
    let text =
        std::fs::read_to_string(manifest_path(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// The text of `key` in the ConfigMap `name` of `file`.
fn config_map_entry(file: &str, name: &str, key: &str) -> String {
    let documents = documents(file);
    let config_map = documents
        .iter()
        .find(|d| d["kind"] == "ConfigMap" && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{file}: no ConfigMap {name}"));
    config_map["data"][key]
        .as_str()
        .unwrap_or_else(|| panic!("{file}: ConfigMap {name} has no {key}"))
        .to_owned()
}

/// The configuration with every commented key uncommented: `#key: value` and the nested
/// `#  key: value` become `key: value` and `  key: value`; prose comments stay.
fn uncommented(conf: &str) -> String {
    let mut text = String::new();
    for line in conf.lines() {
        let indent = line.len() - line.trim_start().len();
        match line[indent..].strip_prefix('#') {
            Some(body) if is_key_line(body) => text.push_str(&format!("{}{body}", &line[..indent])),
            _ => text.push_str(line),
        }
        text.push('\n');
    }
    text
}

/// Whether a comment's text is a key (`  name: value` or `name:`), not prose.
fn is_key_line(body: &str) -> bool {
    let Some((name, rest)) = body.trim_start().split_once(':') else {
        return false;
    };
    name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric())
        && (rest.is_empty() || rest.starts_with(' '))
}

/// The dotted path of every key of a YAML mapping, nested ones included.
fn key_paths(value: &Value, prefix: &str, paths: &mut BTreeSet<String>) {
    if let Value::Object(map) = value {
        for (key, child) in map {
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            key_paths(child, &path, paths);
            paths.insert(path);
        }
    }
}

#[test]
fn the_config_maps_configure_the_agent_without_a_warning() {
    for (file, name, platform, conflist) in AGENT_CONFIG_MAPS {
        let conf = config_map_entry(file, name, "antrea-agent.conf");
        let loaded = AgentConfig::parse(&conf, *platform)
            .unwrap_or_else(|e| panic!("{file}: antrea-agent.conf is refused: {e}"));
        assert_eq!(loaded.warnings, vec![], "{file}");
        let mut expected = AgentConfig::defaults(*platform);
        if *platform == Platform::Windows {
            // What Windows Nodes need: no kube-proxy, so the agent serves every Service and
            // reaches the API server directly.
            expected.antrea_proxy.proxy_all = true;
            expected.kube_api_server_override = Some("https://CONTROL-PLANE-ADDRESS:6443".into());
        }
        assert_eq!(loaded.config, expected, "{file}");

        let shipped: Value = serde_json::from_str(
            &std::fs::read_to_string(build_dir().join("cni").join(conflist)).unwrap(),
        )
        .unwrap();
        let in_config_map: Value =
            serde_json::from_str(&config_map_entry(file, name, "antrea-cni.conflist"))
                .unwrap_or_else(|e| panic!("{file}: antrea-cni.conflist: {e}"));
        assert_eq!(in_config_map, shipped, "{file}: antrea-cni.conflist");
    }
    // Both Windows variants carry the same ConfigMap antrea-windows-config.
    let services = &documents("antrea-agent-windows.yml")[0];
    let with_ovs = &documents("antrea-agent-windows-with-ovs.yml")[0];
    assert_eq!(services["metadata"], with_ovs["metadata"]);
    let keys = |config_map: &Value| config_map["data"].as_object().map(|d| d.len());
    assert_eq!(keys(services), Some(2));
    assert_eq!(keys(with_ovs), Some(2));
    for key in ["antrea-agent.conf", "antrea-cni.conflist"] {
        let (a, b) = (&services["data"][key], &with_ovs["data"][key]);
        let first_difference = (a.as_str().unwrap().lines())
            .zip(b.as_str().unwrap().lines())
            .find(|(a, b)| a != b);
        assert!(
            a == b,
            "antrea-windows-config {key} differs between the Windows variants: {first_difference:?}"
        );
    }
}

#[test]
fn every_implemented_key_is_in_the_config_maps_with_a_value_the_agent_accepts() {
    let implemented = AgentConfig::implemented_keys();
    assert!(
        implemented.len() >= 30
            && implemented
                .iter()
                .any(|k| k == "takeoverWatchdog.lostProbes"),
        "the parser's key list looks wrong: {implemented:?}"
    );
    for (file, name, platform, _) in AGENT_CONFIG_MAPS {
        let conf = uncommented(&config_map_entry(file, name, "antrea-agent.conf"));
        let loaded = AgentConfig::parse(&conf, *platform).unwrap_or_else(|e| {
            panic!("{file}: antrea-agent.conf with every key uncommented is refused: {e}\n{conf}")
        });
        assert_eq!(
            loaded.warnings,
            vec![],
            "{file}: antrea-agent.conf with every key uncommented"
        );
        let document: Value = serde_saphyr::from_str(&conf).unwrap();
        let mut present = BTreeSet::new();
        key_paths(&document, "", &mut present);
        let missing: Vec<&String> = implemented
            .iter()
            .filter(|key| !present.contains(*key))
            .collect();
        assert!(
            missing.is_empty(),
            "{file}: ConfigMap {name} does not document {missing:?}"
        );
    }
}

#[cfg(target_os = "linux")]
mod linux_tools {
    //! The manifests through two Linux programs: `kubernetes-validate` and Debian's kubectl.

    use super::*;
    use fakeapi::FakeApiServer;
    use std::process::{Command, Output};

    /// The Kubernetes version the manifests are validated against: k8s-openapi's `v1_33`.
    const KUBERNETES_VERSION: &str = "1.33.0";
    const KUBECTL: &str = "/usr/bin/kubectl";

    /// The manifests users apply, each checked by every test below.
    const MANIFESTS: &[&str] = &[
        "antrea-agent-rbac.yml",
        "antrea-agent-linux.yml",
        "antrea-agent-windows.yml",
        "antrea-agent-windows-with-ovs.yml",
        "antrea-controller.yml",
    ];

    /// `kind/name` of each document, as kubectl names objects.
    fn object_names(documents: &[Value]) -> Vec<String> {
        documents
            .iter()
            .map(|d| {
                format!(
                    "{}/{}",
                    d["kind"].as_str().expect("a kind").to_lowercase(),
                    d["metadata"]["name"].as_str().expect("a name")
                )
            })
            .collect()
    }

    /// Every directory of `PATH` searched for `program`.
    fn on_path(program: &str) -> Option<PathBuf> {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join(program))
            .find(|path| path.is_file())
    }

    /// `kubernetes-validate` (pip; scripts/setup.sh installs it): `KUBERNETES_VALIDATE`, else `PATH`.
    fn validator() -> Option<PathBuf> {
        std::env::var_os("KUBERNETES_VALIDATE")
            .map(PathBuf::from)
            .or_else(|| on_path("kubernetes-validate"))
    }

    fn output_text(output: &Output) -> String {
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }

    #[test]
    fn every_manifest_passes_the_kubernetes_schemas_strictly() {
        let Some(validator) = validator() else {
            testskip::skip(
                "every_manifest_passes_the_kubernetes_schemas_strictly",
                "kubernetes-validate is not installed (scripts/setup.sh installs it)",
            );
            return;
        };
        for file in MANIFESTS {
            let output = Command::new(&validator)
                .args(["--kubernetes-version", KUBERNETES_VERSION, "--strict"])
                .arg(manifest_path(file))
                .output()
                .unwrap_or_else(|e| panic!("{} cannot run: {e}", validator.display()));
            let text = output_text(&output);
            // An unknown kind or version is only a warning to the validator: it has no schema.
            let problems: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with("ERROR") || l.starts_with("WARN"))
                .collect();
            assert!(
                output.status.success() && problems.is_empty(),
                "{file} does not pass the Kubernetes {KUBERNETES_VERSION} schemas:\n{text}"
            );
            let passed = text
                .lines()
                .filter(|l| l.starts_with("INFO") && l.contains(" passed for resource "))
                .count();
            assert_eq!(
                passed,
                documents(file).len(),
                "{file}: not every document was validated:\n{text}"
            );
        }
    }

    /// kubectl against one fake API server over TCP, with its own kubeconfig and cache.
    struct Cluster {
        server: FakeApiServer,
        _tcp: fakeapi::TcpServer,
        dir: tempfile::TempDir,
    }

    impl Cluster {
        /// A fresh fake API server.
        async fn new() -> Self {
            Self::serving(FakeApiServer::new()).await
        }

        /// kubectl against `server`.
        async fn serving(server: FakeApiServer) -> Self {
            let tcp = server.serve_tcp().await.unwrap();
            let dir = tempfile::tempdir().unwrap();
            tcp.write_kubeconfig(&dir.path().join("kubeconfig"))
                .unwrap();
            Self {
                server,
                _tcp: tcp,
                dir,
            }
        }

        /// kubectl's standard output; the command must succeed. It runs off the runtime's threads,
        /// which serve it.
        async fn kubectl(&self, args: &[&str]) -> String {
            let mut command = Command::new(KUBECTL);
            command
                .arg("--kubeconfig")
                .arg(self.dir.path().join("kubeconfig"))
                .arg("--cache-dir")
                .arg(self.dir.path().join("cache"))
                .args(args)
                .env_remove("KUBECONFIG");
            let shown = args.join(" ");
            let output = tokio::task::spawn_blocking(move || command.output())
                .await
                .unwrap()
                .unwrap_or_else(|e| panic!("{KUBECTL} cannot run: {e}"));
            assert!(
                output.status.success(),
                "kubectl {shown} failed:\n{}",
                output_text(&output)
            );
            String::from_utf8(output.stdout).unwrap()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn kubectl_applies_every_manifest_to_the_fake_api_server_and_gets_its_objects() {
        if !Path::new(KUBECTL).is_file() {
            testskip::skip(
                "kubectl_applies_every_manifest_to_the_fake_api_server_and_gets_its_objects",
                "Debian's kubectl is not installed",
            );
            return;
        }
        for file in MANIFESTS {
            let cluster = Cluster::new().await;
            let path = manifest_path(file);
            let path = path.to_str().unwrap();
            let documents = documents(file);
            let names = object_names(&documents);

            // kubectl validates against the fake's OpenAPI and asks for strict field validation.
            let applied = cluster.kubectl(&["apply", "-f", path]).await;
            let created: Vec<String> = names.iter().map(|n| format!("{n} created")).collect();
            let printed: Vec<String> = applied
                .lines()
                .map(|line| {
                    line.split_once('/')
                        .map_or(line.to_owned(), |(kind, rest)| {
                            // `clusterrole.rbac.authorization.k8s.io/x created`: the kind without its group.
                            format!("{}/{rest}", kind.split('.').next().unwrap_or(kind))
                        })
                })
                .collect();
            assert_eq!(printed, created, "{file}: kubectl apply printed\n{applied}");

            let listed: Value =
                serde_json::from_str(&cluster.kubectl(&["get", "-f", path, "-o", "json"]).await)
                    .unwrap();
            let items = listed["items"].as_array().expect("a List");
            assert_eq!(items.len(), documents.len(), "{file}: {listed:#}");
            for (document, item) in documents.iter().zip(items) {
                assert_eq!(item["kind"], document["kind"], "{file}");
                assert_eq!(
                    item["metadata"]["name"], document["metadata"]["name"],
                    "{file}"
                );
                assert_eq!(
                    item["metadata"]["namespace"], document["metadata"]["namespace"],
                    "{file}"
                );
                for (field, value) in document.as_object().unwrap() {
                    if field != "metadata" {
                        assert_eq!(&item[field], value, "{file}: {} {field}", item["kind"]);
                    }
                }
            }

            let again = cluster.kubectl(&["apply", "-f", path]).await;
            assert!(
                again.lines().all(|line| line.ends_with(" unchanged")),
                "{file}: a second apply changed something:\n{again}"
            );
        }
    }

    /// What a DaemonSet Pod would mount, read back through kubectl: `key` of the applied
    /// ConfigMap `name` in `kube-system`.
    fn config_map_data(
        runtime: &tokio::runtime::Runtime,
        cluster: &Cluster,
        name: &str,
        key: &str,
    ) -> String {
        let path = format!("jsonpath={{.data.{}}}", key.replace('.', "\\."));
        runtime.block_on(cluster.kubectl(&[
            "get",
            "configmap",
            name,
            "-n",
            "kube-system",
            "-o",
            &path,
        ]))
    }

    /// The operator's path end to end: kubectl applies the agent RBAC and the Linux DaemonSet's
    /// file to the API server, the agent runs on a Node with the `antrea-agent.conf` kubectl
    /// reads back from the ConfigMap (only the test's host paths and the userspace datapath are
    /// put before it), and a Pod is added with the ConfigMap's `antrea-cni.conflist` as kubelet
    /// hands its first plugin to the plugin.
    #[test]
    fn the_agent_runs_with_the_config_map_kubectl_applied() {
        use support::{Lan, TestNode, ping, serve_in, wait_until};

        if !Path::new(KUBECTL).is_file() {
            testskip::skip(
                "the_agent_runs_with_the_config_map_kubectl_applied",
                "Debian's kubectl is not installed",
            );
            return;
        }
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let fake = FakeApiServer::new();
        fake.insert(&objects::node("n1", "10.10.0.11", Some("10.244.1.0/24")))
            .unwrap();
        let cluster = runtime.block_on(Cluster::serving(fake.clone()));
        for file in ["antrea-agent-rbac.yml", "antrea-agent-linux.yml"] {
            let path = manifest_path(file);
            runtime.block_on(cluster.kubectl(&["apply", "-f", path.to_str().unwrap()]));
        }
        let conf = config_map_data(&runtime, &cluster, "antrea-config", "antrea-agent.conf");
        assert_eq!(
            conf,
            config_map_entry(
                "antrea-agent-linux.yml",
                "antrea-config",
                "antrea-agent.conf"
            ),
            "the ConfigMap comes back from the API server as written"
        );
        let conflist: Value = serde_json::from_str(&config_map_data(
            &runtime,
            &cluster,
            "antrea-config",
            "antrea-cni.conflist",
        ))
        .unwrap();

        let mut lan = Lan::new();
        let node_ns = lan.node_netns(1);
        let pod_ns = lan.pod_netns("web");
        let mut n1 = TestNode::new("n1", &node_ns, &conf, "");
        let kubeconfig = n1.dir.path().join("kubeconfig");
        let _served = serve_in(&runtime, &cluster.server, &node_ns, &kubeconfig);
        n1.use_api(&kubeconfig);
        n1.start_and_wait_up();
        // The ConfigMap keeps the defaults: an encapsulated cluster over Geneve.
        assert_eq!(
            n1.vsctl(&["get", "Interface", "antrea-tun0", "type"])
                .trim(),
            "geneve"
        );

        let mut netconf = conflist["plugins"][0].clone();
        netconf["cniVersion"] = conflist["cniVersion"].clone();
        netconf["name"] = conflist["name"].clone();
        netconf["ipam"]["dataDir"] = serde_json::json!(n1.ipam_dir());
        wait_until("the CNI server", || n1.cni_listening(1));
        let (added, result) = n1.cni("ADD", "c-web", "web", &pod_ns, &netconf);
        assert!(added, "ADD with the ConfigMap's conflist: {result}");
        assert_eq!(result["ips"][0]["address"], "10.244.1.2/24", "{result}");
        assert!(ping(&n1, "10.244.1.2"), "the Node reaches its Pod");
    }
}
