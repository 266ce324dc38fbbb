//! Services at scale in a real `ovs-vswitchd` (issue 11's benchmarks a, b and d, at the
//! pipeline): 10,000 Services of one TCP port with 10 endpoints each. Prints:
//!
//! - (d) the resident memory (`VmRSS`) of this process before the Services are built and once
//!   the Services, the renderer and every rendered object are held: the proxy's datapath
//!   state, not a whole agent (no stores, runtime or connections at that point);
//! - (a) the first install of every Service as the agent's proxy does it (each Service rendered
//!   by `ServiceRenderer::upsert` into its owner, all owners in one `Installer::apply`: one
//!   bundle, groups before the flows that use them, confirmed), against `ovs-ofctl --bundle
//!   add-groups` then `--bundle add-flows` of the same objects from files, in the same run;
//!   after each the switch's flows and groups are read back and must equal the cache's;
//! - (b) one endpoint change among the 10,000 Services (one endpoint of one Service replaced),
//!   end to end from the new Service value to the switch's confirmation (render, diff,
//!   bundle, commit), `REPS` times, with the flow and group mods each sent.
//!
//! The translation from the API's objects (`agent::controller::translate`) is not part of
//! this: see docs/benchmarks.md. Linux only; needs root and Open vSwitch (the `ovstest` crate
//! starts a private ovsdb-server and ovs-vswitchd, userspace datapath). Not run in CI. Run with
//! `cargo bench -p pipeline --bench services`; `REPS` sets the repetitions (default 5),
//! `SERVICES` the number of Services (default 10,000).

#[cfg(target_os = "linux")]
#[path = "../tests/support/mod.rs"]
mod support;

#[cfg(target_os = "linux")]
#[path = "common/measure.rs"]
mod measure;

#[cfg(target_os = "linux")]
#[path = "common/scale.rs"]
mod scale;

#[cfg(target_os = "linux")]
fn main() {
    bench::run();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("services: Linux only (installs into Open vSwitch)");
}

#[cfg(target_os = "linux")]
mod bench {
    use std::sync::{Arc, Mutex, PoisonError};
    use std::time::{Duration, Instant};

    use model::Service;
    use openflow::conn::ConnOptions;
    use pipeline::Round;
    use pipeline::cache::{Change, DesiredCache, Installer, SharedCache};
    use pipeline::render::{ServiceRenderer, service_owner};

    use super::measure::{median, mib, ms, status_kib};
    use super::scale::{ENDPOINTS, service};
    use super::support::switch::{Switch, texts};

    fn lock(cache: &SharedCache) -> std::sync::MutexGuard<'_, DesiredCache> {
        cache.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The switch holds exactly `cache`'s flows and groups; their counts.
    fn check_switch(sw: &Switch, cache: &SharedCache, what: &str) -> (usize, usize) {
        let flows = texts(&lock(cache).all_flows());
        let mut groups: Vec<String> = lock(cache)
            .all_groups()
            .iter()
            .map(ToString::to_string)
            .collect();
        groups.sort();
        let dumped = sw.dump();
        assert_eq!(dumped.len(), flows.len(), "{what}: flow count");
        assert_eq!(dumped, flows, "{what}: the switch's flows differ");
        assert_eq!(
            sw.dump_groups(),
            groups,
            "{what}: the switch's groups differ"
        );
        (flows.len(), groups.len())
    }

    fn clear(sw: &Switch) {
        for what in ["del-flows", "del-groups"] {
            sw.ovs
                .ofctl(&["-O", "OpenFlow15", what, "{mgmt:br0}"])
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        assert!(sw.dump().is_empty(), "flows left after del-flows");
        assert!(sw.dump_groups().is_empty(), "groups left after del-groups");
    }

    fn installer(sw: &Switch) -> (Installer, SharedCache) {
        let cache = Arc::new(Mutex::new(DesiredCache::new(Round::FIRST)));
        (Installer::new(sw.conn.clone(), cache.clone()), cache)
    }

    /// Every Service rendered into one change (each into its owner), the renderer committed.
    fn render_all(renderer: &mut ServiceRenderer, services: &[Service]) -> Change {
        let mut change = Change::new();
        for service in services {
            let update = renderer.upsert(service).expect("a valid Service");
            change = change.replace(service_owner(&service.key), update.objects());
            renderer.commit(update.record);
        }
        change
    }

    pub fn run() {
        let reps: usize = std::env::var("REPS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(5);
        let count: usize = std::env::var("SERVICES")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(10_000);
        let rss_start = status_kib("VmRSS");
        let services: Vec<Service> = (0..count).map(|i| service(i, 0)).collect();
        let mut renderer = ServiceRenderer::new();
        let start = Instant::now();
        let change = render_all(&mut renderer, &services);
        let rendered = start.elapsed();
        let (rss_held, hwm) = (status_kib("VmRSS"), status_kib("VmHWM"));
        println!(
            "Services: {count}, endpoints each: {ENDPOINTS}; rendered in {:.1} ms",
            ms(rendered)
        );
        println!(
            "(d) memory: VmRSS {:.1} MiB before, {:.1} MiB with the Services, renderer and rendered objects held (+{:.1} MiB); VmHWM {:.1} MiB",
            mib(rss_start),
            mib(rss_held),
            mib(rss_held.saturating_sub(rss_start)),
            mib(hwm)
        );

        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let sw = rt.block_on(Switch::with_pods(None, ConnOptions::default(), &[]));
        let flows_file = sw.ovs.dir().join("service-flows.txt");
        let groups_file = sw.ovs.dir().join("service-groups.txt");
        println!(
            "\n(a) First install of every Service into ovs-vswitchd (userspace datapath), {reps} repetitions\n"
        );
        println!(
            "| rep | ours: render + Installer::apply, one bundle (ms) | ovs-ofctl --bundle add-groups + add-flows FILES (ms) | ours / ovs-ofctl |"
        );
        println!("|---:|---:|---:|---:|");
        let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let mut parts = Vec::new();
        let mut installed = (0, 0);
        for rep in 1..=reps {
            let (mut mine, mut ofctl) = (Duration::ZERO, Duration::ZERO);
            for contender in (0..2).map(|i| (i + rep - 1) % 2) {
                clear(&sw);
                let (installer, cache) = installer(&sw);
                if contender == 0 {
                    let start = Instant::now();
                    let mut fresh = ServiceRenderer::new();
                    let change = render_all(&mut fresh, &services);
                    let rendered = start.elapsed();
                    let scratch = DesiredCache::new(Round::FIRST);
                    let diff_start = Instant::now();
                    let prepared = scratch
                        .prepare(change.clone())
                        .expect("no conflicting objects");
                    let diffed = diff_start.elapsed();
                    drop(prepared);
                    let install_start = Instant::now();
                    rt.block_on(installer.apply(change)).expect("first install");
                    let applied = install_start.elapsed();
                    mine = rendered + applied;
                    parts.push((ms(rendered), ms(diffed), ms(applied)));
                } else {
                    lock(&cache)
                        .apply(change.clone())
                        .expect("no conflicting objects");
                    let lines = |items: Vec<String>| -> String {
                        items.into_iter().map(|l| l + "\n").collect()
                    };
                    std::fs::write(&flows_file, lines(texts(&lock(&cache).all_flows())))
                        .expect("write the flows file");
                    let groups = lock(&cache)
                        .all_groups()
                        .iter()
                        .map(ToString::to_string)
                        .collect();
                    std::fs::write(&groups_file, lines(groups)).expect("write the groups file");
                    let start = Instant::now();
                    for (what, file) in [("add-groups", &groups_file), ("add-flows", &flows_file)] {
                        sw.ovs
                            .ofctl(&[
                                "-O",
                                "OpenFlow15",
                                "--bundle",
                                what,
                                "{mgmt:br0}",
                                file.to_str().expect("utf-8 path"),
                            ])
                            .unwrap_or_else(|e| panic!("ovs-ofctl {what}: {e}"));
                    }
                    ofctl = start.elapsed();
                }
                installed = check_switch(&sw, &cache, "first install");
            }
            let ratio = mine.as_secs_f64() / ofctl.as_secs_f64();
            println!(
                "| {rep} | {:.1} | {:.1} | {ratio:.2} |",
                ms(mine),
                ms(ofctl)
            );
            ours.push(ms(mine));
            theirs.push(ms(ofctl));
            ratios.push(ratio);
        }
        println!(
            "| median | {:.1} | {:.1} | **{:.2}** |",
            median(ours),
            median(theirs),
            median(ratios)
        );
        println!(
            "\nthe switch held {} flows and {} groups after each install",
            installed.0, installed.1
        );
        println!(
            "ours, split (ms, per repetition): render / the cache's diff alone (on a scratch cache) / Installer::apply (diff, one bundle, commit): {}",
            parts
                .iter()
                .map(|(r, d, a)| format!("{r:.0} / {d:.0} / {a:.0}"))
                .collect::<Vec<_>>()
                .join(", ")
        );

        // (b) From the installed state, one endpoint of one Service changes per repetition.
        clear(&sw);
        let (installer, cache) = installer(&sw);
        rt.block_on(installer.apply(change)).expect("install");
        check_switch(&sw, &cache, "install before the changes");
        println!(
            "\n(b) One endpoint change among the {count} Services, end to end (render + diff + bundle + confirmation), {reps} repetitions\n"
        );
        println!(
            "| rep | Service | render (ms) | install (ms) | end to end (ms) | flow mods | group mods |"
        );
        println!("|---:|---|---:|---:|---:|---:|---:|");
        let mut totals = Vec::new();
        for rep in 1..=reps {
            let i = (rep * 997) % count;
            let changed = service(i, rep);
            let start = Instant::now();
            let update = renderer.upsert(&changed).expect("a valid Service");
            let render = start.elapsed();
            let diff = rt
                .block_on(installer.apply(update.change))
                .expect("install the change");
            renderer.commit(update.record);
            let total = start.elapsed();
            println!(
                "| {rep} | {} | {:.2} | {:.2} | {:.2} | {} | {} |",
                changed.key,
                ms(render),
                ms(total - render),
                ms(total),
                diff.flows.len(),
                diff.groups.len()
            );
            totals.push(ms(total));
        }
        println!("| median | | | | **{:.2}** | | |", median(totals));
        check_switch(&sw, &cache, "after the changes");
    }
}
