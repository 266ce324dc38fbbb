//! The agent as a Windows service against a real service control manager (Wine's, under the
//! Windows test runner): `install-service` registers what is read back through the SCM's API,
//! twice is unchanged, a change is an update, `uninstall-service` removes it and is fine when
//! there is nothing to remove; a started service reports Running, stops on Stop with exit code
//! 0, and a failing agent stops with service-specific code 1. Every service created is deleted,
//! also when a test fails.
#![cfg(windows)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use agent::service::command_line;
use windows_service::service::{
    ServiceAccess, ServiceDependency, ServiceExitCode, ServiceStartType, ServiceState,
};
use windows_service::service_manager::{ServiceManager, ServiceManagerAccess};

/// Hang guard for waits on the SCM and the service (not a timing threshold).
const HANG_GUARD: Duration = Duration::from_secs(60);

/// A service name of this test run, uninstalled on drop.
struct TestService {
    name: String,
    dir: tempfile::TempDir,
}

impl TestService {
    fn new(test: &str) -> TestService {
        TestService {
            name: format!("antrea-agent-{test}-{}", std::process::id()),
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `antrea-agent install-service` for this service with `config`, an empty cluster
    /// directory and the log file in the test directory.
    fn install(&self, config: &Path) -> Output {
        let cluster = self.path("cluster");
        std::fs::create_dir_all(&cluster).unwrap();
        agent(&[
            "install-service".as_ref(),
            "--service-name".as_ref(),
            self.name.as_ref(),
            "--config".as_ref(),
            config.as_os_str(),
            "--cluster-dir".as_ref(),
            cluster.as_os_str(),
            "--log-file".as_ref(),
            self.path("agent.log").as_os_str(),
        ])
    }

    fn uninstall(&self) -> Output {
        agent(&[
            "uninstall-service".as_ref(),
            "--service-name".as_ref(),
            self.name.as_ref(),
        ])
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.path("agent.log")).unwrap_or_default()
    }

    /// Waits until the log has `needle`.
    fn wait_log(&self, needle: &str) {
        let deadline = Instant::now() + HANG_GUARD;
        while !self.log().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "no {needle:?} in the log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for TestService {
    fn drop(&mut self) {
        let out = self.uninstall();
        if !out.status.success() && !std::thread::panicking() {
            panic!("cleanup: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
}

fn agent(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_antrea-agent"))
        .args(args)
        .output()
        .expect("run antrea-agent")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn manager() -> ServiceManager {
    ServiceManager::local_computer(None::<&str>, ServiceManagerAccess::CONNECT).unwrap()
}

/// Waits until the service is in `want` (a start or a stop may not have reached the SCM's
/// status yet when the call that asked for it returns); returns that status.
fn wait_for_state(
    service: &TestService,
    want: ServiceState,
) -> windows_service::service::ServiceStatus {
    let handle = manager()
        .open_service(&service.name, ServiceAccess::QUERY_STATUS)
        .unwrap();
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let status = handle.query_status().unwrap();
        if status.current_state == want {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "{} never reached {want:?}: {status:?}\n{}",
            service.name,
            service.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether this runs under Wine (which has its own registry key).
fn is_wine() -> bool {
    Command::new("reg")
        .args(["query", r"HKLM\Software\Wine"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// `reg query` of one value of the service's registry key; returns the output.
fn reg_query(name: &str, value: &str) -> String {
    let key = format!(r"HKLM\SYSTEM\CurrentControlSet\Services\{name}");
    stdout(
        &Command::new("reg")
            .args(["query", &key, "/v", value])
            .output()
            .expect("run reg.exe"),
    )
}

/// A configuration the agent accepts: the defaults.
fn valid_config(service: &TestService) -> PathBuf {
    let path = service.path("antrea-agent.conf");
    std::fs::write(&path, "").unwrap();
    path
}

#[test]
fn install_registers_the_service_reads_back_and_is_idempotent() {
    let service = TestService::new("install");
    let config = valid_config(&service);
    assert_eq!(
        stdout(&service.install(&config)),
        format!("service {} created\n", service.name)
    );

    let registered = manager()
        .open_service(&service.name, ServiceAccess::QUERY_CONFIG)
        .unwrap()
        .query_config()
        .unwrap();
    assert_eq!(registered.start_type, ServiceStartType::AutoStart);
    assert_eq!(
        registered.display_name.to_string_lossy(),
        format!("antrea-rs agent ({})", service.name)
    );
    // Wine's QueryServiceConfigW leaves dependencies out ("TODO" in its services.exe); the SCM's
    // database in the registry has them on both.
    if is_wine() {
        assert_eq!(registered.dependencies, [], "Wine reports dependencies now");
    } else {
        assert_eq!(
            registered.dependencies,
            [
                ServiceDependency::Service("ovsdb-server".into()),
                ServiceDependency::Service("ovs-vswitchd".into())
            ]
        );
    }
    let depend_on = reg_query(&service.name, "DependOnService");
    assert!(
        depend_on.contains(r"REG_MULTI_SZ    ovsdb-server\0ovs-vswitchd"),
        "{depend_on}"
    );
    let line = command_line::split(&registered.executable_path.to_string_lossy());
    assert!(line[0].ends_with(r"\antrea-agent.exe"), "{line:?}");
    assert!(Path::new(&line[0]).is_file(), "{line:?}");
    let config_arg = std::path::absolute(&config).unwrap();
    assert_eq!(
        line[1..],
        [
            "run-service",
            "--service-name",
            &service.name,
            "--config",
            &config_arg.to_string_lossy(),
            "--cluster-dir",
            &std::path::absolute(service.path("cluster"))
                .unwrap()
                .to_string_lossy(),
            "--log-file",
            &std::path::absolute(service.path("agent.log"))
                .unwrap()
                .to_string_lossy(),
        ]
    );

    assert_eq!(
        stdout(&service.install(&config)),
        format!("service {} already installed as wanted\n", service.name)
    );

    let other = service.path("other.conf");
    std::fs::write(&other, "").unwrap();
    let updated = stdout(&service.install(&other));
    assert!(
        updated.starts_with(&format!(
            "service {} updated:\n  command line ",
            service.name
        )),
        "{updated}"
    );
    let registered = manager()
        .open_service(&service.name, ServiceAccess::QUERY_CONFIG)
        .unwrap()
        .query_config()
        .unwrap();
    let line = command_line::split(&registered.executable_path.to_string_lossy());
    let other_arg = std::path::absolute(&other).unwrap();
    assert_eq!(line[5], other_arg.to_string_lossy());

    assert_eq!(
        stdout(&service.uninstall()),
        format!("service {} deleted\n", service.name)
    );
    let gone = manager()
        .open_service(&service.name, ServiceAccess::QUERY_STATUS)
        .err()
        .expect("deleted");
    assert!(
        matches!(&gone, windows_service::Error::Winapi(io) if io.raw_os_error() == Some(1060)),
        "{gone:?}"
    );
    assert_eq!(
        stdout(&service.uninstall()),
        format!("service {} is not installed; nothing to do\n", service.name)
    );
}

#[test]
fn a_started_service_runs_the_agent_and_stops_on_stop() {
    let service = TestService::new("run");
    stdout(&service.install(&valid_config(&service)));
    let handle = manager()
        .open_service(
            &service.name,
            ServiceAccess::START | ServiceAccess::STOP | ServiceAccess::QUERY_STATUS,
        )
        .unwrap();
    handle.start::<&str>(&[]).unwrap();
    wait_for_state(&service, ServiceState::Running);
    // The agent itself runs: it waits for its Node in the (empty) cluster directory.
    service.wait_log("waiting for Node");

    handle.stop().unwrap();
    let stopped = wait_for_state(&service, ServiceState::Stopped);
    assert_eq!(stopped.exit_code, ServiceExitCode::NO_ERROR);
    let log = service.log();
    assert!(
        log.contains(&format!("running as service {}", service.name)),
        "{log}"
    );
    assert!(
        log.contains("Stop from the service control manager: stopping"),
        "{log}"
    );
    assert!(log.contains("stopped before the Node was ready"), "{log}");
}

#[test]
fn a_failing_agent_stops_the_service_with_code_1() {
    let service = TestService::new("fail");
    stdout(&service.install(&service.path("missing.conf")));
    let handle = manager()
        .open_service(
            &service.name,
            ServiceAccess::START | ServiceAccess::QUERY_STATUS,
        )
        .unwrap();
    handle.start::<&str>(&[]).unwrap();
    service.wait_log("cannot read agent configuration");
    let deadline = Instant::now() + HANG_GUARD;
    let stopped = loop {
        let status = handle.query_status().unwrap();
        if status.current_state == ServiceState::Stopped {
            break status;
        }
        assert!(Instant::now() < deadline, "{status:?}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(stopped.exit_code, ServiceExitCode::ServiceSpecific(1));
}

#[test]
fn run_service_outside_the_scm_says_how_to_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = agent(&[
        "run-service".as_ref(),
        "--config".as_ref(),
        dir.path().join("a.conf").as_os_str(),
        "--cluster-dir".as_ref(),
        dir.path().as_os_str(),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("antrea-agent: run-service is what the service control manager runs"),
        "{stderr}"
    );
}
