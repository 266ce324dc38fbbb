//! NetworkPolicy at scale, computed and installed into a real `ovs-vswitchd`: 10,000 Pods in 100
//! Namespaces (100 of them on this Node), 5,000 policies. Prints:
//!
//! - the time to load the objects, compute the snapshot from scratch and render it; the flow
//!   count with conjunctions against the flows the same rules would need without them (N×M);
//! - the resident memory (`VmRSS`) of this process before the engine is built and once the
//!   engine, the renderer and the rendered flows are held: the agent's NetworkPolicy state, not
//!   a whole agent process (no runtime, stores or connections at that point);
//! - the first install of the whole flow set as the agent does it (`Installer::replace` of
//!   the NetworkPolicy owner from an empty cache: one bundle, confirmed), against
//!   `ovs-ofctl --bundle add-flows` of the same flows from a file, in the same run; after each
//!   the switch's flows are read back and must equal the cache's;
//! - the end-to-end latency of a peer Pod's label change and of a policy change, both ways,
//!   `REPS` times each, along two paths in the same run, each into its own ovs-vswitchd that
//!   holds the same flows: the **old** path renders the whole snapshot and replaces the owner's
//!   flows (the cache diffs all of them); the **new** path renders the sync's `PolicyDelta`
//!   (`PolicyRenderer::update`) and sends its patch (`Change::patch`, costing the patch's
//!   size). Step by step: engine (upsert + sync, shared; policies it recomputed whole and rules
//!   it patched), render, the cache's diff alone, install (diff, one bundle, commit), rules
//!   rendered, flow mods sent. The two paths must send
//!   the same flow mods, and both switches must hold their caches' flows, the same for both.
//!
//! Linux only; needs root and Open vSwitch (the `ovstest` crate starts a private ovsdb-server
//! and ovs-vswitchd, userspace datapath). Not run in CI. Run with
//! `cargo bench -p pipeline --bench netpol`; `REPS` sets the repetitions (default 5).

#[cfg(target_os = "linux")]
#[path = "../tests/support/mod.rs"]
mod support;

#[cfg(target_os = "linux")]
#[path = "common/measure.rs"]
mod measure;

#[cfg(target_os = "linux")]
fn main() {
    bench::run();
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("netpol: Linux only (installs into Open vSwitch)");
}

#[cfg(target_os = "linux")]
mod bench {
    use std::sync::{Arc, Mutex, PoisonError};
    use std::time::{Duration, Instant};

    use k8s_openapi::api::core::v1::{Namespace, Pod};
    use k8s_openapi::api::networking::v1::NetworkPolicy;
    use netpol::{PolicyEngine, PolicyError};
    use openflow::conn::ConnOptions;
    use pipeline::Round;
    use pipeline::cache::{Change, DesiredCache, FlowDiff, Installer, Owner, Patch, SharedCache};
    use pipeline::owners::NETWORK_POLICY;
    use pipeline::render::{PolicyFlows, PolicyRenderer};
    use serde_json::json;

    use super::measure::{median, mib, ms, status_kib};
    use super::support::switch::{Switch, texts};

    const NAMESPACES: usize = 100;
    const PODS_PER_NAMESPACE: usize = 100;
    const POLICIES_PER_NAMESPACE: usize = 50;

    fn namespace(n: usize) -> Namespace {
        serde_json::from_value(json!({"metadata": {"name": format!("ns{n}"),
                                                   "labels": {"team": format!("t{}", n % 10)}}}))
        .unwrap()
    }

    /// Pod `i` of Namespace `n`; the first Pod of every Namespace runs on this Node.
    fn pod(n: usize, i: usize, tier: &str) -> Pod {
        let ip = format!("10.{}.{}.{}", 100 + n / 100, n % 100, 10 + i);
        serde_json::from_value(json!({
            "metadata": {"namespace": format!("ns{n}"), "name": format!("p{i}"),
                         "labels": {"app": format!("app{}", i % POLICIES_PER_NAMESPACE),
                                    "tier": tier}},
            "spec": {"nodeName": if i == 0 { "n1" } else { "other" }, "containers": [{"name": "c"}]},
            "status": {"phase": "Running", "podIP": ip},
        }))
        .unwrap()
    }

    fn tier(i: usize) -> &'static str {
        if i.is_multiple_of(2) { "fe" } else { "be" }
    }

    /// Policy `j` of Namespace `n`: Pods `app<j>` accept front-ends of the Namespaces of team
    /// `t<j%10>` on TCP 80 and 8000-`end`.
    fn policy(n: usize, j: usize, end: u16) -> NetworkPolicy {
        serde_json::from_value(json!({
            "metadata": {"namespace": format!("ns{n}"), "name": format!("np{j}")},
            "spec": {
                "podSelector": {"matchLabels": {"app": format!("app{j}")}},
                "ingress": [{
                    "from": [{"namespaceSelector": {"matchLabels": {"team": format!("t{}", j % 10)}},
                              "podSelector": {"matchLabels": {"tier": "fe"}}}],
                    "ports": [{"port": 80}, {"port": 8000, "endPort": end}],
                }],
            },
        }))
        .unwrap()
    }

    /// The switch holds exactly `cache`'s flows (read back with `ovs-ofctl dump-flows`).
    fn check_switch(sw: &Switch, cache: &SharedCache, what: &str) -> usize {
        let expected = texts(
            &cache
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .all_flows(),
        );
        let dumped = sw.dump();
        assert_eq!(dumped, expected, "{what}: the switch's flows differ");
        dumped.len()
    }

    fn clear(sw: &Switch) {
        sw.ovs
            .ofctl(&["-O", "OpenFlow15", "del-flows", "{mgmt:br0}"])
            .expect("del-flows");
        assert!(sw.dump().is_empty(), "flows left after del-flows");
    }

    /// An installer with an empty cache, as the agent's at its first NetworkPolicy install.
    fn installer(sw: &Switch) -> (Installer, SharedCache) {
        let cache = Arc::new(Mutex::new(DesiredCache::new(Round::FIRST)));
        (Installer::new(sw.conn.clone(), cache.clone()), cache)
    }

    /// One way from the engine's result to a switch: its renderer, its cache and installer,
    /// its own ovs-vswitchd.
    struct Path {
        renderer: PolicyRenderer,
        installer: Installer,
        cache: SharedCache,
        sw: Switch,
    }

    /// How the two paths took one change.
    #[derive(Default)]
    struct Times {
        engine: Vec<f64>,
        /// Per path (0: whole render + whole-owner replace, 1: delta + update + patch).
        render: [Vec<f64>; 2],
        diff: [Vec<f64>; 2],
        install: [Vec<f64>; 2],
        end_to_end: [Vec<f64>; 2],
        rules_rendered: [usize; 2],
        entries_rendered: usize,
        /// Policies the engine recomputed whole, rules it patched.
        policies: usize,
        rules_patched: usize,
        /// Flow mods sent (the same for both, checked): total, add, modify, delete.
        sent: (usize, usize, usize, usize),
        flows: (usize, usize),
    }

    /// The flow mods of a diff as sorted texts (the paths may list them in another order).
    fn mod_texts(diff: &FlowDiff) -> Vec<String> {
        let mut all: Vec<String> = diff.messages().map(ToString::to_string).collect();
        all.sort();
        all
    }

    /// Applies `change` to the engine, then takes the result to both switches: the old path
    /// renders the whole snapshot and replaces the owner's flows (the cache diffs all of
    /// them); the new path renders the sync's delta and sends its patch. Times each step;
    /// checks that both send the same flow mods and that each switch holds its cache's flows,
    /// the two caches holding the same.
    async fn update(
        engine: &mut PolicyEngine,
        paths: &mut [Path; 2],
        times: &mut Times,
        change: impl FnOnce(&mut PolicyEngine) -> Result<(), PolicyError>,
    ) {
        let owner = Owner::from(NETWORK_POLICY);
        let start = Instant::now();
        change(engine).expect("engine input");
        let report = engine.sync();
        let engine_time = start.elapsed();
        times.engine.push(ms(engine_time));
        times.policies = report.policies;
        times.rules_patched = report.rules;
        let mut sent = Vec::new();
        for (i, path) in paths.iter_mut().enumerate() {
            let before = path.renderer.rules_rendered();
            let start = Instant::now();
            let change = if i == 0 {
                let rendered = path.renderer.render(engine.snapshot());
                Change::new().replace(owner.clone(), rendered.flows)
            } else {
                let update = path.renderer.update(&report.delta);
                times.entries_rendered = update.entries_rendered;
                let patch = Patch {
                    upsert: update.patch.upsert.into(),
                    remove_flows: update.patch.remove,
                    ..Patch::default()
                };
                Change::new().patch(owner.clone(), patch)
            };
            let render = start.elapsed();
            times.rules_rendered[i] = (path.renderer.rules_rendered() - before) as usize;
            let start = Instant::now();
            let prepared = path
                .cache
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .prepare(change.clone())
                .expect("no conflicting flows");
            let diff = start.elapsed();
            let start = Instant::now();
            let diff_sent = path
                .installer
                .apply(change)
                .await
                .expect("install the update")
                .flows;
            let install = start.elapsed();
            assert_eq!(
                diff_sent, prepared.diff.flows,
                "the installer sent another diff"
            );
            times.render[i].push(ms(render));
            times.diff[i].push(ms(diff));
            times.install[i].push(ms(install));
            times.end_to_end[i].push(ms(engine_time + render + install));
            sent.push(diff_sent);
        }
        assert_eq!(
            mod_texts(&sent[0]),
            mod_texts(&sent[1]),
            "the two paths sent other flow mods"
        );
        let [old, new] = &*paths;
        let now = check_switch(&old.sw, &old.cache, "old path");
        assert_eq!(check_switch(&new.sw, &new.cache, "new path"), now);
        assert_eq!(
            texts(&lock_flows(&old.cache)),
            texts(&lock_flows(&new.cache)),
            "the two caches differ"
        );
        let d = &sent[1];
        times.sent = (d.len(), d.adds.len(), d.modifies.len(), d.deletes.len());
        times.flows.1 = now;
    }

    fn lock_flows(cache: &SharedCache) -> Vec<openflow::msg::flow_mod::FlowMod> {
        cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .all_flows()
    }

    fn spread(v: &[f64]) -> String {
        let mut sorted = v.to_vec();
        sorted.sort_by(f64::total_cmp);
        format!(
            "{:.2} ({:.2}–{:.2})",
            median(v.to_vec()),
            sorted[0],
            sorted[sorted.len() - 1]
        )
    }

    /// One change's rows: the old path and the new one.
    fn print_rows(what: &str, t: &Times) {
        let (total, add, modify, delete) = t.sent;
        for (i, name) in ["old: whole render + replace", "new: delta + update + patch"]
            .iter()
            .enumerate()
        {
            println!(
                "| {what} | {name} | {} / {} | {} | {} | {} | {} | {} | **{}** | {total} ({add} add, {modify} modify, {delete} delete) | {} → {} |",
                t.policies,
                t.rules_patched,
                if i == 0 {
                    t.rules_rendered[0].to_string()
                } else {
                    format!("{} ({} entries)", t.rules_rendered[1], t.entries_rendered)
                },
                spread(&t.engine),
                spread(&t.render[i]),
                spread(&t.diff[i]),
                spread(&t.install[i]),
                spread(&t.end_to_end[i]),
                t.flows.0,
                t.flows.1,
            );
        }
    }

    pub fn run() {
        let reps: usize = std::env::var("REPS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(5);
        let rss_start = status_kib("VmRSS");
        let mut engine = PolicyEngine::new("n1");
        let start = Instant::now();
        for n in 0..NAMESPACES {
            engine.upsert_namespace(&namespace(n)).unwrap();
            for i in 0..PODS_PER_NAMESPACE {
                engine.upsert_pod(&pod(n, i, tier(i))).unwrap();
            }
            for j in 0..POLICIES_PER_NAMESPACE {
                engine.upsert_policy(&policy(n, j, 8100)).unwrap();
            }
        }
        let loaded = start.elapsed();
        let start = Instant::now();
        let report = engine.sync();
        let computed = start.elapsed();
        let mut renderer = PolicyRenderer::new();
        let start = Instant::now();
        let flows: PolicyFlows = renderer.render(engine.snapshot());
        let rendered = start.elapsed();
        let (rss_held, hwm) = (status_kib("VmRSS"), status_kib("VmHWM"));

        let naive: usize = flows.rules.values().map(|r| r.without_conjunction).sum();
        let per_rule: usize = flows.rules.values().map(|r| r.flows).sum();
        let groups = engine.group_count();
        let snapshot = engine.snapshot();
        println!(
            "Pods: {}, local: {}, policies: {}",
            NAMESPACES * PODS_PER_NAMESPACE,
            NAMESPACES,
            NAMESPACES * POLICIES_PER_NAMESPACE
        );
        println!(
            "groups: {}, rules on this Node: {}, isolated Pods: {}",
            groups,
            snapshot.rules.len(),
            snapshot.isolation.ingress.len()
        );
        println!(
            "load objects: {loaded:?}; compute ({} policies): {computed:?}; render: {rendered:?}",
            report.policies
        );
        println!(
            "flows: {} installed ({per_rule} counted per rule) vs {naive} without conjunctions",
            flows.flows.len()
        );
        println!(
            "memory (VmRSS of this process): {:.1} MiB before the engine, {:.1} MiB with engine + \
             renderer + rendered flows held: the NetworkPolicy state is {:.1} MiB (peak VmHWM {:.1} MiB)",
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
        let file = sw.ovs.dir().join("policy-flows.txt");

        println!(
            "\nFirst install of the {} flows into ovs-vswitchd (userspace datapath), {reps} repetitions\n",
            flows.flows.len()
        );
        println!(
            "| rep | ours: Installer::replace, one bundle (ms) | ovs-ofctl --bundle add-flows FILE (ms) | ours / ovs-ofctl |"
        );
        println!("|---:|---:|---:|---:|");
        let (mut ours, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        for rep in 1..=reps {
            let (mut mine, mut ofctl) = (Duration::ZERO, Duration::ZERO);
            for contender in (0..2).map(|i| (i + rep - 1) % 2) {
                clear(&sw);
                let (installer, cache) = installer(&sw);
                if contender == 0 {
                    let start = Instant::now();
                    rt.block_on(
                        installer.replace(Owner::from(NETWORK_POLICY), flows.flows.clone()),
                    )
                    .expect("first install");
                    mine = start.elapsed();
                } else {
                    // The same flows as the installer stamps them (cookie of the owner's round).
                    cache
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .replace(Owner::from(NETWORK_POLICY), flows.flows.clone())
                        .expect("no conflicting flows");
                    let text: String = texts(
                        &cache
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .all_flows(),
                    )
                    .into_iter()
                    .map(|f| f + "\n")
                    .collect();
                    std::fs::write(&file, text).expect("write the flows file");
                    let path = file.to_str().expect("utf-8 path");
                    let start = Instant::now();
                    sw.ovs
                        .ofctl(&[
                            "-O",
                            "OpenFlow15",
                            "--bundle",
                            "add-flows",
                            "{mgmt:br0}",
                            path,
                        ])
                        .expect("ovs-ofctl add-flows");
                    ofctl = start.elapsed();
                }
                let installed = check_switch(&sw, &cache, "first install");
                assert_eq!(installed, flows.flows.len());
            }
            let ratio = mine.as_secs_f64() / ofctl.as_secs_f64();
            println!(
                "| {rep} | {:.2} | {:.2} | {ratio:.2} |",
                ms(mine),
                ms(ofctl)
            );
            ours.push(ms(mine));
            theirs.push(ms(ofctl));
            ratios.push(ratio);
        }
        println!(
            "| median | {:.2} | {:.2} | **{:.2}** |",
            median(ours),
            median(theirs),
            median(ratios)
        );

        // Both paths start from the same installed flows, each in its own ovs-vswitchd; the new
        // path's renderer holds the state the whole render built (same conjunction ids).
        clear(&sw);
        let second = rt.block_on(Switch::with_pods(None, ConnOptions::default(), &[]));
        let mut paths = [(sw, renderer.clone()), (second, renderer)].map(|(sw, renderer)| {
            let (installer, cache) = installer(&sw);
            rt.block_on(installer.replace(Owner::from(NETWORK_POLICY), flows.flows.clone()))
                .expect("install");
            check_switch(&sw, &cache, "install before the updates");
            Path {
                renderer,
                installer,
                cache,
                sw,
            }
        });
        println!(
            "\nIncremental updates, end to end (engine + render + install), both paths on the same change, {reps} repetitions (median (min–max), ms)\n"
        );
        println!(
            "| change | path | engine: policies recomputed / rules patched | rules rendered | engine | render | diff | install: diff + bundle + commit | end to end | flow mods sent | flows in the switch |"
        );
        println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|");
        let flows_now = |paths: &[Path; 2]| lock_flows(&paths[0].cache).len();
        rt.block_on(async {
            // A front-end of a team-t0 Namespace becomes a back-end: it leaves the peers of
            // every rule of team t0, among them the rules of this Node's Pods; then back.
            let (mut away, mut back) = (Times::default(), Times::default());
            for _ in 0..reps {
                away.flows.0 = flows_now(&paths);
                update(&mut engine, &mut paths, &mut away, |e| {
                    e.upsert_pod(&pod(10, 2, "be"))
                })
                .await;
                back.flows.0 = flows_now(&paths);
                update(&mut engine, &mut paths, &mut back, |e| {
                    e.upsert_pod(&pod(10, 2, "fe"))
                })
                .await;
            }
            print_rows("peer Pod label tier fe → be", &away);
            print_rows("peer Pod label tier be → fe", &back);
            // A policy of a local Pod changes its port range, and back.
            let (mut wider, mut narrower) = (Times::default(), Times::default());
            for _ in 0..reps {
                wider.flows.0 = flows_now(&paths);
                update(&mut engine, &mut paths, &mut wider, |e| {
                    e.upsert_policy(&policy(7, 0, 8200))
                })
                .await;
                narrower.flows.0 = flows_now(&paths);
                update(&mut engine, &mut paths, &mut narrower, |e| {
                    e.upsert_policy(&policy(7, 0, 8100))
                })
                .await;
            }
            print_rows("policy port range 8000-8100 → 8000-8200", &wider);
            print_rows("policy port range 8000-8200 → 8000-8100", &narrower);
        });
    }
}
