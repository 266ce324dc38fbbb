//! The `controller(...)` action: `NXAST_CONTROLLER2` with its properties (max_len, id, reason,
//! userdata, pause); the older fixed `NXAST_CONTROLLER` form is accepted on decode.

use std::fmt;

use crate::msg::property::{emit_property, split_properties};
use crate::text::{format_hex_bytes, key_value, parse_hex_bytes, parse_num, split_top};
use crate::{DecodeError, TextError};

/// `OFPR_ACTION`, the default packet-in reason of the controller action.
pub const REASON_ACTION: u8 = 1;

/// Packet-in reason names as `ovs-ofctl` prints them, by value.
pub const REASON_NAMES: [&str; 6] = [
    "no_match",
    "action",
    "invalid_ttl",
    "action_set",
    "group",
    "packet_out",
];

const PROP_MAX_LEN: u16 = 0;
const PROP_CONTROLLER_ID: u16 = 1;
const PROP_REASON: u16 = 2;
const PROP_USERDATA: u16 = 3;
const PROP_PAUSE: u16 = 4;

/// Send the packet to the controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controller {
    pub max_len: u16,
    pub controller_id: u16,
    pub reason: u8,
    pub userdata: Vec<u8>,
    pub pause: bool,
}

impl Default for Controller {
    fn default() -> Controller {
        Controller {
            max_len: 0xffff,
            controller_id: 0,
            reason: REASON_ACTION,
            userdata: Vec::new(),
            pause: false,
        }
    }
}

/// A 16-bit property value followed by two bytes of padding: OpenFlow's (and OVS's) 8-byte
/// layout for 16-bit properties.
fn u16_prop(v: u16) -> [u8; 4] {
    let b = v.to_be_bytes();
    [b[0], b[1], 0, 0]
}

impl Controller {
    /// Appends the properties (the part after the 16-byte `nx_action_controller2` header).
    pub(crate) fn emit_props(&self, out: &mut Vec<u8>) {
        if self.max_len != 0xffff {
            emit_property(out, PROP_MAX_LEN, &u16_prop(self.max_len));
        }
        if self.controller_id != 0 {
            emit_property(out, PROP_CONTROLLER_ID, &u16_prop(self.controller_id));
        }
        if self.reason != REASON_ACTION {
            emit_property(out, PROP_REASON, &[self.reason]);
        }
        if !self.userdata.is_empty() {
            emit_property(out, PROP_USERDATA, &self.userdata);
        }
        if self.pause {
            emit_property(out, PROP_PAUSE, &[]);
        }
    }

    /// Decodes the properties of `NXAST_CONTROLLER2`.
    pub(crate) fn parse_props(buf: &[u8]) -> Result<Controller, DecodeError> {
        let mut c = Controller::default();
        for (ty, body) in split_properties("controller property", buf)? {
            let u16_body = || -> Result<u16, DecodeError> {
                DecodeError::need("controller property", body, 2)?;
                Ok(u16::from_be_bytes([body[0], body[1]]))
            };
            match ty {
                PROP_MAX_LEN => c.max_len = u16_body()?,
                PROP_CONTROLLER_ID => c.controller_id = u16_body()?,
                PROP_REASON => {
                    DecodeError::need("controller reason", body, 1)?;
                    c.reason = body[0];
                }
                PROP_USERDATA => c.userdata = body.to_vec(),
                PROP_PAUSE => c.pause = true,
                other => {
                    return Err(DecodeError::Unsupported {
                        what: "controller property",
                        value: u64::from(other),
                    });
                }
            }
        }
        Ok(c)
    }

    /// Whether `ovs-ofctl` prints this as the short `CONTROLLER:MAX_LEN`.
    fn is_plain(&self) -> bool {
        self.reason == REASON_ACTION
            && self.controller_id == 0
            && self.userdata.is_empty()
            && !self.pause
    }

    /// Parses the argument list of `controller(...)`.
    pub(crate) fn parse_args(args: &str) -> Result<Controller, TextError> {
        let mut c = Controller::default();
        for item in split_top(args, ',') {
            match key_value(item) {
                ("max_len", Some(v)) => c.max_len = parse_num(v)?,
                ("id", Some(v)) => c.controller_id = parse_num(v)?,
                ("reason", Some(v)) => {
                    c.reason = REASON_NAMES
                        .iter()
                        .position(|n| *n == v)
                        .ok_or_else(|| TextError::new(item, "unknown packet-in reason"))?
                        as u8
                }
                ("userdata", Some(v)) => c.userdata = parse_hex_bytes(v)?,
                ("pause", None) => c.pause = true,
                _ => return Err(TextError::new(item, "unknown controller argument")),
            }
        }
        Ok(c)
    }
}

impl fmt::Display for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_plain() {
            return write!(f, "CONTROLLER:{}", self.max_len);
        }
        let mut parts = Vec::new();
        if self.reason != REASON_ACTION {
            let name = REASON_NAMES
                .get(usize::from(self.reason))
                .map(|n| n.to_string())
                .unwrap_or_else(|| self.reason.to_string());
            parts.push(format!("reason={name}"));
        }
        if self.max_len != 0xffff {
            parts.push(format!("max_len={}", self.max_len));
        }
        if self.controller_id != 0 {
            parts.push(format!("id={}", self.controller_id));
        }
        if !self.userdata.is_empty() {
            parts.push(format!("userdata={}", format_hex_bytes(&self.userdata)));
        }
        if self.pause {
            parts.push("pause".to_string());
        }
        write!(f, "controller({})", parts.join(","))
    }
}
