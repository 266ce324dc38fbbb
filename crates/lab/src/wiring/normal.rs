//! `normal` wiring, the baseline: the lab builds br-int itself as a plain switch (one
//! `actions=NORMAL` flow), moves the Node IP to LOCAL, and attaches Pods to br-int in one flat
//! subnet 10.244.0.0/16, so NORMAL learning connects everything across Nodes over the LAN.
//! Each Node's LOCAL also holds 10.244.K.1, the gateway of its Pods towards Nodes and the
//! external host (routed by the Node kernel, no SNAT).

use std::time::Duration;

use crate::error::Result;
use crate::host::command::ip;
use crate::host::netns::{self, keep_kernel_off, sysctl, tx_off, wait_link};
use crate::host::ovs::NodeOvs;
use crate::layout::Layout;
use crate::plan::{
    BRIDGE, FLAT_POD_PREFIX_LEN, LAN_PREFIX_LEN, NODE_NIC, NodePlan, POD_IFNAME, POD_MTU, PodPlan,
};
use crate::state::PodRecord;

/// br-int on `node`: netdev, NIC MAC and datapath ID, LOCAL MTU pinned at 1500, the NORMAL
/// flow installed before the NIC joins (fail_mode=secure drops everything without flows), the
/// NIC as a port with the kernel kept off it, and the Node IP plus the Pod gateway on LOCAL.
pub fn bridge(layout: &Layout, node: NodePlan) -> Result<()> {
    let name = node.name();
    let ovs = NodeOvs::new(layout, &name);
    let hwaddr = format!("other_config:hwaddr=\"{}\"", node.mac());
    let dpid = format!("other_config:datapath-id={}", node.datapath_id());
    ovs.vsctl(&[
        "add-br",
        BRIDGE,
        "--",
        "set",
        "Bridge",
        BRIDGE,
        "datapath_type=netdev",
        "fail_mode=secure",
        "protocols=OpenFlow10,OpenFlow13",
        &hwaddr,
        &dpid,
        "--",
        "set",
        "Interface",
        BRIDGE,
        "mtu_request=1500",
    ])?;
    wait_link(&name, BRIDGE, Duration::from_secs(10))?;
    ovs.add_flows(BRIDGE, "priority=0,actions=NORMAL\n")?;
    ovs.vsctl(&["add-port", BRIDGE, NODE_NIC])?;
    keep_kernel_off(&name, NODE_NIC)?;
    ip(&["-n", &name, "addr", "flush", "dev", NODE_NIC])?;
    tx_off(&name, BRIDGE)?;
    ip(&["-n", &name, "link", "set", BRIDGE, "up"])?;
    ip(&[
        "-n",
        &name,
        "addr",
        "add",
        &format!("{}/{LAN_PREFIX_LEN}", node.ip()),
        "dev",
        BRIDGE,
    ])?;
    ip(&[
        "-n",
        &name,
        "addr",
        "add",
        &format!("{}/{FLAT_POD_PREFIX_LEN}", node.pod_gateway()),
        "dev",
        BRIDGE,
    ])?;
    // Pods reach the LAN through their Node; the Node must not redirect them to an off-link hop.
    sysctl(
        &name,
        &[
            "net.ipv4.conf.all.send_redirects=0",
            &format!("net.ipv4.conf.{BRIDGE}.send_redirects=0"),
        ],
    )?;
    Ok(())
}

/// Pod `pod`: its namespace, a veth (MTU 1450, fixed MAC, TX offload off both ends) whose
/// host end joins br-int with the Node kernel kept off it, the flat-subnet address and a
/// default route via its Node.
pub fn pod(layout: &Layout, pod: PodPlan) -> Result<PodRecord> {
    let (name, node) = (pod.name(), pod.node());
    let node_name = node.name();
    let host_veth = pod.host_veth();
    let mtu = POD_MTU.to_string();
    netns::add(&name, true)?;
    ip(&[
        "-n", &node_name, "link", "add", &host_veth, "mtu", &mtu, "type", "veth", "peer", "name",
        POD_IFNAME, "mtu", &mtu, "netns", &name,
    ])?;
    ip(&[
        "-n",
        &name,
        "link",
        "set",
        POD_IFNAME,
        "address",
        &pod.mac().to_string(),
        "up",
    ])?;
    ip(&[
        "-n",
        &name,
        "addr",
        "add",
        &format!("{}/{FLAT_POD_PREFIX_LEN}", pod.normal_ip()),
        "dev",
        POD_IFNAME,
    ])?;
    ip(&[
        "-n",
        &name,
        "route",
        "add",
        "default",
        "via",
        &node.pod_gateway().to_string(),
    ])?;
    tx_off(&name, POD_IFNAME)?;
    tx_off(&node_name, &host_veth)?;
    ip(&["-n", &node_name, "link", "set", &host_veth, "up"])?;
    keep_kernel_off(&node_name, &host_veth)?;
    NodeOvs::new(layout, &node_name).vsctl(&["add-port", BRIDGE, &host_veth])?;
    Ok(PodRecord {
        name,
        node: node_name,
        ip: Some(pod.normal_ip()),
    })
}
