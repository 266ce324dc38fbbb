//! Route-netlink access for one network namespace: reading links, IPv4 addresses, routes and
//! neighbour entries into this crate's types, and the few writes the backend makes, each
//! counted.

use futures_util::TryStreamExt;
use netlink_packet_route::AddressFamily;
use netlink_packet_route::address::{AddressAttribute, AddressMessage};
use netlink_packet_route::link::{InfoKind, LinkAttribute, LinkFlags, LinkInfo, LinkMessage};
use netlink_packet_route::neighbour::{
    NeighbourAddress, NeighbourAttribute, NeighbourMessage, NeighbourState,
};
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteFlags, RouteHeader, RouteMessage, RouteProtocol, RouteScope,
    RouteType,
};
use rtnetlink::{Handle, LinkUnspec, RouteMessageBuilder};
use std::net::{IpAddr, Ipv4Addr};

use ipnet::Ipv4Net;
use model::MacAddr;

use crate::error::{Error, Result};
use crate::model::{HostRoute, NicConfig};

use super::writes::Writes;

/// The routing table most routes live in.
pub const MAIN_TABLE: u32 = RouteHeader::RT_TABLE_MAIN as u32;
const LOCAL_TABLE: u32 = 255;
const RTPROT_KERNEL: u8 = 2;

/// A link as the kernel reports it.
#[derive(Debug, Clone)]
pub struct Link {
    pub index: u32,
    pub name: String,
    pub mac: Option<MacAddr>,
    pub mtu: u32,
    pub up: bool,
    pub alias: Option<String>,
    /// The interface group (0, "default", unless set).
    pub group: u32,
    pub kind: Option<InfoKind>,
    /// For a veth: the peer's index (in the peer's namespace).
    pub peer_index: Option<u32>,
}

/// An IPv4 route as the kernel reports it.
#[derive(Debug, Clone)]
pub struct KernelRoute {
    pub route: HostRoute,
    pub oif: Option<u32>,
}

/// An IPv4 neighbour entry as the kernel reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelNeighbour {
    pub index: u32,
    pub address: Ipv4Addr,
    pub mac: Option<MacAddr>,
    /// `NUD_PERMANENT`: configured, never expires.
    pub permanent: bool,
}

/// A netlink handle on one namespace plus the count of writes made through it.
#[derive(Debug, Clone)]
pub struct Kernel {
    handle: Handle,
    writes: Writes,
}

fn netlink_error(op: impl Into<String>) -> impl FnOnce(rtnetlink::Error) -> Error {
    move |e| {
        let source = match e {
            rtnetlink::Error::NetlinkError(m) => m.to_io(),
            other => std::io::Error::other(other.to_string()),
        };
        Error::os(op, source)
    }
}

/// Whether `e` is the OS error `errno`.
pub fn is_errno(e: &Error, errno: i32) -> bool {
    matches!(e, Error::Os { source, .. } if source.raw_os_error() == Some(errno))
}

impl Kernel {
    /// Opens a netlink socket in the calling thread's namespace; the connection task is spawned
    /// on the current tokio runtime.
    pub fn connect(writes: Writes) -> Result<Kernel> {
        let (connection, handle, _) =
            rtnetlink::new_connection().map_err(|e| Error::os("open a netlink socket", e))?;
        tokio::spawn(connection);
        Ok(Kernel::from_handle(handle, writes))
    }

    /// Wraps a handle whose connection runs elsewhere.
    pub fn from_handle(handle: Handle, writes: Writes) -> Kernel {
        Kernel { handle, writes }
    }

    /// The same socket with a fresh write count for one operation.
    pub fn scoped(&self) -> Kernel {
        Kernel {
            handle: self.handle.clone(),
            writes: self.writes.scoped(),
        }
    }

    /// The writes made through this handle (netlink), plus the ones recorded on it by callers.
    pub fn writes(&self) -> &Writes {
        &self.writes
    }

    fn count_write(&self) {
        self.writes.record();
    }

    pub async fn links(&self) -> Result<Vec<Link>> {
        let messages: Vec<LinkMessage> = self
            .handle
            .link()
            .get()
            .execute()
            .try_collect()
            .await
            .map_err(netlink_error("list links"))?;
        Ok(messages.iter().map(parse_link).collect())
    }

    pub async fn link(&self, name: &str) -> Result<Option<Link>> {
        let request = self
            .handle
            .link()
            .get()
            .match_name(name.to_owned())
            .execute();
        match request.try_collect::<Vec<_>>().await {
            Ok(messages) => Ok(messages.first().map(parse_link)),
            Err(rtnetlink::Error::NetlinkError(m)) if m.raw_code().abs() == libc::ENODEV => {
                Ok(None)
            }
            Err(e) => Err(netlink_error(format!("get link {name:?}"))(e)),
        }
    }

    pub async fn require_link(&self, name: &str, purpose: &'static str) -> Result<Link> {
        self.link(name)
            .await?
            .ok_or_else(|| Error::InterfaceNotFound {
                name: name.to_owned(),
                purpose,
            })
    }

    /// Every IPv4 address with the index of its link.
    pub async fn addresses(&self) -> Result<Vec<(u32, Ipv4Net)>> {
        let messages: Vec<AddressMessage> = self
            .handle
            .address()
            .get()
            .execute()
            .try_collect()
            .await
            .map_err(netlink_error("list addresses"))?;
        Ok(messages.iter().filter_map(parse_address).collect())
    }

    pub async fn link_addresses(&self, index: u32) -> Result<Vec<Ipv4Net>> {
        Ok(self
            .addresses()
            .await?
            .into_iter()
            .filter(|(i, _)| *i == index)
            .map(|(_, a)| a)
            .collect())
    }

    /// Every IPv4 unicast route outside the local table.
    pub async fn routes(&self) -> Result<Vec<KernelRoute>> {
        let query = RouteMessageBuilder::<Ipv4Addr>::new().build();
        let messages: Vec<RouteMessage> = self
            .handle
            .route()
            .get(query)
            .execute()
            .try_collect()
            .await
            .map_err(netlink_error("list routes"))?;
        Ok(messages
            .iter()
            .filter_map(parse_route)
            .filter(|r| r.route.table != LOCAL_TABLE)
            .collect())
    }

    /// The configuration snapshot of `link`, leaving out connected routes and routes with
    /// protocol `skip_protocol`.
    pub async fn nic_config(&self, link: &Link, skip_protocol: u8) -> Result<NicConfig> {
        let addresses = self.link_addresses(link.index).await?;
        let routes = self
            .routes()
            .await?
            .into_iter()
            .filter(|r| {
                r.oif == Some(link.index)
                    && r.route.protocol != RTPROT_KERNEL
                    && r.route.protocol != skip_protocol
            })
            .map(|r| r.route)
            .collect();
        let mac = link.mac.ok_or_else(|| Error::Invalid {
            what: "interface",
            value: link.name.clone(),
            reason: "has no Ethernet address",
        })?;
        Ok(NicConfig {
            name: link.name.clone(),
            index: link.index,
            mac,
            mtu: link.mtu,
            addresses,
            routes,
        })
    }

    pub async fn set_link(&self, message: LinkMessage, op: String) -> Result<()> {
        self.count_write();
        self.handle
            .link()
            .set(message)
            .execute()
            .await
            .map_err(netlink_error(op))
    }

    /// Sets the alias of `link`; the empty string removes it.
    pub async fn set_alias(&self, link: &Link, alias: &str) -> Result<()> {
        let message = LinkUnspec::new_with_index(link.index).alias(alias).build();
        self.set_link(
            message,
            format!("set alias of {:?} to {alias:?}", link.name),
        )
        .await
    }

    pub async fn set_up(&self, link: &Link) -> Result<()> {
        let message = LinkUnspec::new_with_index(link.index).up().build();
        self.set_link(message, format!("bring {:?} up", link.name))
            .await
    }

    pub async fn add_link(&self, message: LinkMessage, op: String) -> Result<()> {
        self.count_write();
        self.handle
            .link()
            .add(message)
            .execute()
            .await
            .map_err(netlink_error(op))
    }

    pub async fn delete_link(&self, link: &Link) -> Result<()> {
        self.count_write();
        self.handle
            .link()
            .del(link.index)
            .execute()
            .await
            .map_err(netlink_error(format!("delete link {:?}", link.name)))
    }

    pub async fn add_address(&self, link: &Link, address: Ipv4Net) -> Result<()> {
        self.count_write();
        self.handle
            .address()
            .add(link.index, IpAddr::V4(address.addr()), address.prefix_len())
            .execute()
            .await
            .map_err(netlink_error(format!(
                "add address {address} to {:?}",
                link.name
            )))
    }

    pub async fn delete_address(&self, link: &Link, address: Ipv4Net) -> Result<()> {
        self.count_write();
        let message = rtnetlink::AddressMessageBuilder::<Ipv4Addr>::new()
            .index(link.index)
            .address(address.addr(), address.prefix_len())
            .build();
        self.handle
            .address()
            .del(message)
            .execute()
            .await
            .map_err(netlink_error(format!(
                "delete address {address} from {:?}",
                link.name
            )))
    }

    /// Adds `route` through `link`; with `replace` an existing route with the same key is
    /// replaced, otherwise an existing one is an error (`EEXIST`).
    pub async fn add_route(&self, route: &HostRoute, link: &Link, replace: bool) -> Result<()> {
        self.count_write();
        let request = self.handle.route().add(route_message(route, link.index));
        let request = if replace { request.replace() } else { request };
        request.execute().await.map_err(netlink_error(format!(
            "add route {} to {:?}",
            describe(route),
            link.name
        )))
    }

    pub async fn delete_route(&self, route: &HostRoute, link: &Link) -> Result<()> {
        self.count_write();
        self.handle
            .route()
            .del(route_message(route, link.index))
            .execute()
            .await
            .map_err(netlink_error(format!(
                "delete route {} from {:?}",
                describe(route),
                link.name
            )))
    }

    /// Every IPv4 neighbour entry.
    pub async fn neighbours(&self) -> Result<Vec<KernelNeighbour>> {
        let messages: Vec<NeighbourMessage> = self
            .handle
            .neighbours()
            .get()
            .set_address_family(AddressFamily::Inet)
            .execute()
            .try_collect()
            .await
            .map_err(netlink_error("list neighbours"))?;
        Ok(messages.iter().filter_map(parse_neighbour).collect())
    }

    /// Makes `address` on `link` a permanent entry for `mac`, replacing any entry it has.
    pub async fn set_permanent_neighbour(
        &self,
        link: &Link,
        address: Ipv4Addr,
        mac: MacAddr,
    ) -> Result<()> {
        self.count_write();
        self.handle
            .neighbours()
            .add(link.index, IpAddr::V4(address))
            .state(NeighbourState::Permanent)
            .link_layer_address(&mac.0)
            .replace()
            .execute()
            .await
            .map_err(netlink_error(format!(
                "set neighbour {address} lladdr {mac} permanent on {:?}",
                link.name
            )))
    }

    /// Deletes the entry of `neighbour.address` on its interface.
    pub async fn delete_neighbour(&self, neighbour: &KernelNeighbour) -> Result<()> {
        self.count_write();
        let mut message = NeighbourMessage::default();
        message.header.family = AddressFamily::Inet;
        message.header.ifindex = neighbour.index;
        message
            .attributes
            .push(NeighbourAttribute::Destination(NeighbourAddress::Inet(
                neighbour.address,
            )));
        self.handle
            .neighbours()
            .del(message)
            .execute()
            .await
            .map_err(netlink_error(format!(
                "delete neighbour {} on interface {}",
                neighbour.address, neighbour.index
            )))
    }
}

/// `dst [via gw] metric m table t`, for messages.
pub fn describe(route: &HostRoute) -> String {
    let via = route
        .gateway
        .map(|g| format!(" via {g}"))
        .unwrap_or_default();
    format!(
        "{}{via} metric {} table {}",
        route.destination, route.metric, route.table
    )
}

fn route_message(route: &HostRoute, oif: u32) -> RouteMessage {
    let dst = route.destination.trunc();
    let mut builder = RouteMessageBuilder::<Ipv4Addr>::new()
        .destination_prefix(dst.addr(), dst.prefix_len())
        .output_interface(oif)
        .priority(route.metric)
        .table_id(route.table)
        .protocol(RouteProtocol::from(route.protocol))
        .scope(RouteScope::from(route.scope));
    if let Some(gateway) = route.gateway {
        builder = builder.gateway(gateway);
    }
    if let Some(source) = route.pref_source {
        builder = builder.pref_source(source);
    }
    if route.onlink {
        builder = builder.onlink();
    }
    builder.build()
}

fn parse_link(message: &LinkMessage) -> Link {
    let mut link = Link {
        index: message.header.index,
        name: String::new(),
        mac: None,
        mtu: 0,
        up: message.header.flags.contains(LinkFlags::Up),
        alias: None,
        group: 0,
        kind: None,
        peer_index: None,
    };
    for attribute in &message.attributes {
        match attribute {
            LinkAttribute::IfName(name) => link.name = name.clone(),
            LinkAttribute::Address(bytes) => {
                link.mac = <[u8; 6]>::try_from(bytes.as_slice()).ok().map(MacAddr);
            }
            LinkAttribute::Mtu(mtu) => link.mtu = *mtu,
            LinkAttribute::IfAlias(alias) => link.alias = Some(alias.clone()),
            LinkAttribute::Group(group) => link.group = *group,
            LinkAttribute::Link(peer) => link.peer_index = Some(*peer),
            LinkAttribute::LinkInfo(infos) => {
                link.kind = infos.iter().find_map(|i| match i {
                    LinkInfo::Kind(kind) => Some(kind.clone()),
                    _ => None,
                })
            }
            _ => {}
        }
    }
    link
}

fn parse_address(message: &AddressMessage) -> Option<(u32, Ipv4Net)> {
    if message.header.family != AddressFamily::Inet {
        return None;
    }
    let local = message.attributes.iter().find_map(|a| match a {
        AddressAttribute::Local(IpAddr::V4(ip)) => Some(*ip),
        _ => None,
    });
    let address = local.or_else(|| {
        message.attributes.iter().find_map(|a| match a {
            AddressAttribute::Address(IpAddr::V4(ip)) => Some(*ip),
            _ => None,
        })
    })?;
    Some((
        message.header.index,
        Ipv4Net::new(address, message.header.prefix_len).ok()?,
    ))
}

fn parse_neighbour(message: &NeighbourMessage) -> Option<KernelNeighbour> {
    if message.header.family != AddressFamily::Inet {
        return None;
    }
    let mut address = None;
    let mut mac = None;
    for attribute in &message.attributes {
        match attribute {
            NeighbourAttribute::Destination(NeighbourAddress::Inet(ip)) => address = Some(*ip),
            NeighbourAttribute::LinkLayerAddress(bytes) => {
                mac = <[u8; 6]>::try_from(bytes.as_slice()).ok().map(MacAddr);
            }
            _ => {}
        }
    }
    Some(KernelNeighbour {
        index: message.header.ifindex,
        address: address?,
        mac,
        permanent: message.header.state == NeighbourState::Permanent,
    })
}

fn parse_route(message: &RouteMessage) -> Option<KernelRoute> {
    let header = &message.header;
    if header.address_family != AddressFamily::Inet || header.kind != RouteType::Unicast {
        return None;
    }
    let mut destination = Ipv4Addr::UNSPECIFIED;
    let mut route = HostRoute {
        destination: Ipv4Net::default(), // 0.0.0.0/0
        gateway: None,
        metric: 0,
        table: u32::from(header.table),
        protocol: u8::from(header.protocol),
        scope: u8::from(header.scope),
        onlink: header.flags.contains(RouteFlags::Onlink),
        pref_source: None,
    };
    let mut oif = None;
    for attribute in &message.attributes {
        match attribute {
            RouteAttribute::Destination(RouteAddress::Inet(ip)) => destination = *ip,
            RouteAttribute::Gateway(RouteAddress::Inet(ip)) => route.gateway = Some(*ip),
            RouteAttribute::PrefSource(RouteAddress::Inet(ip)) => route.pref_source = Some(*ip),
            RouteAttribute::Priority(metric) => route.metric = *metric,
            RouteAttribute::Table(table) => route.table = *table,
            RouteAttribute::Oif(index) => oif = Some(*index),
            _ => {}
        }
    }
    route.destination = Ipv4Net::new(destination, header.destination_prefix_length).ok()?;
    Some(KernelRoute { route, oif })
}
