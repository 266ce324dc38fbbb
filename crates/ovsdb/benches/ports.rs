//! Benchmark: create 1,000 ports (internal interface + port external_ids) on a fresh
//! ovsdb-server, once with this crate (one transaction) and once with one `ovs-vsctl --no-wait`
//! invocation holding 1,000 `add-port` commands. Prints a markdown table (one row per
//! repetition and a median row). Needs root and Open vSwitch; `REPS` sets the repetitions.

#[cfg(target_os = "linux")]
fn main() {
    linux::run();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("the ports benchmark needs Linux with Open vSwitch installed");
}

#[cfg(target_os = "linux")]
mod linux {
    use std::time::{Duration, Instant};

    use localipc::Endpoint;
    use ovsdb::vswitch::{PortSpec, VswitchClient};
    use ovsdb::{Client, ClientConfig};
    use ovstest::Ovs;

    const PORTS: usize = 1000;

    fn fresh_server() -> Ovs {
        let ovs = Ovs::start_db().expect("start ovsdb-server");
        ovs.vsctl(&["--no-wait", "add-br", "br0"]).expect("add-br");
        ovs
    }

    fn port_count(ovs: &Ovs) -> usize {
        ovs.vsctl(&["--no-wait", "list-ports", "br0"])
            .expect("list-ports")
            .lines()
            .count()
    }

    /// Returns (connect + transaction, transaction only).
    fn ours(rt: &tokio::runtime::Runtime) -> (Duration, Duration) {
        let ovs = fresh_server();
        let specs: Vec<PortSpec> = (0..PORTS)
            .map(|i| {
                let mut spec = PortSpec::internal(&format!("p{i}"));
                spec.port_external_ids
                    .insert("antrea-type".into(), "container".into());
                spec
            })
            .collect();
        let (total, txn) = rt.block_on(async {
            let start = Instant::now();
            let client = Client::connect(Endpoint::Unix(ovs.db_socket()), ClientConfig::default())
                .await
                .expect("connect");
            let vs = VswitchClient::new(client);
            let txn_start = Instant::now();
            let created = vs.create_ports("br0", &specs).await.expect("create ports");
            assert_eq!(created.len(), PORTS);
            (start.elapsed(), txn_start.elapsed())
        });
        assert_eq!(port_count(&ovs), PORTS);
        (total, txn)
    }

    fn vsctl() -> Duration {
        let ovs = fresh_server();
        let names: Vec<String> = (0..PORTS).map(|i| format!("p{i}")).collect();
        let mut args: Vec<&str> = vec!["--no-wait"];
        for name in &names {
            args.extend_from_slice(&[
                "--",
                "add-port",
                "br0",
                name,
                "--",
                "set",
                "Interface",
                name,
                "type=internal",
            ]);
            args.extend_from_slice(&[
                "--",
                "set",
                "Port",
                name,
                "external_ids:antrea-type=container",
            ]);
        }
        let start = Instant::now();
        ovs.vsctl(&args).expect("ovs-vsctl add-port x1000");
        let elapsed = start.elapsed();
        assert_eq!(port_count(&ovs), PORTS);
        elapsed
    }

    fn ms(d: Duration) -> f64 {
        d.as_secs_f64() * 1000.0
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    pub fn run() {
        let reps: usize = std::env::var("REPS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(5)
            .max(1);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        println!(
            "| run | ovsdb crate: connect + txn (ms) | ovsdb crate: txn only (ms) | ovs-vsctl (ms) | ovs-vsctl / crate |"
        );
        println!("|---|---|---|---|---|");
        let (mut totals, mut txns, mut baselines) = (Vec::new(), Vec::new(), Vec::new());
        for run in 1..=reps {
            let (total, txn) = ours(&rt);
            let base = vsctl();
            println!(
                "| {run} | {:.1} | {:.1} | {:.1} | {:.1}x |",
                ms(total),
                ms(txn),
                ms(base),
                ms(base) / ms(total)
            );
            totals.push(ms(total));
            txns.push(ms(txn));
            baselines.push(ms(base));
        }
        let (t, x, b) = (median(totals), median(txns), median(baselines));
        println!(
            "| median of {reps} ({PORTS} ports) | {t:.1} | {x:.1} | {b:.1} | {:.1}x |",
            b / t
        );
    }
}
