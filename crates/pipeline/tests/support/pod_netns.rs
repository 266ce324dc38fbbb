//! Pods as network namespaces on veths into a test switch's `br0` (in OVS's own namespace), and
//! work run inside a namespace: for the real-packet tests and benchmarks.

use std::fs::File;
use std::process::Command;
use std::time::Duration;

use model::{LocalPod, PodKey, TrafficMode};
use nix::sched::{CloneFlags, setns};
use ovstest::Ovs;

pub fn run(args: &[&str]) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"));
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Pod's network namespace, removed on drop.
pub struct PodNs {
    pub name: String,
    pub pod: LocalPod,
    pub ofport: u32,
}

impl Drop for PodNs {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

/// Makes Pod `name` (`10.244.1.<last>`, OpenFlow port `last`) in a new namespace, its `eth0`
/// a veth whose peer is on `br0` in OVS's namespace. The gateway's neighbour entry is static.
pub fn pod(ovs: &Ovs, name: &str, last: u8) -> PodNs {
    let ns = format!("svcpkt-{}-{name}", std::process::id());
    let ovs_ns = ovs.netns().expect("OVS runs in its own namespace");
    let host_end = format!("vh{}-{last}", std::process::id() % 100_000);
    let ip = format!("10.244.1.{last}");
    let mac = format!("02:00:0a:f4:01:{last:02x}");
    let gw = super::node(TrafficMode::NoEncap);
    run(&["ip", "netns", "add", &ns]);
    let pod = PodNs {
        name: ns.clone(),
        pod: LocalPod {
            key: PodKey::new("default", name),
            ip: ip.parse().unwrap(),
            mac: mac.parse().unwrap(),
        },
        ofport: u32::from(last),
    };
    run(&[
        "ip", "-n", &ns, "link", "add", "eth0", "type", "veth", "peer", "name", &host_end, "netns",
        ovs_ns,
    ]);
    run(&["ip", "-n", &ns, "link", "set", "eth0", "address", &mac]);
    run(&[
        "ip",
        "-n",
        &ns,
        "addr",
        "add",
        &format!("{ip}/24"),
        "dev",
        "eth0",
    ]);
    run(&["ip", "-n", &ns, "link", "set", "eth0", "up"]);
    run(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
    run(&[
        "ip",
        "-n",
        &ns,
        "route",
        "add",
        "default",
        "via",
        &gw.gateway_ip.to_string(),
    ]);
    run(&[
        "ip",
        "-n",
        &ns,
        "neigh",
        "replace",
        &gw.gateway_ip.to_string(),
        "lladdr",
        &gw.gateway_mac.to_string(),
        "dev",
        "eth0",
        "nud",
        "permanent",
    ]);
    // The userspace datapath forwards what the veth hands it: checksums must be complete.
    run(&[
        "ip", "netns", "exec", &ns, "ethtool", "-K", "eth0", "tx", "off",
    ]);
    run(&[
        "ip", "netns", "exec", ovs_ns, "ethtool", "-K", &host_end, "tx", "off",
    ]);
    run(&["ip", "-n", ovs_ns, "link", "set", &host_end, "up"]);
    ovs.vsctl(&[
        "add-port",
        "br0",
        &host_end,
        "--",
        "set",
        "interface",
        &host_end,
        &format!("ofport_request={last}"),
    ])
    .expect("add the Pod's port");
    pod
}

/// Runs `work` on a thread that joined network namespace `ns`.
pub fn in_netns<T: Send>(ns: &str, work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let path = format!("/var/run/netns/{ns}");
                let file = File::open(&path).unwrap_or_else(|e| panic!("open {path}: {e}"));
                setns(file, CloneFlags::CLONE_NEWNET)
                    .unwrap_or_else(|e| panic!("setns {path}: {e}"));
                work()
            })
            .join()
            .unwrap_or_else(|_| panic!("work in {ns} panicked"))
    })
}

/// Waits until OVS gave each Pod's port its requested number (the port is open then).
pub fn wait_for_ports(ovs: &Ovs, pods: &[&PodNs]) {
    for pod in pods {
        let name = format!("vh{}-{}", std::process::id() % 100_000, pod.ofport);
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let ofport = ovs
                .vsctl(&["get", "interface", &name, "ofport"])
                .unwrap_or_default();
            if ofport.trim() == pod.ofport.to_string() {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{name} has no ofport: {ofport}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
