//! `OFPT_ERROR`: the switch's report that a message failed, decoded to the OpenFlow names
//! (`OFPBAC_BAD_OUT_PORT`, `OFPFMFC_OVERLAP`, …) operators know from `ovs-ofctl`, with the
//! offending message's bytes kept.
//!
//! Two forms exist: the standard one (`type`, `code`) and the experimenter one
//! (`OFPET_EXPERIMENTER`, `exp_code`, experimenter id), which Open vSwitch uses for its Nicira
//! errors (`NXBRC_*`, `NXBAC_*`, …) and, on OpenFlow 1.3, for the ONF bundle errors (`ONFBFC_*`).

use std::fmt;

use bytes::Buf;

use crate::DecodeError;
use crate::header::{Header, experimenter, msg_type};
use crate::message::Message;

/// `OFPET_EXPERIMENTER`.
pub const OFPET_EXPERIMENTER: u16 = 0xffff;

/// `ofp_error_type` values.
pub mod error_type {
    pub const HELLO_FAILED: u16 = 0;
    pub const BAD_REQUEST: u16 = 1;
    pub const BAD_ACTION: u16 = 2;
    pub const BAD_INSTRUCTION: u16 = 3;
    pub const BAD_MATCH: u16 = 4;
    pub const FLOW_MOD_FAILED: u16 = 5;
    pub const GROUP_MOD_FAILED: u16 = 6;
    pub const PORT_MOD_FAILED: u16 = 7;
    pub const TABLE_MOD_FAILED: u16 = 8;
    pub const QUEUE_OP_FAILED: u16 = 9;
    pub const SWITCH_CONFIG_FAILED: u16 = 10;
    pub const ROLE_REQUEST_FAILED: u16 = 11;
    pub const METER_MOD_FAILED: u16 = 12;
    pub const TABLE_FEATURES_FAILED: u16 = 13;
    pub const BAD_PROPERTY: u16 = 14;
    pub const ASYNC_CONFIG_FAILED: u16 = 15;
    pub const FLOW_MONITOR_FAILED: u16 = 16;
    pub const BUNDLE_FAILED: u16 = 17;
}

/// Which error: a standard type and code, or an experimenter's code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    Standard { err_type: u16, code: u16 },
    Experimenter { experimenter: u32, exp_code: u16 },
}

/// `OFPT_ERROR`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorMsg {
    pub kind: ErrorKind,
    /// For request failures, (at least the first 64 bytes of) the offending message; for hello
    /// failures, an ASCII explanation.
    pub data: Vec<u8>,
}

impl ErrorMsg {
    /// The OpenFlow name (`OFPFMFC_OVERLAP`), if this crate knows the type and code.
    pub fn name(&self) -> Option<&'static str> {
        self.kind.name()
    }

    /// The header of the offending message, when `data` starts with one.
    pub fn offending_header(&self) -> Option<Header> {
        Header::parse(&self.data).ok()
    }
}

impl ErrorKind {
    /// The OpenFlow name of this error, if known.
    pub fn name(&self) -> Option<&'static str> {
        match *self {
            ErrorKind::Standard { err_type, code } => standard_name(err_type, code),
            ErrorKind::Experimenter {
                experimenter: experimenter::NICIRA,
                exp_code,
            } => nicira_name(exp_code),
            ErrorKind::Experimenter {
                experimenter: experimenter::ONF,
                exp_code,
            } => onf_name(exp_code),
            ErrorKind::Experimenter { .. } => None,
        }
    }
}

impl fmt::Display for ErrorKind {
    /// The name when known, with the numbers: `OFPBAC_BAD_OUT_PORT (type 2, code 4)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name().unwrap_or("unknown error");
        match *self {
            ErrorKind::Standard { err_type, code } => {
                write!(f, "{name} (type {err_type}, code {code})")
            }
            ErrorKind::Experimenter {
                experimenter,
                exp_code,
            } => {
                write!(
                    f,
                    "{name} (experimenter {experimenter:#010x}, code {exp_code})"
                )
            }
        }
    }
}

impl fmt::Display for ErrorMsg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind)?;
        if let ErrorKind::Standard {
            err_type: error_type::HELLO_FAILED,
            ..
        } = self.kind
        {
            write!(f, ": {}", String::from_utf8_lossy(&self.data))?;
        } else if let Some(h) = self.offending_header() {
            write!(f, " for message type {} xid {:#x}", h.msg_type, h.xid)?;
        }
        Ok(())
    }
}

impl Message for ErrorMsg {
    const TYPE: u8 = msg_type::ERROR;

    fn emit_body(&self, out: &mut Vec<u8>) {
        match self.kind {
            ErrorKind::Standard { err_type, code } => {
                out.extend_from_slice(&err_type.to_be_bytes());
                out.extend_from_slice(&code.to_be_bytes());
            }
            ErrorKind::Experimenter {
                experimenter,
                exp_code,
            } => {
                out.extend_from_slice(&OFPET_EXPERIMENTER.to_be_bytes());
                out.extend_from_slice(&exp_code.to_be_bytes());
                out.extend_from_slice(&experimenter.to_be_bytes());
            }
        }
        out.extend_from_slice(&self.data);
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        DecodeError::need("ofp_error_msg", body, 4)?;
        let mut b = body;
        let err_type = b.get_u16();
        let code = b.get_u16();
        let kind = if err_type == OFPET_EXPERIMENTER {
            DecodeError::need("ofp_error_experimenter_msg", body, 8)?;
            ErrorKind::Experimenter {
                experimenter: b.get_u32(),
                exp_code: code,
            }
        } else {
            ErrorKind::Standard { err_type, code }
        };
        Ok(ErrorMsg {
            kind,
            data: b.to_vec(),
        })
    }
}

/// Standard error names by type, indexed by code (`None` for codes the type does not define).
fn standard_name(err_type: u16, code: u16) -> Option<&'static str> {
    const HELLO_FAILED: &[&str] = &["OFPHFC_INCOMPATIBLE", "OFPHFC_EPERM"];
    const BAD_REQUEST: &[&str] = &[
        "OFPBRC_BAD_VERSION",
        "OFPBRC_BAD_TYPE",
        "OFPBRC_BAD_MULTIPART",
        "OFPBRC_BAD_EXPERIMENTER",
        "OFPBRC_BAD_EXP_TYPE",
        "OFPBRC_EPERM",
        "OFPBRC_BAD_LEN",
        "OFPBRC_BUFFER_EMPTY",
        "OFPBRC_BUFFER_UNKNOWN",
        "OFPBRC_BAD_TABLE_ID",
        "OFPBRC_IS_SLAVE",
        "OFPBRC_BAD_PORT",
        "OFPBRC_BAD_PACKET",
        "OFPBRC_MULTIPART_BUFFER_OVERFLOW",
        "OFPBRC_MULTIPART_REQUEST_TIMEOUT",
        "OFPBRC_MULTIPART_REPLY_TIMEOUT",
        "OFPBRC_MULTIPART_BAD_SCHED",
        "OFPBRC_PIPELINE_FIELDS_ONLY",
        "OFPBRC_UNKNOWN",
    ];
    const BAD_ACTION: &[&str] = &[
        "OFPBAC_BAD_TYPE",
        "OFPBAC_BAD_LEN",
        "OFPBAC_BAD_EXPERIMENTER",
        "OFPBAC_BAD_EXP_TYPE",
        "OFPBAC_BAD_OUT_PORT",
        "OFPBAC_BAD_ARGUMENT",
        "OFPBAC_EPERM",
        "OFPBAC_TOO_MANY",
        "OFPBAC_BAD_QUEUE",
        "OFPBAC_BAD_OUT_GROUP",
        "OFPBAC_MATCH_INCONSISTENT",
        "OFPBAC_UNSUPPORTED_ORDER",
        "OFPBAC_BAD_TAG",
        "OFPBAC_BAD_SET_TYPE",
        "OFPBAC_BAD_SET_LEN",
        "OFPBAC_BAD_SET_ARGUMENT",
        "OFPBAC_BAD_SET_MASK",
        "OFPBAC_BAD_METER",
    ];
    const BAD_INSTRUCTION: &[&str] = &[
        "OFPBIC_UNKNOWN_INST",
        "OFPBIC_UNSUP_INST",
        "OFPBIC_BAD_TABLE_ID",
        "OFPBIC_UNSUP_METADATA",
        "OFPBIC_UNSUP_METADATA_MASK",
        "OFPBIC_BAD_EXPERIMENTER",
        "OFPBIC_BAD_EXP_TYPE",
        "OFPBIC_BAD_LEN",
        "OFPBIC_EPERM",
        "OFPBIC_DUP_INST",
    ];
    const BAD_MATCH: &[&str] = &[
        "OFPBMC_BAD_TYPE",
        "OFPBMC_BAD_LEN",
        "OFPBMC_BAD_TAG",
        "OFPBMC_BAD_DL_ADDR_MASK",
        "OFPBMC_BAD_NW_ADDR_MASK",
        "OFPBMC_BAD_WILDCARDS",
        "OFPBMC_BAD_FIELD",
        "OFPBMC_BAD_VALUE",
        "OFPBMC_BAD_MASK",
        "OFPBMC_BAD_PREREQ",
        "OFPBMC_DUP_FIELD",
        "OFPBMC_EPERM",
    ];
    const FLOW_MOD_FAILED: &[&str] = &[
        "OFPFMFC_UNKNOWN",
        "OFPFMFC_TABLE_FULL",
        "OFPFMFC_BAD_TABLE_ID",
        "OFPFMFC_OVERLAP",
        "OFPFMFC_EPERM",
        "OFPFMFC_BAD_TIMEOUT",
        "OFPFMFC_BAD_COMMAND",
        "OFPFMFC_BAD_FLAGS",
        "OFPFMFC_CANT_SYNC",
        "OFPFMFC_BAD_PRIORITY",
        "OFPFMFC_IS_SYNC",
    ];
    const GROUP_MOD_FAILED: &[&str] = &[
        "OFPGMFC_GROUP_EXISTS",
        "OFPGMFC_INVALID_GROUP",
        "OFPGMFC_WEIGHT_UNSUPPORTED",
        "OFPGMFC_OUT_OF_GROUPS",
        "OFPGMFC_OUT_OF_BUCKETS",
        "OFPGMFC_CHAINING_UNSUPPORTED",
        "OFPGMFC_WATCH_UNSUPPORTED",
        "OFPGMFC_LOOP",
        "OFPGMFC_UNKNOWN_GROUP",
        "OFPGMFC_CHAINED_GROUP",
        "OFPGMFC_BAD_TYPE",
        "OFPGMFC_BAD_COMMAND",
        "OFPGMFC_BAD_BUCKET",
        "OFPGMFC_BAD_WATCH",
        "OFPGMFC_EPERM",
        "OFPGMFC_UNKNOWN_BUCKET",
        "OFPGMFC_BUCKET_EXISTS",
    ];
    const PORT_MOD_FAILED: &[&str] = &[
        "OFPPMFC_BAD_PORT",
        "OFPPMFC_BAD_HW_ADDR",
        "OFPPMFC_BAD_CONFIG",
        "OFPPMFC_BAD_ADVERTISE",
        "OFPPMFC_EPERM",
    ];
    const TABLE_MOD_FAILED: &[&str] = &["OFPTMFC_BAD_TABLE", "OFPTMFC_BAD_CONFIG", "OFPTMFC_EPERM"];
    const QUEUE_OP_FAILED: &[&str] = &["OFPQOFC_BAD_PORT", "OFPQOFC_BAD_QUEUE", "OFPQOFC_EPERM"];
    const SWITCH_CONFIG_FAILED: &[&str] =
        &["OFPSCFC_BAD_FLAGS", "OFPSCFC_BAD_LEN", "OFPSCFC_EPERM"];
    const ROLE_REQUEST_FAILED: &[&str] = &[
        "OFPRRFC_STALE",
        "OFPRRFC_UNSUP",
        "OFPRRFC_BAD_ROLE",
        "OFPRRFC_ID_UNSUP",
        "OFPRRFC_ID_IN_USE",
    ];
    const METER_MOD_FAILED: &[&str] = &[
        "OFPMMFC_UNKNOWN",
        "OFPMMFC_METER_EXISTS",
        "OFPMMFC_INVALID_METER",
        "OFPMMFC_UNKNOWN_METER",
        "OFPMMFC_BAD_COMMAND",
        "OFPMMFC_BAD_FLAGS",
        "OFPMMFC_BAD_RATE",
        "OFPMMFC_BAD_BURST",
        "OFPMMFC_BAD_BAND",
        "OFPMMFC_BAD_BAND_VALUE",
        "OFPMMFC_OUT_OF_METERS",
        "OFPMMFC_OUT_OF_BANDS",
    ];
    const TABLE_FEATURES_FAILED: &[&str] = &[
        "OFPTFFC_BAD_TABLE",
        "OFPTFFC_BAD_METADATA",
        "",
        "",
        "",
        "OFPTFFC_EPERM",
        "OFPTFFC_BAD_CAPA",
        "OFPTFFC_BAD_MAX_ENT",
        "OFPTFFC_BAD_FEATURES",
        "OFPTFFC_BAD_COMMAND",
        "OFPTFFC_TOO_MANY",
    ];
    const BAD_PROPERTY: &[&str] = &[
        "OFPBPC_BAD_TYPE",
        "OFPBPC_BAD_LEN",
        "OFPBPC_BAD_VALUE",
        "OFPBPC_TOO_MANY",
        "OFPBPC_DUP_TYPE",
        "OFPBPC_BAD_EXPERIMENTER",
        "OFPBPC_BAD_EXP_TYPE",
        "OFPBPC_BAD_EXP_VALUE",
        "OFPBPC_EPERM",
    ];
    const ASYNC_CONFIG_FAILED: &[&str] =
        &["OFPACFC_INVALID", "OFPACFC_UNSUPPORTED", "OFPACFC_EPERM"];
    const FLOW_MONITOR_FAILED: &[&str] = &[
        "OFPMOFC_UNKNOWN",
        "OFPMOFC_MONITOR_EXISTS",
        "OFPMOFC_INVALID_MONITOR",
        "OFPMOFC_UNKNOWN_MONITOR",
        "OFPMOFC_BAD_COMMAND",
        "OFPMOFC_BAD_FLAGS",
        "OFPMOFC_BAD_TABLE_ID",
        "OFPMOFC_BAD_OUT",
    ];
    const BUNDLE_FAILED: &[&str] = &[
        "OFPBFC_UNKNOWN",
        "OFPBFC_EPERM",
        "OFPBFC_BAD_ID",
        "OFPBFC_BUNDLE_EXIST",
        "OFPBFC_BUNDLE_CLOSED",
        "OFPBFC_OUT_OF_BUNDLES",
        "OFPBFC_BAD_TYPE",
        "OFPBFC_BAD_FLAGS",
        "OFPBFC_MSG_BAD_LEN",
        "OFPBFC_MSG_BAD_XID",
        "OFPBFC_MSG_UNSUP",
        "OFPBFC_MSG_CONFLICT",
        "OFPBFC_MSG_TOO_MANY",
        "OFPBFC_MSG_FAILED",
        "OFPBFC_TIMEOUT",
        "OFPBFC_BUNDLE_IN_PROGRESS",
        "OFPBFC_SCHED_NOT_SUPPORTED",
        "OFPBFC_SCHED_FUTURE",
        "OFPBFC_SCHED_PAST",
    ];
    const BY_TYPE: &[&[&str]] = &[
        HELLO_FAILED,
        BAD_REQUEST,
        BAD_ACTION,
        BAD_INSTRUCTION,
        BAD_MATCH,
        FLOW_MOD_FAILED,
        GROUP_MOD_FAILED,
        PORT_MOD_FAILED,
        TABLE_MOD_FAILED,
        QUEUE_OP_FAILED,
        SWITCH_CONFIG_FAILED,
        ROLE_REQUEST_FAILED,
        METER_MOD_FAILED,
        TABLE_FEATURES_FAILED,
        BAD_PROPERTY,
        ASYNC_CONFIG_FAILED,
        FLOW_MONITOR_FAILED,
        BUNDLE_FAILED,
    ];
    let name = *BY_TYPE.get(usize::from(err_type))?.get(usize::from(code))?;
    (!name.is_empty()).then_some(name)
}

/// Nicira errors as Open vSwitch sends them on OpenFlow 1.2 and later (experimenter form).
fn nicira_name(exp_code: u16) -> Option<&'static str> {
    Some(match exp_code {
        2 => "NXBRC_NXM_INVALID",
        3 => "NXBRC_NXM_BAD_TYPE",
        4 => "NXBRC_MUST_BE_ZERO",
        5 => "NXBRC_BAD_REASON",
        6 => "NXMOFC_MONITOR_EXISTS",
        7 => "NXMOFC_BAD_FLAGS",
        8 => "NXMOFC_UNKNOWN_MONITOR",
        9 => "NXBRC_FM_BAD_EVENT",
        10 => "NXBRC_UNENCODABLE_ERROR",
        11 => "NXBAC_MUST_BE_ZERO",
        12 => "NXFMFC_HARDWARE",
        13 => "NXFMFC_BAD_TABLE_ID",
        15 => "NXBAC_BAD_CONJUNCTION",
        16 => "NXTTMFC_BAD_COMMAND",
        17 => "NXTTMFC_BAD_OPT_LEN",
        18 => "NXTTMFC_BAD_FIELD_IDX",
        19 => "NXTTMFC_TABLE_FULL",
        20 => "NXTTMFC_ALREADY_MAPPED",
        21 => "NXTTMFC_DUP_ENTRY",
        22 => "NXBFC_BAD_VERSION",
        23 => "NXQOFC_QUEUE_ERROR",
        34 => "NXR_NOT_SUPPORTED",
        35 => "NXR_STALE",
        36 => "NXST_NOT_CONFIGURED",
        _ => return None,
    })
}

/// ONF extension errors (OpenFlow 1.3 forms of errors that OpenFlow 1.4+ standardised).
fn onf_name(exp_code: u16) -> Option<&'static str> {
    const BUNDLE: &[&str] = &[
        "ONFBFC_UNKNOWN",
        "ONFBFC_EPERM",
        "ONFBFC_BAD_ID",
        "ONFBFC_BUNDLE_EXIST",
        "ONFBFC_BUNDLE_CLOSED",
        "ONFBFC_OUT_OF_BUNDLES",
        "ONFBFC_BAD_TYPE",
        "ONFBFC_BAD_FLAGS",
        "ONFBFC_MSG_BAD_LEN",
        "ONFBFC_MSG_BAD_XID",
        "ONFBFC_MSG_UNSUP",
        "ONFBFC_MSG_CONFLICT",
        "ONFBFC_MSG_TOO_MANY",
        "ONFBFC_MSG_FAILED",
        "ONFBFC_TIMEOUT",
        "ONFBFC_BUNDLE_IN_PROGRESS",
    ];
    const PROPERTY: &[&str] = &[
        "ONFBPC_TOO_MANY",
        "ONFBPC_DUP_TYPE",
        "ONFBPC_BAD_EXPERIMENTER",
        "ONFBPC_BAD_EXP_TYPE",
        "ONFBPC_BAD_EXP_VALUE",
        "ONFBPC_EPERM",
    ];
    match exp_code {
        2300..=2315 => BUNDLE.get(usize::from(exp_code - 2300)).copied(),
        2600 => Some("ONFBIC_DUP_INSTRUCTION"),
        4250 => Some("ONFBAC_BAD_SET_MASK"),
        4443..=4448 => PROPERTY.get(usize::from(exp_code - 4443)).copied(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn standard_form_bytes_and_names() {
        let offending = [6, 14, 0, 8, 0, 0, 0, 9];
        let err = ErrorMsg {
            kind: ErrorKind::Standard {
                err_type: error_type::BAD_ACTION,
                code: 4,
            },
            data: offending.to_vec(),
        };
        let bytes = err.to_bytes(9).unwrap();
        assert_eq!(
            bytes,
            [6, 1, 0, 20, 0, 0, 0, 9, 0, 2, 0, 4, 6, 14, 0, 8, 0, 0, 0, 9]
        );
        assert_eq!(err.name(), Some("OFPBAC_BAD_OUT_PORT"));
        assert_eq!(
            err.offending_header().map(|h| (h.msg_type, h.xid)),
            Some((14, 9))
        );
        assert_eq!(
            err.to_string(),
            "OFPBAC_BAD_OUT_PORT (type 2, code 4) for message type 14 xid 0x9"
        );
        assert_eq!(ErrorMsg::parse(&bytes), Ok((err, 9)));
    }

    #[test]
    fn names_across_types() {
        let name = |err_type, code| ErrorKind::Standard { err_type, code }.name();
        assert_eq!(
            name(error_type::HELLO_FAILED, 0),
            Some("OFPHFC_INCOMPATIBLE")
        );
        assert_eq!(
            name(error_type::BAD_REQUEST, 9),
            Some("OFPBRC_BAD_TABLE_ID")
        );
        assert_eq!(
            name(error_type::BAD_INSTRUCTION, 2),
            Some("OFPBIC_BAD_TABLE_ID")
        );
        assert_eq!(name(error_type::BAD_MATCH, 9), Some("OFPBMC_BAD_PREREQ"));
        assert_eq!(
            name(error_type::FLOW_MOD_FAILED, 3),
            Some("OFPFMFC_OVERLAP")
        );
        assert_eq!(
            name(error_type::GROUP_MOD_FAILED, 16),
            Some("OFPGMFC_BUCKET_EXISTS")
        );
        assert_eq!(
            name(error_type::PORT_MOD_FAILED, 0),
            Some("OFPPMFC_BAD_PORT")
        );
        assert_eq!(
            name(error_type::TABLE_FEATURES_FAILED, 5),
            Some("OFPTFFC_EPERM")
        );
        assert_eq!(name(error_type::TABLE_FEATURES_FAILED, 2), None);
        assert_eq!(name(error_type::BAD_PROPERTY, 8), Some("OFPBPC_EPERM"));
        assert_eq!(
            name(error_type::BUNDLE_FAILED, 13),
            Some("OFPBFC_MSG_FAILED")
        );
        assert_eq!(name(error_type::BUNDLE_FAILED, 19), None);
        assert_eq!(name(18, 0), None);
    }

    #[test]
    fn experimenter_form_bytes_and_names() {
        let err = ErrorMsg {
            kind: ErrorKind::Experimenter {
                experimenter: experimenter::NICIRA,
                exp_code: 2,
            },
            data: vec![1],
        };
        let bytes = err.to_bytes(1).unwrap();
        assert_eq!(
            bytes,
            [
                6, 1, 0, 17, 0, 0, 0, 1, 0xff, 0xff, 0, 2, 0, 0, 0x23, 0x20, 1
            ]
        );
        assert_eq!(err.name(), Some("NXBRC_NXM_INVALID"));
        assert_eq!(
            err.to_string(),
            "NXBRC_NXM_INVALID (experimenter 0x00002320, code 2)"
        );
        assert_eq!(ErrorMsg::parse(&bytes), Ok((err, 1)));
        let onf = |exp_code| {
            ErrorKind::Experimenter {
                experimenter: experimenter::ONF,
                exp_code,
            }
            .name()
        };
        assert_eq!(onf(2313), Some("ONFBFC_MSG_FAILED"));
        assert_eq!(onf(2600), Some("ONFBIC_DUP_INSTRUCTION"));
        assert_eq!(onf(4448), Some("ONFBPC_EPERM"));
        assert_eq!(onf(2316), None);
        assert_eq!(
            ErrorKind::Experimenter {
                experimenter: 1,
                exp_code: 2
            }
            .name(),
            None
        );
    }

    #[test]
    fn hello_failed_shows_text() {
        let err = ErrorMsg {
            kind: ErrorKind::Standard {
                err_type: 0,
                code: 0,
            },
            data: b"no common version".to_vec(),
        };
        assert_eq!(
            err.to_string(),
            "OFPHFC_INCOMPATIBLE (type 0, code 0): no common version"
        );
    }

    #[test]
    fn truncated() {
        assert!(matches!(
            ErrorMsg::parse_body(&[0, 1, 0]),
            Err(DecodeError::Truncated { .. })
        ));
        assert!(matches!(
            ErrorMsg::parse_body(&[0xff, 0xff, 0, 1, 0, 0]),
            Err(DecodeError::Truncated { .. })
        ));
    }

    fn kind() -> impl Strategy<Value = ErrorKind> {
        prop_oneof![
            (0u16..0xffff, any::<u16>())
                .prop_map(|(err_type, code)| ErrorKind::Standard { err_type, code }),
            (any::<u32>(), any::<u16>()).prop_map(|(experimenter, exp_code)| {
                ErrorKind::Experimenter {
                    experimenter,
                    exp_code,
                }
            }),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(kind in kind(), data in proptest::collection::vec(any::<u8>(), 0..80), xid: u32) {
            let err = ErrorMsg { kind, data };
            let _ = err.to_string();
            prop_assert_eq!(ErrorMsg::parse(&err.to_bytes(xid).unwrap()), Ok((err, xid)));
        }
    }
}
