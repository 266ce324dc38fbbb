//! Running commands: checked, optionally with stdin and a deadline, and inside a network
//! namespace through `ip netns exec` (which execs the program, so its PID is the program's).

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{LabError, Result};

/// The command line, for messages.
pub fn describe(cmd: &Command) -> String {
    let mut words = vec![cmd.get_program().to_string_lossy().into_owned()];
    words.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    words.join(" ")
}

/// `ip netns exec <netns> <program>`.
pub fn in_netns(netns: &str, program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", netns]).arg(program);
    cmd
}

/// Runs `cmd` without stdin and returns its stdout, or an error with its stderr.
pub fn run(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|source| LabError::Spawn {
            program: describe(cmd),
            source,
        })?;
    checked(cmd, out)
}

/// `ip <args>` (use `-n <netns>` in `args` for a namespace).
pub fn ip(args: &[&str]) -> Result<String> {
    run(Command::new("ip").args(args))
}

/// Runs `cmd` with `stdin`, killing it after `timeout`; returns its output whatever the exit
/// status.
pub fn run_with_timeout(cmd: &mut Command, stdin: &[u8], timeout: Duration) -> Result<Output> {
    let program = describe(cmd);
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| LabError::Spawn {
            program: program.clone(),
            source,
        })?;
    let mut input = child.stdin.take();
    let stdin = stdin.to_vec();
    let writer = thread::spawn(move || {
        if let Some(input) = input.as_mut() {
            let _ = input.write_all(&stdin);
        }
    });
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let stderr = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(LabError::Timeout {
                    what: program,
                    seconds: timeout.as_secs_f64(),
                });
            }
            Err(source) => return Err(LabError::Spawn { program, source }),
        }
    };
    let _ = writer.join();
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// Like [`run_with_timeout`] but failing on a non-zero exit.
pub fn run_stdin(cmd: &mut Command, stdin: &[u8], timeout: Duration) -> Result<String> {
    let out = run_with_timeout(cmd, stdin, timeout)?;
    checked(cmd, out)
}

fn checked(cmd: &Command, out: Output) -> Result<String> {
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(LabError::Command {
            command: describe(cmd),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        })
    }
}

/// Polls `ready` every 20 ms until it is true or `timeout` passes.
pub fn wait_until(what: &str, timeout: Duration, mut ready: impl FnMut() -> bool) -> Result<()> {
    let deadline = Instant::now() + timeout;
    while !ready() {
        if Instant::now() > deadline {
            return Err(LabError::Timeout {
                what: what.to_owned(),
                seconds: timeout.as_secs_f64(),
            });
        }
        thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_returns_stdout_or_the_failure() {
        assert_eq!(run(Command::new("echo").arg("hi")).unwrap(), "hi\n");
        let err = run(Command::new("sh").args(["-c", "echo oops >&2; exit 3"])).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("`sh -c echo oops >&2; exit 3` failed") && text.contains("oops"),
            "{text}"
        );
        assert!(matches!(
            run(&mut Command::new("/nonexistent/x")),
            Err(LabError::Spawn { .. })
        ));
    }

    #[test]
    fn stdin_is_fed_and_deadline_kills() {
        assert_eq!(
            run_stdin(&mut Command::new("cat"), b"abc", Duration::from_secs(5)).unwrap(),
            "abc"
        );
        let err = run_with_timeout(
            Command::new("sleep").arg("5"),
            b"",
            Duration::from_millis(100),
        )
        .unwrap_err();
        assert!(matches!(err, LabError::Timeout { .. }), "{err}");
    }

    #[test]
    fn in_netns_wraps_the_program() {
        let mut cmd = in_netns("lab-n1", "ping");
        cmd.args(["-c1", "10.0.0.1"]);
        assert_eq!(describe(&cmd), "ip netns exec lab-n1 ping -c1 10.0.0.1");
    }
}
