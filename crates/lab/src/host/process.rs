//! The processes the lab starts: detached with a pidfile, recognised later by PID *and* by their
//! command line naming the state directory, and stopped the same way (SIGTERM to all, a grace
//! period, then SIGKILL). Nothing is ever signalled by name.

use std::fs::{self, File, OpenOptions};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::{Pid, getpgid};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::command::describe;
use crate::error::{LabError, Result};
use crate::layout::CONTAINERD_DIR;

/// How long stopped processes get to exit after SIGTERM before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);

/// Starts `cmd` in its own process group with stdin closed and output appended to `log`, and
/// writes its PID to `pidfile`. The returned handle only serves to notice an early exit
/// (`try_wait`); dropping it leaves the process running, and once the lab command exits the
/// process is adopted by init.
pub fn spawn_detached(cmd: &mut Command, pidfile: &Path, log: &Path) -> Result<Child> {
    let log_err = |source| LabError::File {
        what: "log file",
        path: log.to_owned(),
        source,
    };
    let out: File = OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(log_err)?;
    let err = out.try_clone().map_err(log_err)?;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0)
        .spawn()
        .map_err(|source| LabError::Spawn {
            program: describe(cmd),
            source,
        })?;
    let pid = child.id();
    fs::write(pidfile, format!("{pid}\n")).map_err(|source| LabError::File {
        what: "pidfile",
        path: pidfile.to_owned(),
        source,
    })?;
    Ok(child)
}

/// The PID in a pidfile, if it holds one.
pub fn read_pid(pidfile: &Path) -> Option<i32> {
    fs::read_to_string(pidfile)
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|p| *p > 0)
}

/// Whether `pid` is a live (not zombie) process whose command line contains `marker`.
pub fn is_ours(pid: i32, marker: &str) -> bool {
    let Ok(cmdline) = fs::read(format!("/proc/{pid}/cmdline")) else {
        return false;
    };
    let cmdline: Vec<u8> = cmdline
        .into_iter()
        .map(|b| if b == 0 { b' ' } else { b })
        .collect();
    String::from_utf8_lossy(&cmdline).contains(marker)
}

/// The command line of `pid`, for reports.
pub fn cmdline(pid: i32) -> String {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw)
        .replace('\0', " ")
        .trim()
        .to_owned()
}

/// The PID from `pidfile` if that process is alive and ours.
pub fn alive(pidfile: &Path, marker: &str) -> Option<i32> {
    read_pid(pidfile).filter(|pid| is_ours(*pid, marker))
}

/// Every `*.pid` file under `root`, at any depth, sorted; not inside a Node's containerd tree
/// ([`CONTAINERD_DIR`]), whose pidfiles containerd and its shims write for their own processes.
pub fn pidfiles_under(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![root.to_owned()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() && entry.file_name() != CONTAINERD_DIR => dirs.push(path),
                Ok(t) if t.is_file() && path.extension().is_some_and(|e| e == "pid") => {
                    found.push(path)
                }
                _ => {}
            }
        }
    }
    found.sort();
    found
}

/// Signals `pid`, and its whole process group when it leads one (the lab starts its processes
/// as group leaders, and OVS daemons lead their own sessions), so that children a process
/// started (a shell's `sleep`, a helper) go with it.
fn signal(pid: i32, sig: Signal) {
    let pid = Pid::from_raw(pid);
    // `pid` was just checked against /proc/<pid>/cmdline by the caller; when it leads its
    // process group, the group goes too.
    let _ = match getpgid(Some(pid)) {
        Ok(group) if group == pid => killpg(pid, sig),
        _ => kill(pid, sig),
    };
}

/// Stops every PID in `pids` that is still ours: SIGTERM to all at once, up to [`GRACE`] for
/// them to exit, then SIGKILL to the rest (each with its process group when it leads one).
/// Returns the PIDs that were signalled.
pub fn stop_all(pids: &[i32], marker: &str) -> Vec<i32> {
    let ours: Vec<i32> = pids
        .iter()
        .copied()
        .filter(|p| *p > 0 && is_ours(*p, marker))
        .collect();
    for &pid in &ours {
        signal(pid, Signal::SIGTERM);
    }
    let deadline = Instant::now() + GRACE;
    while ours.iter().any(|p| is_ours(*p, marker)) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    for &pid in ours.iter().filter(|p| is_ours(**p, marker)) {
        signal(pid, Signal::SIGKILL);
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while ours.iter().any(|p| is_ours(*p, marker)) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    ours
}

/// Kills `pid` with SIGKILL at once, as `kill -9` does (a crash, no chance to clean up), if it
/// is still ours, and waits up to 2 s until it is gone. Returns whether it was signalled.
pub fn kill_now(pid: i32, marker: &str) -> bool {
    if pid <= 0 || !is_ours(pid, marker) {
        return false;
    }
    signal(pid, Signal::SIGKILL);
    let deadline = Instant::now() + Duration::from_secs(2);
    while is_ours(pid, marker) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_recognise_and_stop() {
        let dir =
            std::env::temp_dir().join(format!("antrea-lab-process-test-{}", std::process::id()));
        fs::create_dir_all(dir.join("sub")).unwrap();
        let marker = dir.display().to_string();
        let pidfile = dir.join("sub/sleeper.pid");
        // The marker is on the command line: tail follows a file under the directory forever.
        let log = dir.join("sleeper.log");
        fs::write(&log, "").unwrap();
        let mut cmd = Command::new("tail");
        cmd.arg("-f").arg(&log);
        let pid = spawn_detached(&mut cmd, &pidfile, &dir.join("tail-output.log"))
            .unwrap()
            .id() as i32;
        assert_eq!(read_pid(&pidfile), Some(pid));
        // Until the child has exec'd, its command line is still ours (the test binary's).
        super::super::command::wait_until("tail to exec", Duration::from_secs(5), || {
            is_ours(pid, &marker)
        })
        .unwrap();
        assert_eq!(alive(&pidfile, &marker), Some(pid));
        assert!(!is_ours(pid, "/some/other/lab"));
        assert_eq!(pidfiles_under(&dir), std::slice::from_ref(&pidfile));
        // A PID whose command line does not match is left alone.
        assert_eq!(stop_all(&[pid], "/some/other/lab"), Vec::<i32>::new());
        assert!(is_ours(pid, &marker));
        assert_eq!(stop_all(&[pid], &marker), [pid]);
        // Our own child is now a zombie until reaped: no longer "ours".
        assert!(!is_ours(pid, &marker));
        assert_eq!(alive(&pidfile, &marker), None);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn pidfile_garbage_is_no_pid() {
        let dir =
            std::env::temp_dir().join(format!("antrea-lab-pidfile-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        for (text, want) in [
            ("123\n", Some(123)),
            ("", None),
            ("x", None),
            ("-5", None),
            ("0", None),
        ] {
            fs::write(dir.join("p.pid"), text).unwrap();
            assert_eq!(read_pid(&dir.join("p.pid")), want, "{text:?}");
        }
        assert_eq!(read_pid(&dir.join("missing.pid")), None);
        fs::remove_dir_all(&dir).unwrap();
    }
}
