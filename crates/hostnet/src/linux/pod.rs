//! Pod interfaces: a veth pair whose container end is created directly inside the Pod's
//! network namespace (so its name, usually `eth0`, never clashes with the Node's interfaces)
//! and configured from a thread that entered that namespace, with its own netlink socket.
//!
//! Made in two halves, so that the switch can take the host end while the rest is configured:
//! the pair itself, with the container end's MAC derived from the Pod's address, in
//! [`POD_INTERFACE_GROUP`] (which tells our interfaces from any other veth), its host end up;
//! then the configuration. Both ends get the Pod MTU and transmit checksum offload off
//! (mandatory for the userspace datapath, lab gotcha G2); the host end gets IPv6 disabled; both
//! are up. The host end is made up at once: with a port made on it while it was down, the first
//! packets of a Pod now and then went unanswered (the CNI ADD benchmark's first pings).

use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::path::Path;

use netlink_packet_route::link::{InfoData, InfoKind, InfoVeth, LinkAttribute};
use rtnetlink::{LinkMessageBuilder, LinkUnspec, LinkVeth};

use crate::POD_INTERFACE_GROUP;
use ipnet::Ipv4Net;
use model::MacAddr;

use crate::error::{Error, Result};
use crate::model::{HostRoute, Outcome, PodInterface, PodInterfaceSpec};

use super::netlink::{Kernel, Link, MAIN_TABLE};
use super::uplink::turn_off_tx_checksum;
use super::{LinuxHost, Netns, ethtool, sysctl, validate_ifname};

const RTPROT_STATIC: u8 = 4;

/// The container end as found inside the Pod's namespace.
#[derive(Debug)]
struct ContainerEnd {
    link: Link,
    addresses: Vec<Ipv4Net>,
    default_gateway: Option<Ipv4Addr>,
    tx_checksum: bool,
}

fn mismatch(
    interface: &str,
    what: &'static str,
    expected: impl ToString,
    found: impl ToString,
) -> Error {
    Error::CheckFailed {
        interface: interface.to_owned(),
        what,
        expected: expected.to_string(),
        found: found.to_string(),
    }
}

fn default_route(spec: &PodInterfaceSpec) -> HostRoute {
    HostRoute {
        destination: Ipv4Net::default(), // 0.0.0.0/0
        gateway: Some(spec.gateway),
        metric: 0,
        table: MAIN_TABLE,
        protocol: RTPROT_STATIC,
        scope: 0,
        onlink: !spec.address.contains(&spec.gateway),
        pref_source: None,
    }
}

/// The container end's hardware address: `0a:58` and the Pod's IPv4 address, a locally
/// administered unicast address. Known before the interface exists, so the Pod's flows and its
/// switch port need not wait for the kernel; unique on the Node as the Pod's address is, and the
/// same for a new Pod that reuses an address, so a peer's stale ARP entry stays right.
fn container_mac(address: Ipv4Addr) -> MacAddr {
    let [a, b, c, d] = address.octets();
    MacAddr([0x0a, 0x58, a, b, c, d])
}

impl LinuxHost {
    /// See [`crate::HostNetwork::add_pod_interface`]. A host end of the name whose peer is the
    /// spec's interface in the spec's namespace, with the spec's MTU, is kept whatever its
    /// configuration; any other veth of the name is deleted first.
    pub(super) async fn add_pod(&self, spec: &PodInterfaceSpec) -> Result<(PodInterface, Outcome)> {
        validate_ifname(&spec.host_ifname)?;
        validate_ifname(&spec.ifname)?;
        let kernel = self.kernel.scoped();
        if let Some(existing) = kernel.link(&spec.host_ifname).await? {
            match self.observe_pair(spec, &existing).await {
                Ok((found, _)) => return Ok((found, Outcome::Unchanged)),
                Err(_) if existing.kind == Some(InfoKind::Veth) => {
                    tracing::info!(
                        "Pod interface {} is not the pair the request asks for; making it again",
                        spec.host_ifname
                    );
                    kernel.delete_link(&existing).await?
                }
                Err(e) => return Err(e),
            }
        }
        let pod_netns = Netns::open(Path::new(&spec.netns))?;
        let container_mac = container_mac(spec.address.addr());
        let peer = LinkMessageBuilder::<LinkUnspec>::new()
            .name(spec.ifname.clone())
            .mtu(spec.mtu)
            .address(container_mac.octets().to_vec())
            .setns_by_fd(pod_netns.file().as_raw_fd())
            .build();
        let message = LinkMessageBuilder::<LinkVeth>::new_with_info_kind(InfoKind::Veth)
            .name(spec.host_ifname.clone())
            .append_extra_attribute(LinkAttribute::Group(POD_INTERFACE_GROUP))
            .mtu(spec.mtu)
            .up()
            .set_info_data(InfoData::Veth(InfoVeth::Peer(peer)))
            .build();
        let op = format!(
            "create veth {:?} with peer {:?} in {}",
            spec.host_ifname, spec.ifname, spec.netns
        );
        kernel.add_link(message, op).await?;
        let host = kernel
            .require_link(&spec.host_ifname, "Pod host interface")
            .await?;
        let host_mac = host
            .mac
            .ok_or_else(|| mismatch(&spec.host_ifname, "MAC", "an Ethernet address", "none"))?;
        Ok((
            PodInterface {
                host_ifname: spec.host_ifname.clone(),
                host_mac,
                container_mac,
            },
            kernel.writes().outcome(),
        ))
    }

    /// See [`crate::HostNetwork::configure_pod_interface`]. The Pod's end (address, up, default
    /// route, transmit checksum offload off, from a thread inside the Pod's namespace) and the
    /// host end (transmit checksum offload and IPv6 off, up) are configured at the same time;
    /// each setting is read first and written only when it differs.
    pub(super) async fn configure_pod(&self, spec: &PodInterfaceSpec) -> Result<Outcome> {
        validate_ifname(&spec.host_ifname)?;
        validate_ifname(&spec.ifname)?;
        let kernel = self.kernel.scoped();
        let pod_netns = Netns::open(Path::new(&spec.netns))?;
        let writes = kernel.writes().clone();
        let (ifname, address, route) = (spec.ifname.clone(), spec.address, default_route(spec));
        let pod_end = pod_netns.run_async(move || async move {
            let pod_kernel = Kernel::connect(writes.clone())?;
            let link = pod_kernel.require_link(&ifname, "Pod interface").await?;
            if !pod_kernel
                .link_addresses(link.index)
                .await?
                .contains(&address)
            {
                pod_kernel.add_address(&link, address).await?;
            }
            if !link.up {
                pod_kernel.set_up(&link).await?;
            }
            let routed = pod_kernel.routes().await?.into_iter().any(|r| {
                r.oif == Some(link.index)
                    && r.route.destination == route.destination
                    && r.route.gateway == route.gateway
            });
            if !routed {
                pod_kernel.add_route(&route, &link, true).await?;
            }
            if turn_off_tx_checksum(&ifname)? {
                writes.record();
            }
            Ok(())
        });
        let host_end = async {
            let name = spec.host_ifname.clone();
            let changed = self
                .netns
                .run(move || {
                    let checksum = turn_off_tx_checksum(&name)?;
                    let ipv6 = sysctl::disable_ipv6(&name)
                        .map_err(|e| Error::os(format!("disable IPv6 on {name:?}"), e))?;
                    Ok([checksum, ipv6])
                })
                .await?;
            for _ in changed.into_iter().filter(|&c| c) {
                kernel.writes().record();
            }
            let host = kernel
                .require_link(&spec.host_ifname, "Pod host interface")
                .await?;
            if !host.up {
                kernel.set_up(&host).await?;
            }
            Ok::<_, Error>(())
        };
        let (pod_end, host_end) = tokio::join!(pod_end, host_end);
        pod_end.and(host_end)?;
        Ok(kernel.writes().outcome())
    }

    /// The pair of `host` (the host end of the spec's name) as far as
    /// [`LinuxHost::add_pod`] makes it: a veth of the spec's MTU whose peer is the spec's
    /// interface in the spec's namespace. Returns its hardware addresses and the container end.
    async fn observe_pair(
        &self,
        spec: &PodInterfaceSpec,
        host: &Link,
    ) -> Result<(PodInterface, ContainerEnd)> {
        let name = &spec.host_ifname;
        if host.kind != Some(InfoKind::Veth) {
            return Err(mismatch(name, "kind", "veth", format!("{:?}", host.kind)));
        }
        if host.mtu != spec.mtu {
            return Err(mismatch(name, "MTU", spec.mtu, host.mtu));
        }
        let pod_netns = Netns::open(Path::new(&spec.netns))?;
        let writes = self.kernel.writes().scoped();
        let ifname = spec.ifname.clone();
        let container = pod_netns
            .run_async(move || async move {
                let kernel = Kernel::connect(writes)?;
                let link = kernel.require_link(&ifname, "Pod interface").await?;
                let addresses = kernel.link_addresses(link.index).await?;
                let default_gateway = kernel
                    .routes()
                    .await?
                    .into_iter()
                    .find(|r| r.oif == Some(link.index) && r.route.destination.prefix_len() == 0)
                    .and_then(|r| r.route.gateway);
                let tx_checksum = ethtool::tx_checksum(&ifname).map_err(|e| {
                    Error::os(
                        format!("read transmit checksum offload of {ifname:?} in the Pod"),
                        e,
                    )
                })?;
                Ok(ContainerEnd {
                    link,
                    addresses,
                    default_gateway,
                    tx_checksum,
                })
            })
            .await?;
        let pod_if = format!("{} in {}", spec.ifname, spec.netns);
        if host.peer_index != Some(container.link.index) {
            return Err(mismatch(
                name,
                "veth peer",
                format!("{pod_if} (index {})", container.link.index),
                format!("{:?}", host.peer_index),
            ));
        }
        if container.link.kind != Some(InfoKind::Veth) {
            return Err(mismatch(
                &pod_if,
                "kind",
                "veth",
                format!("{:?}", container.link.kind),
            ));
        }
        if container.link.mtu != spec.mtu {
            return Err(mismatch(&pod_if, "MTU", spec.mtu, container.link.mtu));
        }
        let mac = |link: &Link, label: &str| {
            link.mac
                .ok_or_else(|| mismatch(label, "MAC", "an Ethernet address", "none"))
        };
        let found = PodInterface {
            host_ifname: host.name.clone(),
            host_mac: mac(host, name)?,
            container_mac: mac(&container.link, &pod_if)?,
        };
        Ok((found, container))
    }

    /// Reads both ends and verifies them against `spec`, configuration included; returns what
    /// was found.
    async fn observe_pod(&self, spec: &PodInterfaceSpec) -> Result<PodInterface> {
        let host = self
            .kernel
            .require_link(&spec.host_ifname, "Pod host interface")
            .await?;
        let (found, container) = self.observe_pair(spec, &host).await?;
        if !host.up {
            return Err(mismatch(&spec.host_ifname, "state", "up", "down"));
        }
        let pod_if = format!("{} in {}", spec.ifname, spec.netns);
        if !container.link.up {
            return Err(mismatch(&pod_if, "state", "up", "down"));
        }
        if !container.addresses.contains(&spec.address) {
            let found: Vec<String> = container.addresses.iter().map(Ipv4Net::to_string).collect();
            return Err(mismatch(
                &pod_if,
                "IPv4 address",
                spec.address,
                format!("[{}]", found.join(" ")),
            ));
        }
        if container.default_gateway != Some(spec.gateway) {
            return Err(mismatch(
                &pod_if,
                "default gateway",
                spec.gateway,
                format!("{:?}", container.default_gateway),
            ));
        }
        if container.tx_checksum {
            return Err(mismatch(&pod_if, "transmit checksum offload", "off", "on"));
        }
        Ok(found)
    }

    pub(super) async fn check_pod(
        &self,
        spec: &PodInterfaceSpec,
        created: &PodInterface,
    ) -> Result<()> {
        let found = self.observe_pod(spec).await?;
        let expect = |what, expected: MacAddr, found: MacAddr, label: &str| {
            if expected == found {
                Ok(())
            } else {
                Err(mismatch(label, what, expected, found))
            }
        };
        expect(
            "MAC",
            created.container_mac,
            found.container_mac,
            &spec.ifname,
        )?;
        expect("MAC", created.host_mac, found.host_mac, &spec.host_ifname)
    }

    /// The host ends of the Pod interfaces we created: veths in our group.
    pub(super) async fn pods(&self) -> Result<Vec<String>> {
        Ok(self
            .kernel
            .links()
            .await?
            .into_iter()
            .filter(|l| l.kind == Some(InfoKind::Veth) && l.group == POD_INTERFACE_GROUP)
            .map(|l| l.name)
            .collect())
    }

    pub(super) async fn delete_pod(&self, host_ifname: &str) -> Result<Outcome> {
        validate_ifname(host_ifname)?;
        let Some(link) = self.kernel.link(host_ifname).await? else {
            return Ok(Outcome::Unchanged);
        };
        if link.kind != Some(InfoKind::Veth) {
            return Err(Error::Invalid {
                what: "Pod host interface",
                value: host_ifname.to_owned(),
                reason: "is not a veth; not deleting it",
            });
        }
        // Deleting one end deletes the pair, wherever the other end lives.
        self.kernel.delete_link(&link).await?;
        Ok(Outcome::Changed)
    }
}
