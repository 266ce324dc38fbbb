//! A flow's [`Instructions`] (`OFPIT_*`): apply-actions, clear-actions, write-actions,
//! write-metadata and goto-table, in the fixed order OpenFlow executes them.

use super::Action;
use super::wire::{emit_actions, parse_actions};
use crate::DecodeError;

/// The groups `actions` send to.
pub fn group_ids<'a>(actions: impl IntoIterator<Item = &'a Action>) -> impl Iterator<Item = u32> {
    actions.into_iter().filter_map(|action| match action {
        Action::Group(id) => Some(*id),
        _ => None,
    })
}

const IT_GOTO_TABLE: u16 = 1;
const IT_WRITE_METADATA: u16 = 2;
const IT_WRITE_ACTIONS: u16 = 3;
const IT_APPLY_ACTIONS: u16 = 4;
const IT_CLEAR_ACTIONS: u16 = 5;

/// The instructions of a flow. The empty value drops the packet (`actions=drop`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// Actions applied immediately (`OFPIT_APPLY_ACTIONS`).
    pub apply: Vec<Action>,
    /// `clear_actions`.
    pub clear_actions: bool,
    /// `write_actions(...)`.
    pub write_actions: Option<Vec<Action>>,
    /// `write_metadata:VALUE/MASK`.
    pub write_metadata: Option<(u64, u64)>,
    /// `goto_table:N`.
    pub goto_table: Option<u8>,
}

fn begin(out: &mut Vec<u8>, ty: u16) -> usize {
    let start = out.len();
    out.extend_from_slice(&ty.to_be_bytes());
    out.extend_from_slice(&[0, 0]);
    start
}

fn finish(out: &mut [u8], start: usize) {
    let len = (out.len() - start) as u16;
    out[start + 2..start + 4].copy_from_slice(&len.to_be_bytes());
}

impl Instructions {
    /// The groups the actions send to (apply-actions, then write-actions).
    pub fn group_ids(&self) -> impl Iterator<Item = u32> + '_ {
        group_ids(self.apply.iter().chain(self.write_actions.iter().flatten()))
    }

    /// Only apply-actions.
    pub fn apply(actions: Vec<Action>) -> Instructions {
        Instructions {
            apply: actions,
            ..Instructions::default()
        }
    }

    /// Whether the flow drops packets (no instruction at all).
    pub fn is_drop(&self) -> bool {
        *self == Instructions::default()
    }

    /// Appends the instructions in execution order; an empty apply list is omitted.
    pub fn emit(&self, out: &mut Vec<u8>) {
        if !self.apply.is_empty() {
            let s = begin(out, IT_APPLY_ACTIONS);
            out.extend_from_slice(&[0; 4]);
            emit_actions(&self.apply, out);
            finish(out, s);
        }
        if self.clear_actions {
            let s = begin(out, IT_CLEAR_ACTIONS);
            out.extend_from_slice(&[0; 4]);
            finish(out, s);
        }
        if let Some(actions) = &self.write_actions {
            let s = begin(out, IT_WRITE_ACTIONS);
            out.extend_from_slice(&[0; 4]);
            emit_actions(actions, out);
            finish(out, s);
        }
        if let Some((value, mask)) = self.write_metadata {
            let s = begin(out, IT_WRITE_METADATA);
            out.extend_from_slice(&[0; 4]);
            out.extend_from_slice(&value.to_be_bytes());
            out.extend_from_slice(&mask.to_be_bytes());
            finish(out, s);
        }
        if let Some(table) = self.goto_table {
            let s = begin(out, IT_GOTO_TABLE);
            out.extend_from_slice(&[table, 0, 0, 0]);
            finish(out, s);
        }
    }

    /// Decodes a list of instructions filling `buf`.
    pub fn parse(mut buf: &[u8]) -> Result<Instructions, DecodeError> {
        let mut ins = Instructions::default();
        let mut seen = 0u32;
        while !buf.is_empty() {
            DecodeError::need("ofp_instruction", buf, 8)?;
            let ty = u16::from_be_bytes([buf[0], buf[1]]);
            let len = usize::from(u16::from_be_bytes([buf[2], buf[3]]));
            if len < 8 || len % 8 != 0 {
                return Err(DecodeError::BadLength {
                    what: "ofp_instruction",
                    len,
                });
            }
            DecodeError::need("ofp_instruction", buf, len)?;
            let body = &buf[4..len];
            let bit = 1u32 << ty.min(31);
            if seen & bit != 0 {
                return Err(DecodeError::Invalid {
                    what: "ofp_instruction",
                    reason: format!("instruction type {ty} appears twice"),
                });
            }
            seen |= bit;
            match ty {
                IT_GOTO_TABLE => ins.goto_table = Some(body[0]),
                IT_WRITE_METADATA => {
                    DecodeError::need("OFPIT_WRITE_METADATA", body, 20)?;
                    let mut v = [0u8; 8];
                    let mut m = [0u8; 8];
                    v.copy_from_slice(&body[4..12]);
                    m.copy_from_slice(&body[12..20]);
                    ins.write_metadata = Some((u64::from_be_bytes(v), u64::from_be_bytes(m)));
                }
                IT_WRITE_ACTIONS => ins.write_actions = Some(parse_actions(&body[4..])?),
                IT_APPLY_ACTIONS => ins.apply = parse_actions(&body[4..])?,
                IT_CLEAR_ACTIONS => ins.clear_actions = true,
                other => {
                    return Err(DecodeError::Unsupported {
                        what: "instruction type",
                        value: u64::from(other),
                    });
                }
            }
            buf = &buf[len..];
        }
        Ok(ins)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instruction_bytes() {
        let ins = Instructions {
            apply: vec![Action::output(1)],
            clear_actions: true,
            write_actions: Some(vec![Action::output(2)]),
            write_metadata: Some((1, 3)),
            goto_table: Some(3),
        };
        let mut b = Vec::new();
        ins.emit(&mut b);
        let expected: Vec<u8> = [
            &[0, 4, 0, 24, 0, 0, 0, 0][..],
            &[0, 0, 0, 16, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 0, 0, 0],
            &[0, 5, 0, 8, 0, 0, 0, 0],
            &[0, 3, 0, 24, 0, 0, 0, 0],
            &[0, 0, 0, 16, 0, 0, 0, 2, 0xff, 0xff, 0, 0, 0, 0, 0, 0],
            &[
                0, 2, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3,
            ],
            &[0, 1, 0, 8, 3, 0, 0, 0],
        ]
        .concat();
        assert_eq!(b, expected);
        assert_eq!(Instructions::parse(&b), Ok(ins));
        assert_eq!(Instructions::parse(&[]), Ok(Instructions::default()));
    }

    #[test]
    fn rejects_malformed() {
        assert!(Instructions::parse(&[0, 1, 0, 4, 0, 0, 0, 0]).is_err());
        assert!(Instructions::parse(&[0, 1, 0, 16, 0, 0, 0, 0]).is_err());
        assert!(Instructions::parse(&[0, 9, 0, 8, 0, 0, 0, 0]).is_err());
        assert!(Instructions::parse(&[0, 1, 0, 8, 1, 0, 0, 0, 0, 1, 0, 8, 1, 0, 0, 0]).is_err());
    }
}
