//! `antrea-lab iperf`: TCP throughput between two lab endpoints with iperf3 (server in the
//! target namespace for one test, client in the source namespace), for benchmarks.

use serde::Serialize;
use serde_json::Value;

/// One measurement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Throughput {
    /// Source endpoint.
    pub from: String,
    /// Target endpoint.
    pub to: String,
    /// Seconds measured.
    pub seconds: u32,
    /// Receiver-side rate in bits per second.
    pub bits_per_second: f64,
    /// TCP retransmissions counted by the sender.
    pub retransmits: u64,
}

impl Throughput {
    /// The rate in Gbit/s.
    pub fn gbits(&self) -> f64 {
        self.bits_per_second / 1e9
    }
}

/// Reads `(receiver bits/s, sender retransmits)` from `iperf3 -J` output. Never panics.
pub fn parse_iperf_json(text: &[u8]) -> Result<(f64, u64), String> {
    let v: Value = serde_json::from_slice(text).map_err(|e| format!("not JSON: {e}"))?;
    if let Some(err) = v.get("error").and_then(Value::as_str) {
        return Err(format!("iperf3: {err}"));
    }
    let end = v.get("end").ok_or("no \"end\" section")?;
    let bps = end
        .get("sum_received")
        .and_then(|s| s.get("bits_per_second"))
        .and_then(Value::as_f64)
        .ok_or("no end.sum_received.bits_per_second")?;
    let retransmits = end
        .get("sum_sent")
        .and_then(|s| s.get("retransmits"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Ok((bps, retransmits))
}

#[cfg(target_os = "linux")]
pub use linux::measure;

#[cfg(target_os = "linux")]
mod linux {
    use std::fs;
    use std::time::Duration;

    use super::{Throughput, parse_iperf_json};
    use crate::check::probe::endpoints;
    use crate::error::{LabError, Result};
    use crate::host::command::{in_netns, run, run_with_timeout, wait_until};
    use crate::host::process::{alive, stop_all};
    use crate::layout::Layout;
    use crate::state::State;
    use crate::wiring::common::layout_marker;

    const PORT: &str = "5201";

    /// Measures `from` → `to` for `seconds`.
    pub fn measure(
        layout: &Layout,
        state: &State,
        from: &str,
        to: &str,
        seconds: u32,
    ) -> Result<Throughput> {
        let all = endpoints(state);
        let find = |name: &str| {
            all.iter()
                .find(|e| e.name == name)
                .ok_or_else(|| LabError::UnknownEndpoint(name.to_owned()))
        };
        let (source, target) = (find(from)?, find(to)?);
        let pidfile = layout.iperf_pidfile();
        let marker = layout_marker(layout);
        let mut server = in_netns(&target.name, "iperf3");
        server
            .args(["-s", "-1", "-D", "-p", PORT, "--pidfile"])
            .arg(&pidfile);
        run(&mut server)?;
        let result = (|| {
            wait_until(
                "the iperf3 server's pidfile",
                Duration::from_secs(5),
                || alive(&pidfile, &marker).is_some(),
            )?;
            let mut client = in_netns(&source.name, "iperf3");
            client.args([
                "-c",
                &target.ip.to_string(),
                "-p",
                PORT,
                "-t",
                &seconds.to_string(),
                "-J",
                "--connect-timeout",
                "3000",
            ]);
            let out = run_with_timeout(
                &mut client,
                b"",
                Duration::from_secs(u64::from(seconds) + 20),
            )?;
            let (bits_per_second, retransmits) =
                parse_iperf_json(&out.stdout).map_err(|message| LabError::Output {
                    tool: "iperf3",
                    message,
                })?;
            Ok(Throughput {
                from: from.to_owned(),
                to: to.to_owned(),
                seconds,
                bits_per_second,
                retransmits,
            })
        })();
        if let Some(pid) = alive(&pidfile, &marker) {
            stop_all(&[pid], &marker);
        }
        let _ = fs::remove_file(&pidfile);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_receiver_rate_and_retransmits() {
        let text = br#"{"start":{},"intervals":[],"end":{"sum_sent":{"bits_per_second":5.1e8,"retransmits":12},
            "sum_received":{"bits_per_second":4.9e8}}}"#;
        assert_eq!(parse_iperf_json(text), Ok((4.9e8, 12)));
        let t = Throughput {
            from: "a".into(),
            to: "b".into(),
            seconds: 5,
            bits_per_second: 4.9e8,
            retransmits: 12,
        };
        assert!((t.gbits() - 0.49).abs() < 1e-9);
    }

    #[test]
    fn reports_iperf_errors_and_bad_output() {
        assert_eq!(
            parse_iperf_json(br#"{"error":"unable to connect to server"}"#),
            Err("iperf3: unable to connect to server".into())
        );
        assert!(parse_iperf_json(b"").is_err());
        assert!(parse_iperf_json(br#"{"end":{}}"#).is_err());
        assert!(parse_iperf_json(br#"{"end":{"sum_received":{"bits_per_second":"x"}}}"#).is_err());
    }
}
