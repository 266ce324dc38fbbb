//! Benchmark: install 100,000 Antrea-like flows (the mix of `support/flow_mix.rs`) into a real
//! `ovs-vswitchd` (userspace datapath, bridge `br0`), measured until the switch confirms:
//!
//! - **ours, bundle**: `OfConnection::bundle` (one atomic bundle: open, 100,000 adds and a
//!   barrier in one write, commit), including encoding the `FlowMod` values;
//! - **ours, batch**: `OfConnection::batch` (100,000 flow mods and a barrier), for information;
//! - **ovs-ofctl**: `ovs-ofctl -O OpenFlow15 --bundle add-flows {mgmt:br0} FILE`, the same flows
//!   written as text by our `Display`, timed until the command exits (process start, text parse,
//!   connect and install included; our connection is set up before the clock starts).
//!
//! Before each contender every flow is deleted, the table checked empty and the switch given a
//! second to finish the deletion's background work; the contenders' order rotates from one
//! repetition to the next. After each, the flow count is checked (`ovs-ofctl dump-aggregate`,
//! and for the bundle also our own `dump_flows`). The CPU time this process spent on the bundle
//! (encoding, writing, reading replies) is printed too: the rest of the wall time is the switch.
//! Prints a markdown table per repetition and the medians. Needs root and Open vSwitch; `REPS`
//! sets the repetitions (default 3).

#[path = "support/flow_mix.rs"]
#[cfg(target_os = "linux")]
mod flow_mix;

#[cfg(target_os = "linux")]
fn main() {
    linux::run();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("the install benchmark needs Linux with Open vSwitch installed");
}

#[cfg(target_os = "linux")]
mod linux {
    use std::time::{Duration, Instant};

    use localipc::Endpoint;
    use openflow::conn::{ConnOptions, Encoded, OfConnection};
    use openflow::msg::flow_mod::FlowMod;
    use openflow::msg::flow_stats::FlowDescRequest;
    use ovstest::Ovs;

    use super::flow_mix::flow_text;

    const FLOWS: usize = 100_000;

    fn flow_count(ovs: &Ovs) -> usize {
        let out = ovs
            .ofctl(&["-O", "OpenFlow15", "dump-aggregate", "{mgmt:br0}"])
            .expect("dump-aggregate");
        out.split_whitespace()
            .find_map(|w| w.strip_prefix("flow_count="))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no flow_count in {out:?}"))
    }

    fn clear(ovs: &Ovs) {
        ovs.ofctl(&["-O", "OpenFlow15", "del-flows", "{mgmt:br0}"])
            .expect("del-flows");
        assert_eq!(flow_count(ovs), 0, "flows left after del-flows");
        std::thread::sleep(Duration::from_secs(1));
    }

    /// CPU time (user + system) this process has used so far.
    fn cpu_time() -> Duration {
        let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
        // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
        let after = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .unwrap_or_default();
        let ticks: u64 = after
            .split_whitespace()
            .skip(11)
            .take(2)
            .filter_map(|t| t.parse::<u64>().ok())
            .sum();
        // Clock ticks are 1/100 s on Linux (USER_HZ).
        Duration::from_secs_f64(ticks as f64 / 100.0)
    }

    fn ms(d: Duration) -> f64 {
        d.as_secs_f64() * 1e3
    }

    fn median(mut v: Vec<f64>) -> f64 {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    }

    pub fn run() {
        let reps: usize = std::env::var("REPS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(3);
        let flows: Vec<FlowMod> = (0..FLOWS)
            .map(|i| flow_text(i).parse().expect("flow text"))
            .collect();
        let dir =
            std::env::temp_dir().join(format!("openflow-install-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("flows.txt");
        let text: String = flows.iter().map(|f| format!("{f}\n")).collect();
        std::fs::write(&file, &text).expect("write flows file");
        let file = file.to_str().expect("utf-8 path").to_owned();

        let ovs = Ovs::start().expect("start ovs");
        ovs.add_bridge("br0").expect("add br0");
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let conn = rt
            .block_on(OfConnection::connect(
                Endpoint::Unix(ovs.mgmt_socket("br0")),
                ConnOptions::default(),
            ))
            .expect("connect");

        println!(
            "Installing {FLOWS} flows into ovs-vswitchd (userspace datapath), {reps} repetitions\n"
        );
        println!(
            "| rep | ours, bundle (ms) | our CPU in it (ms) | ours, batch (ms) | ovs-ofctl --bundle add-flows (ms) | ours bundle / ovs-ofctl |"
        );
        println!("|---:|---:|---:|---:|---:|---:|");
        let (mut bundles, mut cpus, mut batches, mut ofctls, mut ratios) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for rep in 1..=reps {
            let (mut bundle, mut cpu, mut batch, mut ofctl) = Default::default();
            for contender in (0..3).map(|i| (i + rep - 1) % 3) {
                clear(&ovs);
                match contender {
                    0 => {
                        let (start, cpu_start) = (Instant::now(), cpu_time());
                        rt.block_on(async {
                            let encoded: Vec<Encoded> = flows
                                .iter()
                                .map(|f| Encoded::new(f).expect("encode"))
                                .collect();
                            conn.bundle(&encoded).await.expect("bundle")
                        });
                        (bundle, cpu) = (start.elapsed(), cpu_time() - cpu_start);
                        assert_eq!(
                            flow_count(&ovs),
                            FLOWS,
                            "bundle installed a different number of flows"
                        );
                        let dumped = rt
                            .block_on(conn.dump_flows(&FlowDescRequest::default()))
                            .expect("dump_flows");
                        assert_eq!(dumped.len(), FLOWS, "our dump_flows disagrees");
                    }
                    1 => {
                        let start = Instant::now();
                        rt.block_on(async {
                            let encoded: Vec<Encoded> = flows
                                .iter()
                                .map(|f| Encoded::new(f).expect("encode"))
                                .collect();
                            conn.batch(&encoded).await.expect("batch")
                        });
                        batch = start.elapsed();
                        assert_eq!(
                            flow_count(&ovs),
                            FLOWS,
                            "batch installed a different number of flows"
                        );
                    }
                    _ => {
                        let start = Instant::now();
                        ovs.ofctl(&[
                            "-O",
                            "OpenFlow15",
                            "--bundle",
                            "add-flows",
                            "{mgmt:br0}",
                            &file,
                        ])
                        .expect("ovs-ofctl add-flows");
                        ofctl = start.elapsed();
                        assert_eq!(
                            flow_count(&ovs),
                            FLOWS,
                            "ovs-ofctl installed a different number of flows"
                        );
                    }
                }
            }
            let ratio = bundle.as_secs_f64() / ofctl.as_secs_f64();
            println!(
                "| {rep} | {:.1} | {:.0} | {:.1} | {:.1} | {ratio:.2} |",
                ms(bundle),
                ms(cpu),
                ms(batch),
                ms(ofctl)
            );
            bundles.push(ms(bundle));
            cpus.push(ms(cpu));
            batches.push(ms(batch));
            ofctls.push(ms(ofctl));
            ratios.push(ratio);
        }
        println!(
            "| median | {:.1} | {:.0} | {:.1} | {:.1} | {:.2} |",
            median(bundles),
            median(cpus),
            median(batches),
            median(ofctls),
            median(ratios)
        );
        conn.close();
        let _ = std::fs::remove_dir_all(&dir);
    }
}
