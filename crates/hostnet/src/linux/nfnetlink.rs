//! nf_tables over netlink (`NETLINK_NETFILTER`) for the kernel ingress blocks: the `netdev`
//! table [`TABLE`], a base chain per interface hooked on its ingress with policy drop (what
//! `nft add chain netdev antrea ingress-X { type filter hook ingress device "X" priority 0;
//! policy drop; }` makes), its lookup and its deletion. No `nft` process per Pod: one socket,
//! one batch per change, answered before `send` returns.
//!
//! The socket is opened by the calling thread, so the objects live in that thread's network
//! namespace.

use netlink_sys::{Socket, protocols::NETLINK_NETFILTER};

use super::nft::TABLE;
use crate::error::{Error, Result};

const NLMSG_ERROR: u16 = 2;
const NLMSG_HEADER_LEN: usize = 16;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_CREATE: u16 = 0x400;
const NLA_F_NESTED: u16 = 0x8000;

const NFNL_MSG_BATCH_BEGIN: u16 = 0x10;
const NFNL_MSG_BATCH_END: u16 = 0x11;
const NFNL_SUBSYS_NFTABLES: u16 = 10;
const NFT_MSG_NEWTABLE: u16 = 0;
const NFT_MSG_NEWCHAIN: u16 = 3;
const NFT_MSG_GETCHAIN: u16 = 4;
const NFT_MSG_DELCHAIN: u16 = 5;

const NFPROTO_UNSPEC: u8 = 0;
const NFPROTO_NETDEV: u8 = 5;

const NFTA_TABLE_NAME: u16 = 1;
const NFTA_CHAIN_TABLE: u16 = 1;
const NFTA_CHAIN_NAME: u16 = 3;
const NFTA_CHAIN_HOOK: u16 = 4;
const NFTA_CHAIN_POLICY: u16 = 5;
const NFTA_CHAIN_TYPE: u16 = 7;
const NFTA_HOOK_HOOKNUM: u16 = 1;
const NFTA_HOOK_PRIORITY: u16 = 2;
const NFTA_HOOK_DEV: u16 = 3;

const NF_NETDEV_INGRESS: u32 = 0;
const NF_DROP: u32 = 0;

/// One netlink message being encoded: header, `nfgenmsg`, attributes.
struct Message {
    bytes: Vec<u8>,
    nests: Vec<usize>,
}

impl Message {
    fn new(kind: u16, flags: u16, seq: u32, family: u8, res_id: u16) -> Message {
        let mut bytes = Vec::with_capacity(128);
        bytes.extend_from_slice(&0u32.to_ne_bytes());
        bytes.extend_from_slice(&kind.to_ne_bytes());
        bytes.extend_from_slice(&flags.to_ne_bytes());
        bytes.extend_from_slice(&seq.to_ne_bytes());
        bytes.extend_from_slice(&0u32.to_ne_bytes());
        bytes.extend_from_slice(&[family, 0]);
        bytes.extend_from_slice(&res_id.to_be_bytes());
        Message {
            bytes,
            nests: Vec::new(),
        }
    }

    /// An nf_tables message on the `netdev` family.
    fn nftables(command: u16, flags: u16, seq: u32) -> Message {
        Message::new(
            (NFNL_SUBSYS_NFTABLES << 8) | command,
            flags,
            seq,
            NFPROTO_NETDEV,
            0,
        )
    }

    /// A batch delimiter.
    fn batch(kind: u16, seq: u32) -> Message {
        Message::new(
            kind,
            NLM_F_REQUEST,
            seq,
            NFPROTO_UNSPEC,
            NFNL_SUBSYS_NFTABLES,
        )
    }

    fn attr(mut self, kind: u16, payload: &[u8]) -> Message {
        let len = u16::try_from(4 + payload.len()).unwrap_or(u16::MAX);
        self.bytes.extend_from_slice(&len.to_ne_bytes());
        self.bytes.extend_from_slice(&kind.to_ne_bytes());
        self.bytes.extend_from_slice(payload);
        self.pad();
        self
    }

    /// A NUL-terminated string attribute.
    fn string(self, kind: u16, value: &str) -> Message {
        let mut payload = value.as_bytes().to_vec();
        payload.push(0);
        self.attr(kind, &payload)
    }

    /// A big-endian 32-bit attribute (nf_tables' numbers are in network order).
    fn be32(self, kind: u16, value: u32) -> Message {
        self.attr(kind, &value.to_be_bytes())
    }

    fn begin_nest(mut self, kind: u16) -> Message {
        self.nests.push(self.bytes.len());
        self.bytes.extend_from_slice(&0u16.to_ne_bytes());
        self.bytes
            .extend_from_slice(&(kind | NLA_F_NESTED).to_ne_bytes());
        self
    }

    fn end_nest(mut self) -> Message {
        if let Some(start) = self.nests.pop() {
            let len = u16::try_from(self.bytes.len() - start).unwrap_or(u16::MAX);
            self.bytes[start..start + 2].copy_from_slice(&len.to_ne_bytes());
        }
        self
    }

    fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }

    /// The finished message, its length filled in.
    fn finish(mut self) -> Vec<u8> {
        let len = u32::try_from(self.bytes.len()).unwrap_or(u32::MAX);
        self.bytes[..4].copy_from_slice(&len.to_ne_bytes());
        self.bytes
    }
}

/// The name of the ingress-drop chain of `interface`.
pub fn ingress_chain(interface: &str) -> String {
    format!("ingress-{interface}")
}

/// A netlink socket to nf_tables in the calling thread's namespace.
pub struct Nftables {
    socket: Socket,
    seq: u32,
}

impl Nftables {
    /// Opens the socket.
    pub fn open() -> Result<Nftables> {
        let mut socket = Socket::new(NETLINK_NETFILTER)
            .map_err(|e| Error::os("open a netfilter netlink socket", e))?;
        socket
            .bind_auto()
            .map_err(|e| Error::os("bind a netfilter netlink socket", e))?;
        socket
            .connect(&netlink_sys::SocketAddr::new(0, 0))
            .map_err(|e| Error::os("connect a netfilter netlink socket", e))?;
        Ok(Nftables { socket, seq: 1 })
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    /// Whether the ingress-drop chain of `interface` exists.
    pub fn has_ingress_block(&mut self, interface: &str) -> Result<bool> {
        let seq = self.next_seq();
        let get = Message::nftables(NFT_MSG_GETCHAIN, NLM_F_REQUEST | NLM_F_ACK, seq)
            .string(NFTA_CHAIN_TABLE, TABLE)
            .string(NFTA_CHAIN_NAME, &ingress_chain(interface))
            .finish();
        let op = format!("read the ingress block of {interface:?}");
        match self.exchange(&get, &[seq]) {
            Ok(()) => Ok(true),
            Err(Errno(libc::ENOENT)) => Ok(false),
            Err(errno) => Err(errno.into_error(op)),
        }
    }

    /// Creates the table (if needed) and the ingress-drop chain of `interface`, in one batch.
    pub fn add_ingress_block(&mut self, interface: &str) -> Result<()> {
        let (begin, table, chain, end) = (
            self.next_seq(),
            self.next_seq(),
            self.next_seq(),
            self.next_seq(),
        );
        let mut batch = Message::batch(NFNL_MSG_BATCH_BEGIN, begin).finish();
        batch.extend(
            Message::nftables(
                NFT_MSG_NEWTABLE,
                NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK,
                table,
            )
            .string(NFTA_TABLE_NAME, TABLE)
            .finish(),
        );
        batch.extend(
            Message::nftables(
                NFT_MSG_NEWCHAIN,
                NLM_F_REQUEST | NLM_F_CREATE | NLM_F_ACK,
                chain,
            )
            .string(NFTA_CHAIN_TABLE, TABLE)
            .string(NFTA_CHAIN_NAME, &ingress_chain(interface))
            .begin_nest(NFTA_CHAIN_HOOK)
            .be32(NFTA_HOOK_HOOKNUM, NF_NETDEV_INGRESS)
            .be32(NFTA_HOOK_PRIORITY, 0)
            .string(NFTA_HOOK_DEV, interface)
            .end_nest()
            .be32(NFTA_CHAIN_POLICY, NF_DROP)
            .string(NFTA_CHAIN_TYPE, "filter")
            .finish(),
        );
        batch.extend(Message::batch(NFNL_MSG_BATCH_END, end).finish());
        let op = format!("block kernel ingress on {interface:?}");
        self.exchange(&batch, &[table, chain])
            .map_err(|errno| errno.into_error(op))
    }

    /// Deletes the ingress-drop chain of `interface`; false when it did not exist.
    pub fn delete_ingress_block(&mut self, interface: &str) -> Result<bool> {
        let (begin, chain, end) = (self.next_seq(), self.next_seq(), self.next_seq());
        let mut batch = Message::batch(NFNL_MSG_BATCH_BEGIN, begin).finish();
        batch.extend(
            Message::nftables(NFT_MSG_DELCHAIN, NLM_F_REQUEST | NLM_F_ACK, chain)
                .string(NFTA_CHAIN_TABLE, TABLE)
                .string(NFTA_CHAIN_NAME, &ingress_chain(interface))
                .finish(),
        );
        batch.extend(Message::batch(NFNL_MSG_BATCH_END, end).finish());
        let op = format!("unblock kernel ingress on {interface:?}");
        match self.exchange(&batch, &[chain]) {
            Ok(()) => Ok(true),
            Err(Errno(libc::ENOENT)) => Ok(false),
            Err(errno) => Err(errno.into_error(op)),
        }
    }

    /// Sends `request` and reads the answers until every sequence number in `acked` was
    /// acknowledged, or the first error. The kernel handles the request inside `send`, so
    /// every answer is queued when it returns: reading does not block past them.
    fn exchange(&mut self, request: &[u8], acked: &[u32]) -> std::result::Result<(), Errno> {
        self.socket
            .send(request, 0)
            .map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::EIO)))?;
        self.socket
            .set_non_blocking(true)
            .map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::EIO)))?;
        let mut waiting: Vec<u32> = acked.to_vec();
        let mut buf = Vec::with_capacity(64 * 1024);
        while !waiting.is_empty() {
            buf.clear();
            match self.socket.recv(&mut buf, 0) {
                Ok(_) => {}
                // Answers missing: not a netlink peer we understand.
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    return Err(Errno(libc::EPROTO));
                }
                Err(e) => return Err(Errno(e.raw_os_error().unwrap_or(libc::EIO))),
            }
            for (kind, seq, payload) in messages(&buf) {
                if kind != NLMSG_ERROR {
                    continue;
                }
                let code = payload
                    .get(..4)
                    .map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                    .unwrap_or(-libc::EPROTO);
                if code != 0 {
                    return Err(Errno(-code));
                }
                waiting.retain(|s| *s != seq);
            }
        }
        self.socket
            .set_non_blocking(false)
            .map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::EIO)))
    }
}

/// An error number the kernel answered with.
#[derive(Debug, PartialEq, Eq)]
struct Errno(i32);

impl Errno {
    fn into_error(self, op: String) -> Error {
        Error::os(op, std::io::Error::from_raw_os_error(self.0))
    }
}

/// The netlink messages in `buf`: (type, sequence number, payload).
fn messages(mut buf: &[u8]) -> Vec<(u16, u32, &[u8])> {
    let mut out = Vec::new();
    while buf.len() >= NLMSG_HEADER_LEN {
        let len = u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
        if len < NLMSG_HEADER_LEN || len > buf.len() {
            break;
        }
        let kind = u16::from_ne_bytes([buf[4], buf[5]]);
        let seq = u32::from_ne_bytes([buf[8], buf[9], buf[10], buf[11]]);
        out.push((kind, seq, &buf[NLMSG_HEADER_LEN..len]));
        buf = &buf[len.next_multiple_of(4).min(buf.len())..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_message_nests_its_hook_and_pads_every_attribute() {
        let bytes = Message::nftables(NFT_MSG_NEWCHAIN, NLM_F_REQUEST, 7)
            .string(NFTA_CHAIN_NAME, "abc")
            .begin_nest(NFTA_CHAIN_HOOK)
            .be32(NFTA_HOOK_HOOKNUM, 0x0102_0304)
            .string(NFTA_HOOK_DEV, "x")
            .end_nest()
            .finish();
        assert_eq!(
            u32::from_ne_bytes(bytes[..4].try_into().unwrap()) as usize,
            bytes.len()
        );
        assert_eq!(u16::from_ne_bytes([bytes[4], bytes[5]]), (10 << 8) | 3);
        assert_eq!(u32::from_ne_bytes(bytes[8..12].try_into().unwrap()), 7);
        assert_eq!(&bytes[16..20], &[NFPROTO_NETDEV, 0, 0, 0]);
        // "abc\0": 4 + 4 bytes, no padding.
        assert_eq!(&bytes[20..28], &[8, 0, 3, 0, b'a', b'b', b'c', 0]);
        // The nest: header, hooknum (8 bytes), dev "x\0" (6 bytes, padded to 8); its length
        // covers the padding, as libmnl's does.
        assert_eq!(u16::from_ne_bytes([bytes[28], bytes[29]]), 4 + 8 + 8);
        assert_eq!(
            u16::from_ne_bytes([bytes[30], bytes[31]]),
            NFTA_CHAIN_HOOK | NLA_F_NESTED
        );
        assert_eq!(&bytes[32..40], &[8, 0, 1, 0, 1, 2, 3, 4]);
        assert_eq!(&bytes[40..48], &[6, 0, 3, 0, b'x', 0, 0, 0]);
        assert_eq!(bytes.len(), 48);
    }

    #[test]
    fn answers_are_split_by_their_lengths() {
        let mut buf = Message::new(NLMSG_ERROR, 0, 5, 0, 0).finish();
        buf.extend(Message::new(NLMSG_ERROR, 0, 6, 0, 0).attr(1, &[9]).finish());
        let found: Vec<(u16, u32, usize)> = messages(&buf)
            .into_iter()
            .map(|(k, s, p)| (k, s, p.len()))
            .collect();
        assert_eq!(found, [(NLMSG_ERROR, 5, 4), (NLMSG_ERROR, 6, 12)]);
    }
}
