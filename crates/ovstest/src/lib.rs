//! A private Open vSwitch for one test: `ovsdb-server` and (optionally) `ovs-vswitchd` with the
//! userspace datapath, in a fresh directory and, for `ovs-vswitchd`, a fresh network namespace
//! (two netdev `ovs-vswitchd` cannot share one: both create the `ovs-netdev` tap).
//!
//! Everything is removed when the [`Ovs`] value drops, also when the test panics. A test process
//! that is killed outright cannot run `Drop`; the next [`Ovs::start`] on the machine finds the
//! leftovers of dead test processes and removes them.
#![cfg(target_os = "linux")]

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// Where every instance lives: `<ROOT>/<test pid>-<n>/`.
const ROOT: &str = "/tmp/antrea-ovstest";
const SCHEMA: &str = "/usr/share/openvswitch/vswitch.ovsschema";
const NETNS_PREFIX: &str = "ovst-";

static NEXT: AtomicU32 = AtomicU32::new(0);

/// What to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Daemons {
    /// Only `ovsdb-server` (enough for OVSDB tests).
    DbOnly,
    /// `ovsdb-server` and `ovs-vswitchd`.
    Full,
}

/// A running private Open vSwitch.
#[derive(Debug)]
pub struct Ovs {
    dir: PathBuf,
    netns: Option<String>,
    own_netns: bool,
}

impl Ovs {
    /// Starts `ovsdb-server` and `ovs-vswitchd` in a new network namespace.
    pub fn start() -> io::Result<Ovs> {
        Ovs::start_with(Daemons::Full, None)
    }

    /// Starts only `ovsdb-server`, in the caller's network namespace.
    pub fn start_db() -> io::Result<Ovs> {
        Ovs::start_with(Daemons::DbOnly, None)
    }

    /// Starts the daemons inside the existing network namespace `netns` (which the caller owns),
    /// or in a new one made for this instance when `netns` is `None` and `ovs-vswitchd` runs.
    pub fn start_with(daemons: Daemons, netns: Option<&str>) -> io::Result<Ovs> {
        sweep_dead_instances();
        let id = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = Path::new(ROOT).join(&id);
        let (netns, own_netns) = match (netns, daemons) {
            (Some(ns), _) => (Some(ns.to_owned()), false),
            (None, Daemons::Full) => (Some(format!("{NETNS_PREFIX}{id}")), true),
            (None, Daemons::DbOnly) => (None, false),
        };
        let ovs = Ovs {
            dir,
            netns,
            own_netns,
        };
        fs::create_dir_all(&ovs.dir)?;
        if ovs.own_netns {
            let ns = ovs.netns.clone().unwrap_or_default();
            run_checked(Command::new("ip").args(["netns", "add", &ns]))?;
            run_checked(Command::new("ip").args(["-n", &ns, "link", "set", "lo", "up"]))?;
        }
        ovs.start_ovsdb()?;
        if daemons == Daemons::Full {
            ovs.start_vswitchd()?;
        }
        Ok(ovs)
    }

    /// The instance's directory (run dir, database, logs).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The network namespace `ovs-vswitchd` runs in, if any.
    pub fn netns(&self) -> Option<&str> {
        self.netns.as_deref()
    }

    /// The OVSDB Unix socket.
    pub fn db_socket(&self) -> PathBuf {
        self.dir.join("db.sock")
    }

    /// The OpenFlow management socket of `bridge`.
    pub fn mgmt_socket(&self, bridge: &str) -> PathBuf {
        self.dir.join(format!("{bridge}.mgmt"))
    }

    /// The `ovs-vswitchd` control socket, for `ovs-appctl -t`.
    pub fn vswitchd_ctl(&self) -> PathBuf {
        self.dir.join("ovs-vswitchd.ctl")
    }

    /// Opens an extra listener on `ovsdb-server` at `ptcp:PORT:127.0.0.1` (port 0 picks one) and
    /// returns the bound port.
    pub fn add_tcp_remote(&self) -> io::Result<u16> {
        let ctl = self.dir.join("ovsdb-server.ctl");
        let ctl = ctl.to_string_lossy();
        run_checked(Command::new("ovs-appctl").args([
            "-t",
            &ctl,
            "ovsdb-server/add-remote",
            "ptcp:0:127.0.0.1",
        ]))?;
        // The bound port is only reported in the log: "ptcp:0:127.0.0.1: listening on port N".
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let log = fs::read_to_string(self.dir.join("ovsdb-server.log")).unwrap_or_default();
            if let Some(port) = log.lines().rev().find_map(|l| {
                l.split("listening on port ")
                    .nth(1)
                    .and_then(|p| p.trim().parse::<u16>().ok())
            }) {
                return Ok(port);
            }
            if Instant::now() > deadline {
                return Err(io::Error::other("ovsdb-server did not report its TCP port"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Runs `ovs-vsctl` against this instance and returns its stdout.
    pub fn vsctl(&self, args: &[&str]) -> io::Result<String> {
        let db = format!("--db=unix:{}", self.db_socket().display());
        let mut cmd = Command::new("ovs-vsctl");
        cmd.args(["--timeout=20", &db]).args(args);
        run_checked(&mut cmd)
    }

    /// Runs `ovs-ofctl` with `args`, where the literal `{mgmt:BRIDGE}` is replaced by that
    /// bridge's management socket (e.g. `["-O", "OpenFlow15", "dump-flows", "{mgmt:br0}"]`).
    pub fn ofctl(&self, args: &[&str]) -> io::Result<String> {
        let args: Vec<String> = args.iter().map(|a| self.expand(a)).collect();
        run_checked(Command::new("ovs-ofctl").args(&args))
    }

    /// Like [`Ovs::ofctl`] but with `stdin` fed to the command (for `add-flows ... -`).
    pub fn ofctl_stdin(&self, args: &[&str], stdin: &str) -> io::Result<String> {
        use std::io::Write;
        let args: Vec<String> = args.iter().map(|a| self.expand(a)).collect();
        let mut child = Command::new("ovs-ofctl")
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        child
            .stdin
            .take()
            .expect("piped stdin")
            .write_all(stdin.as_bytes())?;
        check(child.wait_with_output()?, "ovs-ofctl")
    }

    /// Runs `ovs-appctl -t <ovs-vswitchd.ctl> args…`.
    pub fn appctl(&self, args: &[&str]) -> io::Result<String> {
        let ctl = self.vswitchd_ctl();
        run_checked(Command::new("ovs-appctl").arg("-t").arg(&ctl).args(args))
    }

    /// Adds a userspace (`netdev`) bridge with OpenFlow 1.0 to 1.5 and `fail_mode=secure`, and
    /// waits for its management socket.
    pub fn add_bridge(&self, name: &str) -> io::Result<()> {
        self.vsctl(&[
            "add-br",
            name,
            "--",
            "set",
            "Bridge",
            name,
            "datapath_type=netdev",
            "fail_mode=secure",
            "protocols=OpenFlow10,OpenFlow13,OpenFlow15",
        ])?;
        wait_for(&self.mgmt_socket(name), "bridge management socket")
    }

    /// Kills `ovs-vswitchd` and starts it again (the database, and so the configuration, stays).
    pub fn restart_vswitchd(&self) -> io::Result<()> {
        self.stop_daemon("ovs-vswitchd");
        self.start_vswitchd()
    }

    /// Kills `ovs-vswitchd` without starting it again.
    pub fn stop_vswitchd(&self) {
        self.stop_daemon("ovs-vswitchd");
    }

    fn expand(&self, arg: &str) -> String {
        match arg.strip_prefix("{mgmt:").and_then(|r| r.strip_suffix('}')) {
            Some(bridge) => format!("unix:{}", self.mgmt_socket(bridge).display()),
            None => arg.to_owned(),
        }
    }

    /// A command that runs inside this instance's network namespace, with OVS's directories
    /// pointed at the instance.
    fn command(&self, program: &str) -> Command {
        let mut cmd = match &self.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, program]);
                c
            }
            None => Command::new(program),
        };
        for var in [
            "OVS_RUNDIR",
            "OVS_DBDIR",
            "OVS_LOGDIR",
            "OVS_SYSCONFDIR",
            "OVS_PKGDATADIR",
        ] {
            cmd.env(var, &self.dir);
        }
        cmd.env("OVS_PKGDATADIR", "/usr/share/openvswitch");
        cmd
    }

    fn start_ovsdb(&self) -> io::Result<()> {
        let db = self.dir.join("conf.db");
        run_checked(
            Command::new("ovsdb-tool")
                .arg("create")
                .arg(&db)
                .arg(SCHEMA),
        )?;
        let d = self.dir.display();
        run_checked(self.command("ovsdb-server").arg(&db).args([
            &format!("--remote=punix:{d}/db.sock"),
            &format!("--pidfile={d}/ovsdb-server.pid"),
            &format!("--unixctl={d}/ovsdb-server.ctl"),
            &format!("--log-file={d}/ovsdb-server.log"),
            "-vconsole:off",
            "--detach",
        ]))?;
        wait_for(&self.db_socket(), "ovsdb-server socket")?;
        self.vsctl(&["--no-wait", "init"]).map(drop)
    }

    fn start_vswitchd(&self) -> io::Result<()> {
        let d = self.dir.display();
        run_checked(self.command("ovs-vswitchd").args([
            &format!("unix:{d}/db.sock"),
            &format!("--pidfile={d}/ovs-vswitchd.pid"),
            &format!("--unixctl={d}/ovs-vswitchd.ctl"),
            &format!("--log-file={d}/ovs-vswitchd.log"),
            "-vconsole:off",
            "--detach",
        ]))?;
        wait_for(&self.vswitchd_ctl(), "ovs-vswitchd control socket")
    }

    fn stop_daemon(&self, name: &str) {
        kill_by_pidfile(&self.dir.join(format!("{name}.pid")), name);
    }
}

impl Drop for Ovs {
    fn drop(&mut self) {
        self.stop_daemon("ovs-vswitchd");
        self.stop_daemon("ovsdb-server");
        if let (true, Some(ns)) = (self.own_netns, &self.netns) {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Sends SIGTERM to the process named in `pidfile` if its command line is `expected`'s, waits
/// briefly, then SIGKILL.
fn kill_by_pidfile(pidfile: &Path, expected: &str) {
    let Some(pid) = fs::read_to_string(pidfile)
        .ok()
        .and_then(|s| s.trim().parse::<i32>().ok())
    else {
        return;
    };
    let is_ours = || {
        fs::read(format!("/proc/{pid}/cmdline"))
            .map(|c| {
                String::from_utf8_lossy(&c).contains(expected)
                    && String::from_utf8_lossy(&c).contains(ROOT)
            })
            .unwrap_or(false)
    };
    if !is_ours() {
        return;
    }
    // The pid comes from our own pidfile and was checked against /proc.
    let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(3);
    while is_ours() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    if is_ours() {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let _ = fs::remove_file(pidfile);
}

/// Removes instances left behind by test processes that no longer exist.
fn sweep_dead_instances() {
    let Ok(entries) = fs::read_dir(ROOT) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let dir = entry.path();
        kill_by_pidfile(&dir.join("ovs-vswitchd.pid"), "ovs-vswitchd");
        kill_by_pidfile(&dir.join("ovsdb-server.pid"), "ovsdb-server");
        let _ = Command::new("ip")
            .args(["netns", "del", &format!("{NETNS_PREFIX}{name}")])
            .stderr(Stdio::null())
            .status();
        let _ = fs::remove_dir_all(dir);
    }
}

fn wait_for(path: &Path, what: &str) -> io::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !path.exists() {
        if Instant::now() > deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("{what} {} did not appear", path.display()),
            ));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

fn run_checked(cmd: &mut Command) -> io::Result<String> {
    let name = format!("{:?}", cmd.get_program());
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| io::Error::new(e.kind(), format!("{name}: {e}")))?;
    check(out, &name)
}

fn check(out: Output, name: &str) -> io::Result<String> {
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(io::Error::other(format!(
            "{name} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}
