//! A one-shot OpenFlow 1.0 exchange that sets or clears a port's `no-flood` flag.
//!
//! Why this exists: the rest of the crate speaks OpenFlow 1.5, but `OFPPC_NO_FLOOD` only exists
//! in OpenFlow 1.0. Open vSwitch masks the config of a 1.1+ port mod to the four bits those
//! versions define, so the flag can only be changed by a 1.0 `OFPT_PORT_MOD` (what
//! `ovs-ofctl mod-port BR PORT no-flood` sends, and what Antrea does for the uplink). The bridge
//! must allow `OpenFlow10` in its protocols. The flag is not readable over 1.5 either: OVS's 1.5
//! port description carries the same four bits.
//!
//! [`set_port_no_flood`] opens its own short connection to the bridge's management endpoint:
//! hello (version 1.0), port mod, barrier; it returns once the barrier reply shows the switch
//! applied the port mod, or with the switch's 1.0 error. Nothing else is spoken in 1.0.

use std::time::Duration;

use localipc::Endpoint;
use tokio::io::AsyncWriteExt;

use crate::conn::frame::{DEFAULT_MAX_MESSAGE_LEN, FrameReader, ReadError};
use crate::header::HEADER_LEN;

/// OpenFlow 1.0 wire version.
pub const OFP_VERSION_1_0: u8 = 0x01;

/// OpenFlow 1.0 `ofp_type` values used here.
pub mod msg_type {
    pub const HELLO: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const PORT_MOD: u8 = 15;
    pub const BARRIER_REQUEST: u8 = 18;
    pub const BARRIER_REPLY: u8 = 19;
}

/// `OFPPC_NO_FLOOD`: the port is left out of `OFPP_FLOOD` output.
pub const NO_FLOOD: u32 = 1 << 4;

/// Highest OpenFlow 1.0 physical port number (`OFPP_MAX`).
pub const PORT_MAX: u16 = 0xff00;

/// Length of the OpenFlow 1.0 `ofp_port_mod`.
pub const PORT_MOD_LEN: usize = 32;

/// xids of the three messages this exchange sends.
const HELLO_XID: u32 = 1;
const PORT_MOD_XID: u32 = 2;
const BARRIER_XID: u32 = 3;

/// The OpenFlow 1.0 `ofp_port_mod`: set the `config` bits selected by `mask` on the port whose
/// number and hardware address match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortMod {
    pub port_no: u16,
    pub hw_addr: [u8; 6],
    pub config: u32,
    pub mask: u32,
    /// `ofp_port_features` to advertise; 0 leaves them unchanged.
    pub advertise: u32,
}

impl PortMod {
    /// The port mod that sets (`on`) or clears the no-flood flag and nothing else.
    pub fn no_flood(port_no: u16, hw_addr: [u8; 6], on: bool) -> PortMod {
        PortMod {
            port_no,
            hw_addr,
            config: if on { NO_FLOOD } else { 0 },
            mask: NO_FLOOD,
            advertise: 0,
        }
    }

    /// The whole message (header included) with transaction id `xid`.
    pub fn to_bytes(&self, xid: u32) -> [u8; PORT_MOD_LEN] {
        let mut b = [0u8; PORT_MOD_LEN];
        b[..HEADER_LEN].copy_from_slice(&header(msg_type::PORT_MOD, PORT_MOD_LEN as u16, xid));
        b[8..10].copy_from_slice(&self.port_no.to_be_bytes());
        b[10..16].copy_from_slice(&self.hw_addr);
        b[16..20].copy_from_slice(&self.config.to_be_bytes());
        b[20..24].copy_from_slice(&self.mask.to_be_bytes());
        b[24..28].copy_from_slice(&self.advertise.to_be_bytes());
        b
    }
}

/// An OpenFlow 1.0 header.
fn header(msg_type: u8, len: u16, xid: u32) -> [u8; HEADER_LEN] {
    let [l0, l1] = len.to_be_bytes();
    let [x0, x1, x2, x3] = xid.to_be_bytes();
    [OFP_VERSION_1_0, msg_type, l0, l1, x0, x1, x2, x3]
}

/// The name of an OpenFlow 1.0 `ofp_error_type`.
pub fn error_type_name(err_type: u16) -> &'static str {
    match err_type {
        0 => "OFPET_HELLO_FAILED",
        1 => "OFPET_BAD_REQUEST",
        2 => "OFPET_BAD_ACTION",
        3 => "OFPET_FLOW_MOD_FAILED",
        4 => "OFPET_PORT_MOD_FAILED",
        5 => "OFPET_QUEUE_OP_FAILED",
        _ => "unknown error type",
    }
}

/// Why the no-flood exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum Of10Error {
    #[error("port {port_no} has no OpenFlow 1.0 number (1.0 ports end at {PORT_MAX})")]
    PortOutOfRange { port_no: u32 },
    #[error("cannot connect to {endpoint} for the OpenFlow 1.0 port mod: {source}")]
    Connect {
        endpoint: String,
        source: std::io::Error,
    },
    #[error("I/O error on the OpenFlow 1.0 connection: {0}")]
    Io(#[from] std::io::Error),
    #[error("bad framing on the OpenFlow 1.0 connection: {0}")]
    Read(#[from] ReadError),
    #[error("the switch closed the OpenFlow 1.0 connection before the barrier reply")]
    Closed,
    #[error(
        "the switch answered hello with version {0:#04x}; OpenFlow 1.0 is needed (is OpenFlow10 in the bridge's protocols?)"
    )]
    Version(u8),
    /// The switch answered with an OpenFlow 1.0 `OFPT_ERROR`; `xid` says which message failed
    /// (1 hello, 2 port mod, 3 barrier).
    #[error("the switch rejected OpenFlow 1.0 message xid {xid}: {} ({err_type}), code {code}", error_type_name(*err_type))]
    Rejected { xid: u32, err_type: u16, code: u16 },
    #[error("no barrier reply within {0:?} on the OpenFlow 1.0 connection")]
    Timeout(Duration),
}

/// Sets (`on`) or clears the no-flood flag of port `port_no` (whose MAC is `hw_addr`; the switch
/// rejects a mismatch with `OFPET_PORT_MOD_FAILED`, code 1) over a short OpenFlow 1.0
/// connection to `endpoint`, waiting at most `timeout`. Idempotent: setting a set flag changes
/// nothing.
pub async fn set_port_no_flood(
    endpoint: &Endpoint,
    port_no: u32,
    hw_addr: [u8; 6],
    on: bool,
    timeout: Duration,
) -> Result<(), Of10Error> {
    let port = u16::try_from(port_no)
        .ok()
        .filter(|p| (1..=PORT_MAX).contains(p))
        .ok_or(Of10Error::PortOutOfRange { port_no })?;
    let port_mod = PortMod::no_flood(port, hw_addr, on);
    tokio::time::timeout(timeout, exchange(endpoint, &port_mod))
        .await
        .map_err(|_| Of10Error::Timeout(timeout))?
}

/// Hello, port mod and barrier in one write, then messages until the barrier reply.
async fn exchange(endpoint: &Endpoint, port_mod: &PortMod) -> Result<(), Of10Error> {
    let stream = localipc::dial(endpoint)
        .await
        .map_err(|source| Of10Error::Connect {
            endpoint: endpoint.to_string(),
            source,
        })?;
    let (reader, mut writer) = tokio::io::split(stream);
    let mut out = Vec::with_capacity(HEADER_LEN * 2 + PORT_MOD_LEN);
    out.extend_from_slice(&header(msg_type::HELLO, HEADER_LEN as u16, HELLO_XID));
    out.extend_from_slice(&port_mod.to_bytes(PORT_MOD_XID));
    out.extend_from_slice(&header(
        msg_type::BARRIER_REQUEST,
        HEADER_LEN as u16,
        BARRIER_XID,
    ));
    writer.write_all(&out).await?;
    writer.flush().await?;

    let mut frames = FrameReader::new(reader, DEFAULT_MAX_MESSAGE_LEN);
    let mut greeted = false;
    while let Some(frame) = frames.next().await? {
        // The frame reader guarantees at least a whole header.
        let (version, kind) = (frame[0], frame[1]);
        let xid = u32::from_be_bytes([frame[4], frame[5], frame[6], frame[7]]);
        if !greeted {
            // The switch's hello carries its highest version; the session runs at the lower one.
            if kind == msg_type::HELLO {
                greeted = true;
                continue;
            }
            if version != OFP_VERSION_1_0 && kind != msg_type::ERROR {
                return Err(Of10Error::Version(version));
            }
        }
        match kind {
            msg_type::ERROR => {
                let field = |i: usize| {
                    frame
                        .get(i..i + 2)
                        .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]))
                };
                return Err(Of10Error::Rejected {
                    xid,
                    err_type: field(8),
                    code: field(10),
                });
            }
            msg_type::BARRIER_REPLY if xid == BARRIER_XID => return Ok(()),
            // Echo requests and anything else the switch volunteers do not concern this exchange.
            _ => {}
        }
    }
    Err(Of10Error::Closed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_mod_fields_land_at_their_offsets() {
        let pm = PortMod {
            port_no: 0x8002,
            hw_addr: [2, 0, 0, 0, 0, 1],
            config: 0x10,
            mask: 0x14,
            advertise: 0x20,
        };
        let b = pm.to_bytes(0x0102_0304);
        assert_eq!(&b[..8], &[1, 15, 0, 32, 1, 2, 3, 4]);
        assert_eq!(&b[8..10], &[0x80, 0x02]);
        assert_eq!(&b[10..16], &[2, 0, 0, 0, 0, 1]);
        assert_eq!(&b[16..20], &[0, 0, 0, 0x10]);
        assert_eq!(&b[20..24], &[0, 0, 0, 0x14]);
        assert_eq!(&b[24..28], &[0, 0, 0, 0x20]);
        assert_eq!(&b[28..], &[0; 4]);
    }

    #[test]
    fn no_flood_masks_only_the_flag() {
        assert_eq!(
            (
                PortMod::no_flood(1, [0; 6], true).config,
                PortMod::no_flood(1, [0; 6], true).mask
            ),
            (NO_FLOOD, NO_FLOOD)
        );
        assert_eq!(
            (
                PortMod::no_flood(1, [0; 6], false).config,
                PortMod::no_flood(1, [0; 6], false).mask
            ),
            (0, NO_FLOOD)
        );
    }
}
