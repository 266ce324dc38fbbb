//! Contract tests of the built `antrea` binary against an in-test agent: our server helper on a
//! `localipc` listener (a temporary Unix socket; a named pipe on Windows) with a scripted
//! `Cni`/`CniLifecycle` implementation.

use std::collections::HashSet;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cni::rpc::lifecycle::cni_lifecycle_server::CniLifecycle;
use cni::rpc::pb::cni_server::Cni;
use cni::rpc::{CmdRequest, error_response, pb, result_response};
use cni::spec::{CniError, CniResult, Interface, IpConfig, Route, code};
use localipc::Endpoint;
use serde_json::{Value, json};
use tonic::{Request, Response, Status};

/// What the scripted agent does with every call.
#[derive(Clone, Debug)]
enum Script {
    /// ADD allocates 10.1.0.<n>/24 and answers a full result in the request's version; DEL of an
    /// unknown container succeeds; CHECK of a known one succeeds.
    Normal,
    /// Answer every call with this CNI error.
    AgentError(u32, &'static str),
    /// Fail every call with this gRPC status.
    Rpc(tonic::Code),
    /// Never answer.
    Hang,
}

#[derive(Clone, Debug)]
struct Agent {
    script: Script,
    added: Arc<Mutex<HashSet<String>>>,
    calls: Arc<Mutex<Vec<(&'static str, pb::CniCmdArgs)>>>,
}

impl Agent {
    fn new(script: Script) -> Agent {
        Agent {
            script,
            added: Arc::default(),
            calls: Arc::default(),
        }
    }

    async fn handle(
        &self,
        rpc: &'static str,
        request: pb::CniCmdRequest,
    ) -> Result<Response<pb::CniCmdResponse>, Status> {
        self.calls
            .lock()
            .unwrap()
            .push((rpc, request.cni_args.clone().unwrap_or_default()));
        match &self.script {
            Script::AgentError(c, m) => {
                return Ok(Response::new(error_response(&CniError::new(*c, *m))));
            }
            Script::Rpc(c) => return Err(Status::new(*c, "scripted")),
            Script::Hang => std::future::pending::<()>().await,
            Script::Normal => {}
        }
        let req = match CmdRequest::decode(request) {
            Ok(r) => r,
            Err(e) => return Ok(Response::new(error_response(&e))),
        };
        let mut added = self.added.lock().unwrap();
        let response = match rpc {
            "add" => {
                added.insert(req.container_id.clone());
                let host = added.len() as u8 + 1;
                let result = CniResult {
                    interfaces: vec![
                        Interface {
                            name: "pod-abcdef".into(),
                            mac: "0a:00:00:00:00:01".into(),
                            mtu: req.conf.mtu,
                            ..Default::default()
                        },
                        Interface {
                            name: req.ifname.clone(),
                            mac: "0a:00:00:00:00:02".into(),
                            mtu: req.conf.mtu,
                            sandbox: req.netns.clone(),
                            ..Default::default()
                        },
                    ],
                    ips: vec![IpConfig {
                        address: format!("10.1.0.{host}/24").parse().unwrap(),
                        gateway: "10.1.0.1".parse().ok(),
                        interface: Some(1),
                    }],
                    routes: vec![Route {
                        priority: Some(7),
                        ..Route::new("0.0.0.0/0".parse().unwrap(), "10.1.0.1".parse().ok())
                    }],
                    dns: req.conf.effective_dns(),
                };
                result_response(&result, req.version)
            }
            "check" if !added.contains(&req.container_id) => error_response(&CniError::new(
                code::CHECK_INTERFACE_FAILURE,
                "unknown container",
            )),
            "del" => {
                added.remove(&req.container_id);
                pb::CniCmdResponse::default()
            }
            "gc" => {
                let valid: HashSet<String> = req
                    .conf
                    .valid_attachments
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| a.container_id)
                    .collect();
                added.retain(|c| valid.contains(c));
                pb::CniCmdResponse::default()
            }
            _ => pb::CniCmdResponse::default(),
        };
        Ok(Response::new(response))
    }
}

#[tonic::async_trait]
impl Cni for Agent {
    async fn cmd_add(
        &self,
        r: Request<pb::CniCmdRequest>,
    ) -> Result<Response<pb::CniCmdResponse>, Status> {
        self.handle("add", r.into_inner()).await
    }
    async fn cmd_check(
        &self,
        r: Request<pb::CniCmdRequest>,
    ) -> Result<Response<pb::CniCmdResponse>, Status> {
        self.handle("check", r.into_inner()).await
    }
    async fn cmd_del(
        &self,
        r: Request<pb::CniCmdRequest>,
    ) -> Result<Response<pb::CniCmdResponse>, Status> {
        self.handle("del", r.into_inner()).await
    }
}

#[tonic::async_trait]
impl CniLifecycle for Agent {
    async fn cmd_status(
        &self,
        r: Request<pb::CniCmdRequest>,
    ) -> Result<Response<pb::CniCmdResponse>, Status> {
        self.handle("status", r.into_inner()).await
    }
    async fn cmd_gc(
        &self,
        r: Request<pb::CniCmdRequest>,
    ) -> Result<Response<pb::CniCmdResponse>, Status> {
        self.handle("gc", r.into_inner()).await
    }
}

/// A fresh endpoint nobody listens on: a socket in `dir`, or a uniquely named pipe.
fn fresh_endpoint(dir: &tempfile::TempDir) -> Endpoint {
    if cfg!(windows) {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Endpoint::NamedPipe(format!(
            r"\\.\pipe\antrea-cni-test-{}-{n}",
            std::process::id()
        ))
    } else {
        Endpoint::Unix(dir.path().join("cni.sock"))
    }
}

/// A running scripted agent on a fresh endpoint.
struct Harness {
    _dir: tempfile::TempDir,
    endpoint: Endpoint,
    agent: Agent,
    runtime: tokio::runtime::Runtime,
}

impl Harness {
    fn start(script: Script, with_lifecycle: bool) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let endpoint = fresh_endpoint(&dir);
        Harness::start_at(dir, endpoint, script, with_lifecycle)
    }

    /// Starts listening on `endpoint` (in `dir`, kept as long as the harness).
    fn start_at(
        dir: tempfile::TempDir,
        endpoint: Endpoint,
        script: Script,
        with_lifecycle: bool,
    ) -> Harness {
        let agent = Agent::new(script);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(localipc::listen(
                &endpoint,
                localipc::Access::Administrators,
            ))
            .unwrap();
        let lifecycle = with_lifecycle.then(|| agent.clone());
        runtime.spawn(cni::rpc::serve_on(
            agent.clone(),
            lifecycle,
            listener,
            std::future::pending(),
        ));
        Harness {
            _dir: dir,
            endpoint,
            agent,
            runtime,
        }
    }

    fn plugin(&self) -> Plugin {
        Plugin::new(&self.endpoint)
    }

    fn calls(&self) -> Vec<(&'static str, pb::CniCmdArgs)> {
        self.agent.calls.lock().unwrap().clone()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.runtime.block_on(async {});
    }
}

/// One plugin execution being prepared.
struct Plugin {
    env: Vec<(String, String)>,
}

struct Run {
    stdout: String,
    code: i32,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout {:?} is not JSON: {e}", self.stdout))
    }

    /// Asserts a CNI error with `code` and returns its message.
    fn error(&self, code: u32) -> String {
        assert_eq!(self.code, 1, "exit code; stdout {}", self.stdout);
        let j = self.json();
        assert_eq!(j["code"], code, "stdout {}", self.stdout);
        j["msg"].as_str().unwrap().to_owned()
    }
}

impl Plugin {
    fn new(endpoint: &Endpoint) -> Plugin {
        let env = [
            ("CNI_COMMAND", "ADD"),
            ("CNI_CONTAINERID", "ctr-1"),
            ("CNI_NETNS", "/var/run/netns/ctr-1"),
            ("CNI_IFNAME", "eth0"),
            (
                "CNI_ARGS",
                "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=web-0;K8S_POD_INFRA_CONTAINER_ID=ctr-1",
            ),
            ("CNI_PATH", "/opt/cni/bin"),
            ("ANTREA_CNI_SOCKET", &endpoint.to_string()),
            ("ANTREA_CNI_TIMEOUT", "5"),
        ];
        Plugin {
            env: env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        }
    }

    fn set(mut self, key: &str, value: &str) -> Plugin {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    fn unset(mut self, key: &str) -> Plugin {
        self.env.retain(|(k, _)| k != key);
        self
    }

    fn run(&self, stdin: &str) -> Run {
        let mut command = Command::new(env!("CARGO_BIN_EXE_antrea"));
        command
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (k, v)));
        // Windows sockets and pipes need the system directory; keep it like runtimes do.
        if let Ok(root) = std::env::var("SystemRoot") {
            command.env("SystemRoot", root);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        Run {
            stdout: String::from_utf8(out.stdout).unwrap(),
            code: out.status.code().unwrap(),
        }
    }
}

fn conf(version: &str) -> String {
    json!({
        "cniVersion": version, "name": "antrea", "type": "antrea", "mtu": 1450,
        "ipam": {"type": "host-local"},
        "dns": {"nameservers": ["1.1.1.1"]},
        "capabilities": {"dns": true},
        "runtimeConfig": {"dns": {"servers": ["10.96.0.10"], "searches": ["default.svc.cluster.local"]}}
    })
    .to_string()
}

fn conf_with_prev(version: &str, prev: &Value) -> String {
    let mut c: Value = serde_json::from_str(&conf(version)).unwrap();
    c["prevResult"] = prev.clone();
    c.to_string()
}

#[test]
fn add_result_shape_for_every_version() {
    let h = Harness::start(Script::Normal, true);
    for (i, version) in ["0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"]
        .into_iter()
        .enumerate()
    {
        let run = h
            .plugin()
            .set("CNI_CONTAINERID", &format!("ctr-{i}"))
            .run(&conf(version));
        assert_eq!(run.code, 0, "{version}: {}", run.stdout);
        let j = run.json();
        assert_eq!(j["cniVersion"], version);
        let ip = &j["ips"][0];
        assert_eq!(ip["address"], format!("10.1.0.{}/24", i + 2));
        assert_eq!(ip["gateway"], "10.1.0.1");
        assert_eq!(ip["interface"], 1);
        let eth0 = &j["interfaces"][1];
        assert_eq!(
            (&eth0["name"], &eth0["sandbox"]),
            (&json!("eth0"), &json!("/var/run/netns/ctr-1"))
        );
        assert_eq!(j["routes"][0]["dst"], "0.0.0.0/0");
        assert_eq!(
            j["dns"],
            json!({"nameservers": ["10.96.0.10"], "search": ["default.svc.cluster.local"]})
        );
        let legacy = version.starts_with('0');
        assert_eq!(
            ip.get("version"),
            legacy.then_some(&json!("4")),
            "{version}: ips[].version"
        );
        let v11 = version == "1.1.0";
        assert_eq!(
            eth0.get("mtu"),
            v11.then_some(&json!(1450)),
            "{version}: interfaces[].mtu"
        );
        assert_eq!(
            j["routes"][0].get("priority"),
            v11.then_some(&json!(7)),
            "{version}: routes[].priority"
        );
    }
    let calls = h.calls();
    assert_eq!(calls.len(), 5);
    let (rpc, args) = &calls[0];
    assert_eq!(*rpc, "add");
    assert_eq!(
        (
            args.container_id.as_str(),
            args.ifname.as_str(),
            args.path.as_str()
        ),
        ("ctr-0", "eth0", "/opt/cni/bin")
    );
    assert!(args.args.contains("K8S_POD_NAME=web-0"));
    assert_eq!(
        args.network_configuration,
        conf("0.3.0").as_bytes(),
        "stdin forwarded unchanged"
    );
}

#[test]
fn check_and_del_round_trip() {
    let h = Harness::start(Script::Normal, true);
    let add = h.plugin().run(&conf("1.0.0"));
    assert_eq!(add.code, 0);
    let prev = add.json();
    let check = h
        .plugin()
        .set("CNI_COMMAND", "CHECK")
        .run(&conf_with_prev("1.0.0", &prev));
    assert_eq!((check.code, check.stdout.as_str()), (0, ""));
    let del = h
        .plugin()
        .set("CNI_COMMAND", "DEL")
        .run(&conf_with_prev("1.0.0", &prev));
    assert_eq!((del.code, del.stdout.as_str()), (0, ""));
    let again = h.plugin().set("CNI_COMMAND", "DEL").run(&conf("1.0.0"));
    assert_eq!((again.code, again.stdout.as_str()), (0, ""), "double DEL");
    let check = h
        .plugin()
        .set("CNI_COMMAND", "CHECK")
        .run(&conf_with_prev("1.0.0", &prev));
    assert!(
        check
            .error(code::CHECK_INTERFACE_FAILURE)
            .contains("unknown container")
    );
}

#[test]
fn del_without_netns_succeeds_and_forwards_an_empty_netns() {
    let h = Harness::start(Script::Normal, true);
    let del = h
        .plugin()
        .set("CNI_COMMAND", "DEL")
        .unset("CNI_NETNS")
        .run(&conf("1.1.0"));
    assert_eq!((del.code, del.stdout.as_str()), (0, ""));
    assert_eq!(h.calls()[0].1.netns, "");
}

#[test]
fn missing_variables_are_code_4_naming_the_variable() {
    let h = Harness::start(Script::Normal, true);
    for var in [
        "CNI_COMMAND",
        "CNI_CONTAINERID",
        "CNI_NETNS",
        "CNI_IFNAME",
        "CNI_PATH",
    ] {
        let msg = h
            .plugin()
            .unset(var)
            .run(&conf("1.0.0"))
            .error(code::INVALID_ENVIRONMENT_VARIABLES);
        assert!(msg.contains(var), "{var}: {msg}");
    }
    for (var, bad) in [
        ("CNI_CONTAINERID", "/etc"),
        ("CNI_IFNAME", "eth0:1"),
        ("CNI_COMMAND", "UP"),
        ("CNI_ARGS", "novalue"),
    ] {
        let run = h.plugin().set(var, bad).run(&conf("1.0.0"));
        let msg = run.error(code::INVALID_ENVIRONMENT_VARIABLES);
        assert!(
            msg.contains(var) || run.stdout.contains(bad),
            "{var}: {}",
            run.stdout
        );
    }
    // CNI_ARGS is checked by the agent, so exactly that one call reached it.
    assert_eq!(h.calls().len(), 1);
}

#[test]
fn malformed_config_is_code_6_and_unsupported_version_code_1() {
    let h = Harness::start(Script::Normal, true);
    assert!(
        h.plugin()
            .run("{\"cniVersion\": ")
            .error(code::DECODING_FAILURE)
            .contains("decode")
    );
    assert!(
        h.plugin()
            .run("[1]")
            .error(code::DECODING_FAILURE)
            .contains("decode")
    );
    for v in ["0.2.0", "0.1.0", "2.0.0"] {
        let msg = h
            .plugin()
            .run(&conf(v))
            .error(code::INCOMPATIBLE_CNI_VERSION);
        assert!(msg.contains(v), "{msg}");
    }
    let msg = h
        .plugin()
        .set("CNI_COMMAND", "CHECK")
        .run(&conf("0.3.1"))
        .error(code::INCOMPATIBLE_CNI_VERSION);
    assert!(msg.contains("does not allow CHECK"), "{msg}");
    for cmd in ["STATUS", "GC"] {
        let msg = h
            .plugin()
            .set("CNI_COMMAND", cmd)
            .run(&conf("1.0.0"))
            .error(code::INCOMPATIBLE_CNI_VERSION);
        assert!(msg.contains(cmd), "{msg}");
    }
    assert!(h.calls().is_empty(), "nothing should reach the agent");
}

#[test]
fn unreachable_agent_is_code_11() {
    let dir = tempfile::tempdir().unwrap();
    let absent = fresh_endpoint(&dir);
    let run = Plugin::new(&absent)
        .set("ANTREA_CNI_READY_WAIT", "0")
        .run(&conf("1.0.0"));
    let msg = run.error(code::TRY_AGAIN_LATER);
    assert!(msg.contains(&absent.to_string()), "{msg}");
}

#[test]
fn add_waits_for_an_agent_that_starts_listening_later() {
    let dir = tempfile::tempdir().unwrap();
    let endpoint = fresh_endpoint(&dir);
    let plugin = Plugin::new(&endpoint).set("ANTREA_CNI_READY_WAIT", "20");
    let waiting = std::thread::spawn(move || plugin.run(&conf("1.0.0")));
    std::thread::sleep(Duration::from_secs(1));
    let h = Harness::start_at(dir, endpoint, Script::Normal, true);
    let run = waiting.join().unwrap();
    assert_eq!(run.code, 0, "stdout {}", run.stdout);
    assert_eq!(run.json()["cniVersion"], "1.0.0");
    assert_eq!(h.calls().len(), 1);
    assert_eq!(h.calls()[0].0, "add");
}

#[test]
fn agent_that_never_listens_is_code_11_after_the_ready_wait() {
    let dir = tempfile::tempdir().unwrap();
    let absent = fresh_endpoint(&dir);
    let msg = Plugin::new(&absent)
        .set("ANTREA_CNI_READY_WAIT", "1")
        .run(&conf("1.0.0"))
        .error(code::TRY_AGAIN_LATER);
    assert!(
        msg.contains("the Antrea agent did not become ready within 1s"),
        "{msg}"
    );
    assert!(msg.contains(&absent.to_string()), "{msg}");
}

#[test]
fn invalid_ready_wait_is_code_4() {
    let h = Harness::start(Script::Normal, true);
    let msg = h
        .plugin()
        .set("ANTREA_CNI_READY_WAIT", "-1")
        .run(&conf("1.0.0"))
        .error(code::INVALID_ENVIRONMENT_VARIABLES);
    assert!(msg.starts_with("ANTREA_CNI_READY_WAIT"), "{msg}");
    assert!(h.calls().is_empty());
}

#[test]
fn agent_that_never_answers_is_code_11_after_the_timeout() {
    let h = Harness::start(Script::Hang, true);
    let msg = h
        .plugin()
        .set("ANTREA_CNI_TIMEOUT", "0.5")
        .run(&conf("1.0.0"))
        .error(code::TRY_AGAIN_LATER);
    assert!(msg.contains("no answer within"), "{msg}");
    assert_eq!(h.calls().len(), 1);
}

#[test]
fn grpc_status_codes_map_to_cni_codes() {
    for (status, expected) in [
        (tonic::Code::Unimplemented, code::INCOMPATIBLE_API_VERSION),
        (tonic::Code::Unavailable, code::TRY_AGAIN_LATER),
        (tonic::Code::DeadlineExceeded, code::TRY_AGAIN_LATER),
        (tonic::Code::Internal, code::UNKNOWN_RPC_ERROR),
        (tonic::Code::Unknown, code::UNKNOWN_RPC_ERROR),
    ] {
        let h = Harness::start(Script::Rpc(status), true);
        let msg = h.plugin().run(&conf("1.0.0")).error(expected);
        if expected == code::INCOMPATIBLE_API_VERSION {
            assert!(msg.contains("1.0.0-beta.1"), "{msg}");
        }
    }
}

#[test]
fn agent_error_codes_pass_through() {
    for (c, m) in [
        (code::IPAM_FAILURE, "no IP addresses available"),
        (code::TRY_AGAIN_LATER, "Server is busy, please retry later"),
        (code::CONFIG_INTERFACE_FAILURE, "port"),
    ] {
        let h = Harness::start(Script::AgentError(c, m), true);
        let run = h.plugin().run(&conf("0.3.0"));
        assert_eq!(run.error(c), m);
        assert_eq!(run.json()["cniVersion"], "0.3.0");
    }
}

#[test]
fn version_lists_supported_versions() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = Plugin::new(&fresh_endpoint(&dir)).set("CNI_COMMAND", "VERSION");
    let expected = json!(["0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"]);
    for (stdin, version) in [("", "1.1.0"), (r#"{"cniVersion":"0.4.0"}"#, "0.4.0")] {
        let run = plugin.run(stdin);
        assert_eq!(run.code, 0);
        assert_eq!(
            run.json(),
            json!({"cniVersion": version, "supportedVersions": expected})
        );
    }
}

#[test]
fn dash_dash_version_is_for_people_and_needs_no_cni_environment() {
    let out = Command::new(env!("CARGO_BIN_EXE_antrea"))
        .arg("--version")
        .env_clear()
        .stdin(Stdio::null())
        .output()
        .expect("run antrea --version");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("antrea {}\n", buildinfo::version())
    );
}

#[test]
fn status_reports_agent_availability() {
    let h = Harness::start(Script::Normal, true);
    let status = h
        .plugin()
        .set("CNI_COMMAND", "STATUS")
        .unset("CNI_CONTAINERID")
        .unset("CNI_IFNAME")
        .unset("CNI_NETNS");
    let run = status.run(&conf("1.1.0"));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    assert_eq!(h.calls()[0].0, "status");
    let antrea = Harness::start(Script::Normal, false);
    let run = antrea
        .plugin()
        .set("CNI_COMMAND", "STATUS")
        .run(&conf("1.1.0"));
    assert_eq!(
        run.code, 0,
        "an agent without CniLifecycle answered, so it is available: {}",
        run.stdout
    );
    let dir = tempfile::tempdir().unwrap();
    let down = Plugin::new(&fresh_endpoint(&dir))
        .set("CNI_COMMAND", "STATUS")
        .run(&conf("1.1.0"));
    down.error(code::PLUGIN_NOT_AVAILABLE);
    let failing = Harness::start(
        Script::AgentError(code::PLUGIN_NOT_AVAILABLE, "network not ready"),
        true,
    );
    assert_eq!(
        failing
            .plugin()
            .set("CNI_COMMAND", "STATUS")
            .run(&conf("1.1.0"))
            .error(50),
        "network not ready"
    );
    let unavailable = Harness::start(Script::Rpc(tonic::Code::Unavailable), true);
    unavailable
        .plugin()
        .set("CNI_COMMAND", "STATUS")
        .run(&conf("1.1.0"))
        .error(code::PLUGIN_NOT_AVAILABLE);
}

#[test]
fn gc_forwards_valid_attachments() {
    let h = Harness::start(Script::Normal, true);
    for id in ["keep", "drop"] {
        assert_eq!(
            h.plugin()
                .set("CNI_CONTAINERID", id)
                .run(&conf("1.1.0"))
                .code,
            0
        );
    }
    let mut gc: Value = serde_json::from_str(&conf("1.1.0")).unwrap();
    gc["cni.dev/valid-attachments"] = json!([{"containerID": "keep", "ifname": "eth0"}]);
    let run = h
        .plugin()
        .set("CNI_COMMAND", "GC")
        .unset("CNI_CONTAINERID")
        .run(&gc.to_string());
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    assert_eq!(
        *h.agent.added.lock().unwrap(),
        HashSet::from(["keep".to_owned()])
    );
    let antrea = Harness::start(Script::Normal, false);
    assert_eq!(
        antrea
            .plugin()
            .set("CNI_COMMAND", "GC")
            .run(&gc.to_string())
            .code,
        0,
        "Unimplemented GC is a no-op"
    );
    let dir = tempfile::tempdir().unwrap();
    Plugin::new(&fresh_endpoint(&dir))
        .set("CNI_COMMAND", "GC")
        .run(&gc.to_string())
        .error(code::TRY_AGAIN_LATER);
}
