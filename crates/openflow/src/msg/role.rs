//! `OFPT_ROLE_REQUEST` and `OFPT_ROLE_REPLY`: a controller's role (equal, primary, secondary)
//! on a switch with several controllers.

use bytes::Buf;

use crate::DecodeError;
use crate::header::msg_type;
use crate::message::Message;

/// `ofp_controller_role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    NoChange,
    Equal,
    /// `OFPCR_ROLE_MASTER`.
    Primary,
    /// `OFPCR_ROLE_SLAVE`.
    Secondary,
    /// A value OpenFlow 1.5 does not define.
    Other(u32),
}

impl Role {
    fn from_wire(v: u32) -> Role {
        match v {
            0 => Role::NoChange,
            1 => Role::Equal,
            2 => Role::Primary,
            3 => Role::Secondary,
            other => Role::Other(other),
        }
    }

    fn to_wire(self) -> u32 {
        match self {
            Role::NoChange => 0,
            Role::Equal => 1,
            Role::Primary => 2,
            Role::Secondary => 3,
            Role::Other(v) => v,
        }
    }
}

/// The body shared by role request and reply (`ofp_role_request`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleBody {
    pub role: Role,
    /// Orders primary elections; ignored for [`Role::Equal`] and [`Role::NoChange`].
    pub generation_id: u64,
}

impl RoleBody {
    fn emit(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.role.to_wire().to_be_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&self.generation_id.to_be_bytes());
    }

    fn parse(body: &[u8]) -> Result<RoleBody, DecodeError> {
        DecodeError::need("ofp_role_request", body, 16)?;
        let mut b = body;
        let role = Role::from_wire(b.get_u32());
        b.advance(4);
        Ok(RoleBody {
            role,
            generation_id: b.get_u64(),
        })
    }
}

/// `OFPT_ROLE_REQUEST`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleRequest(pub RoleBody);

/// `OFPT_ROLE_REPLY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoleReply(pub RoleBody);

impl Message for RoleRequest {
    const TYPE: u8 = msg_type::ROLE_REQUEST;

    fn emit_body(&self, out: &mut Vec<u8>) {
        self.0.emit(out);
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        RoleBody::parse(body).map(RoleRequest)
    }
}

impl Message for RoleReply {
    const TYPE: u8 = msg_type::ROLE_REPLY;

    fn emit_body(&self, out: &mut Vec<u8>) {
        self.0.emit(out);
    }

    fn parse_body(body: &[u8]) -> Result<Self, DecodeError> {
        RoleBody::parse(body).map(RoleReply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bytes() {
        let request = RoleRequest(RoleBody {
            role: Role::Primary,
            generation_id: 7,
        });
        assert_eq!(
            request.to_bytes(5).unwrap(),
            [
                6, 24, 0, 24, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7
            ]
        );
        let reply = RoleReply(RoleBody {
            role: Role::Secondary,
            generation_id: 1 << 56,
        });
        assert_eq!(
            reply.to_bytes(5).unwrap()[8..],
            [0, 0, 0, 3, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
        );
        assert!(matches!(
            RoleReply::parse_body(&[0; 15]),
            Err(DecodeError::Truncated { .. })
        ));
    }

    proptest! {
        #[test]
        fn round_trip(role: u32, generation_id: u64, xid: u32) {
            let body = RoleBody { role: Role::from_wire(role), generation_id };
            prop_assert_eq!(RoleRequest::parse(&RoleRequest(body).to_bytes(xid).unwrap()), Ok((RoleRequest(body), xid)));
            prop_assert_eq!(RoleReply::parse(&RoleReply(body).to_bytes(xid).unwrap()), Ok((RoleReply(body), xid)));
        }
    }
}
