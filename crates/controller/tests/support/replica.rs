//! [`Replica`]: one `antrea-controller` process (the real binary) of the tests that run several
//! against the fake API server, with a Lease of [`LEASE_SECONDS`] tried every second, and the
//! lines it logs kept for the test to read.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// The replicas' Lease duration.
pub const LEASE_SECONDS: u64 = 3;

/// A running replica and the lines it logged so far; killed when dropped.
pub struct Replica {
    pub child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Replica {
    /// Starts replica `identity` on the cluster of `kubeconfig`, serving (when it leads) on
    /// `address`.
    pub fn start(kubeconfig: &Path, identity: &str, address: &str) -> Replica {
        let mut child = Command::new(env!("CARGO_BIN_EXE_antrea-controller"))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .args(["--identity", identity, "--lease-namespace", "kube-system"])
            .args(["--lease-duration-seconds", &LEASE_SECONDS.to_string()])
            .args(["--retry-seconds", "1"])
            .args(["--bind-address", address])
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stderr(Stdio::piped())
            .spawn()
            .expect("antrea-controller starts");
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = BufReader::new(child.stderr.take().unwrap());
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in lines.lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        Replica { child, log }
    }

    /// Whether a line it logged contains `text`.
    pub fn logged(&self, text: &str) -> bool {
        self.log.lock().unwrap().iter().any(|l| l.contains(text))
    }

    /// Everything it logged.
    pub fn dump(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
