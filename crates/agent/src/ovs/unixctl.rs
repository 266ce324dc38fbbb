//! A client of ovs-vswitchd's control socket (what `ovs-appctl` talks to): one JSON-RPC
//! request, `{"method": command, "params": [args…], "id": 0}`, and its reply's `result` text
//! or `error`, read at once ([`VswitchdControl::call`]) or later ([`VswitchdControl::start`],
//! for a command that answers when something else happens). The socket is `<ovsRunDir>/ovs-vswitchd.<pid>.ctl` (the pid read from
//! `ovs-vswitchd.pid`), else `<ovsRunDir>/ovs-vswitchd.ctl` (ovs-vswitchd started with
//! `--unixctl` there, and Windows, where it is a named pipe of that name).

use std::path::Path;

use localipc::{Endpoint, ovs_pipe_name};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::config::Platform;

/// Where ovs-vswitchd's control socket is: found again at each call, since a restarted
/// ovs-vswitchd has a new pid and so a new socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VswitchdControl {
    platform: Platform,
    run_dir: String,
}

impl VswitchdControl {
    /// The control socket of the ovs-vswitchd whose run directory is `run_dir` on `platform`.
    pub fn new(platform: Platform, run_dir: &str) -> VswitchdControl {
        VswitchdControl {
            platform,
            run_dir: run_dir.to_owned(),
        }
    }

    /// Runs `command args…` on ovs-vswitchd; its output text.
    pub async fn call(&self, command: &str, args: &[&str]) -> Result<String, String> {
        self.start(command, args).await?.reply().await
    }

    /// Sends `command args…` to ovs-vswitchd and returns once the request is written, before
    /// its reply: ovs-vswitchd reads it no later than its main loop's next pass over the
    /// control connections.
    pub async fn start(&self, command: &str, args: &[&str]) -> Result<PendingCall, String> {
        let endpoint = vswitchd_endpoint(self.platform, &self.run_dir);
        let context = |e: std::io::Error| format!("{command} on {endpoint}: {e}");
        let mut stream = localipc::dial(&endpoint).await.map_err(context)?;
        let request = json!({"method": command, "params": args, "id": 0});
        stream
            .write_all(request.to_string().as_bytes())
            .await
            .map_err(context)?;
        Ok(PendingCall {
            command: command.to_owned(),
            endpoint: endpoint.to_string(),
            stream,
        })
    }
}

/// A command sent to ovs-vswitchd whose reply is still to be read.
pub struct PendingCall {
    command: String,
    /// Where it was sent, for error messages.
    endpoint: String,
    stream: localipc::Stream,
}

impl std::fmt::Debug for PendingCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingCall")
            .field("command", &self.command)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl PendingCall {
    /// The command's output text, once ovs-vswitchd answers.
    pub async fn reply(mut self) -> Result<String, String> {
        let (command, endpoint) = (&self.command, &self.endpoint);
        let context = |e: std::io::Error| format!("{command} on {endpoint}: {e}");
        let mut received = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        let reply = loop {
            let n = self.stream.read(&mut chunk).await.map_err(context)?;
            if n == 0 {
                return Err(format!("{command} on {endpoint}: closed before a reply"));
            }
            received.extend_from_slice(&chunk[..n]);
            match serde_json::Deserializer::from_slice(&received)
                .into_iter::<Value>()
                .next()
            {
                Some(Ok(reply)) => break reply,
                Some(Err(e)) if e.is_eof() => continue,
                Some(Err(e)) => return Err(format!("{command} on {endpoint}: bad reply: {e}")),
                None => continue,
            }
        };
        match (&reply["error"], &reply["result"]) {
            (Value::Null, Value::String(result)) => Ok(result.clone()),
            (Value::String(error), _) => Err(format!("{command}: {}", error.trim_end())),
            _ => Err(format!("{command} on {endpoint}: unexpected reply {reply}")),
        }
    }
}

/// The control socket of ovs-vswitchd in `run_dir` on `platform`.
fn vswitchd_endpoint(platform: Platform, run_dir: &str) -> Endpoint {
    match platform {
        Platform::Windows => Endpoint::NamedPipe(ovs_pipe_name(run_dir, "ovs-vswitchd.ctl")),
        Platform::Linux => {
            let dir = Path::new(run_dir);
            let by_pid = std::fs::read_to_string(dir.join("ovs-vswitchd.pid"))
                .ok()
                .map(|pid| dir.join(format!("ovs-vswitchd.{}.ctl", pid.trim())))
                .filter(|path| path.exists());
            Endpoint::Unix(by_pid.unwrap_or_else(|| dir.join("ovs-vswitchd.ctl")))
        }
    }
}
