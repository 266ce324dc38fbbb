//! The parts every wiring shares: the LAN (a Linux bridge in `lab-underlay`), each Node's
//! namespace with its NIC and private OVS, the external host, and the `serve` answerers.

use std::fs;
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::Child;
use std::time::Duration;

use model::MacAddr;

use crate::error::{LabError, Result};
use crate::host::command::{in_netns, ip, wait_until};
use crate::host::netns::{self, sysctl, tx_off};
use crate::host::ovs::NodeOvs;
use crate::host::process::spawn_detached;
use crate::layout::Layout;
use crate::plan::{
    EXT_IP, EXT_NETNS, FLAT_POD_PREFIX_LEN, LAN_BRIDGE, LAN_PREFIX_LEN, NODE_NIC, NodePlan,
    SERVE_PORT, UNDERLAY_NETNS, Wiring,
};

/// The LAN: namespace `lab-underlay` with bridge `lan0`.
pub fn underlay() -> Result<()> {
    netns::add(UNDERLAY_NETNS, true)?;
    ip(&[
        "-n",
        UNDERLAY_NETNS,
        "link",
        "add",
        LAN_BRIDGE,
        "type",
        "bridge",
    ])?;
    ip(&["-n", UNDERLAY_NETNS, "link", "set", LAN_BRIDGE, "up"])?;
    Ok(())
}

/// Plugs namespace `netns` into the LAN: a veth `lan_side` on `lan0` whose peer is `eth0` in
/// `netns`, TX offload off on both ends, with an optional fixed MAC and address.
pub(crate) fn attach_to_lan(
    netns: &str,
    lan_side: &str,
    mac: Option<MacAddr>,
    addr: Ipv4Addr,
) -> Result<()> {
    ip(&[
        "-n",
        UNDERLAY_NETNS,
        "link",
        "add",
        lan_side,
        "type",
        "veth",
        "peer",
        "name",
        NODE_NIC,
        "netns",
        netns,
    ])?;
    ip(&[
        "-n",
        UNDERLAY_NETNS,
        "link",
        "set",
        lan_side,
        "master",
        LAN_BRIDGE,
        "up",
    ])?;
    tx_off(UNDERLAY_NETNS, lan_side)?;
    tx_off(netns, NODE_NIC)?;
    if let Some(mac) = mac {
        ip(&[
            "-n",
            netns,
            "link",
            "set",
            NODE_NIC,
            "address",
            &mac.to_string(),
        ])?;
    }
    ip(&["-n", netns, "link", "set", NODE_NIC, "up"])?;
    ip(&[
        "-n",
        netns,
        "addr",
        "add",
        &format!("{addr}/{LAN_PREFIX_LEN}"),
        "dev",
        NODE_NIC,
    ])?;
    Ok(())
}

/// A Node as a real host looks before any CNI: its namespace, NIC `eth0` with the Node IP and
/// fixed MAC, forwarding on, and its private OVS running (no bridge yet).
pub fn node(layout: &Layout, node: NodePlan) -> Result<()> {
    let name = node.name();
    netns::add(&name, true)?;
    attach_to_lan(&name, &node.underlay_veth(), Some(node.mac()), node.ip())?;
    sysctl(&name, &["net.ipv4.ip_forward=1"])?;
    NodeOvs::new(layout, &name).start()
}

/// The external host `lab-ext` (10.10.0.100 on the LAN). With `normal` wiring it routes the
/// flat Pod subnet through Node 1, since there is no SNAT there.
pub fn external(wiring: Wiring) -> Result<()> {
    netns::add(EXT_NETNS, true)?;
    attach_to_lan(EXT_NETNS, "u-ext", None, EXT_IP)?;
    if wiring == Wiring::Normal {
        let via = NodePlan { index: 1 }.ip().to_string();
        ip(&[
            "-n",
            EXT_NETNS,
            "route",
            "add",
            &format!("10.244.0.0/{FLAT_POD_PREFIX_LEN}"),
            "via",
            &via,
        ])?;
    }
    Ok(())
}

/// Starts `antrea-lab serve` in `netns` answering as `netns`, and waits until it listens.
pub fn start_serve(layout: &Layout, netns: &str) -> Result<()> {
    start_answerer(
        "serve",
        &layout.serve_dir(netns),
        netns,
        &["--name", netns, "--port", &SERVE_PORT.to_string()],
    )
}

/// Starts `antrea-lab <subcommand> <args> --ready-file <dir>/ready` in `netns` (pidfile and log
/// in `dir`) and waits until it has written its ready file.
pub fn start_answerer(subcommand: &str, dir: &Path, netns: &str, args: &[&str]) -> Result<()> {
    fs::create_dir_all(dir).map_err(|source| LabError::File {
        what: "answerer directory",
        path: dir.to_owned(),
        source,
    })?;
    let exe = std::env::current_exe().map_err(|source| LabError::Spawn {
        program: "antrea-lab (own executable)".into(),
        source,
    })?;
    let ready = dir.join("ready");
    let pidfile = dir.join(format!("{subcommand}.pid"));
    let mut cmd = in_netns(netns, exe);
    cmd.arg(subcommand)
        .args(args)
        .arg("--ready-file")
        .arg(&ready);
    let log = dir.join(format!("{subcommand}.log"));
    let mut child = spawn_detached(&mut cmd, &pidfile, &log)?;
    wait_for_file(
        &format!("antrea-lab {subcommand} in {netns}"),
        &mut child,
        &ready,
        &log,
        Duration::from_secs(10),
    )
}

/// Waits until the process `child` (called `what`) has created `ready`, for at most `timeout`;
/// if it exits first, fails with its `log`.
pub fn wait_for_file(
    what: &str,
    child: &mut Child,
    ready: &Path,
    log: &Path,
    timeout: Duration,
) -> Result<()> {
    wait_until(
        &format!("{what} to create {}", ready.display()),
        timeout,
        || ready.exists() || !matches!(child.try_wait(), Ok(None)),
    )?;
    if ready.exists() {
        Ok(())
    } else {
        let log = fs::read_to_string(log).unwrap_or_default();
        Err(LabError::Command {
            command: what.to_owned(),
            status: "exited".into(),
            stderr: log.trim().to_owned(),
        })
    }
}

/// The text every process the lab starts has on its command line: the state directory with a
/// trailing slash (so `/run/antrea-lab` never matches `/run/antrea-lab-test`).
pub fn layout_marker(layout: &Layout) -> String {
    format!("{}/", layout.root().display())
}
