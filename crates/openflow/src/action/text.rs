//! `ovs-ofctl` text for actions and instructions: `Display` prints exactly what
//! `ovs-ofctl -O OpenFlow15 dump-flows` prints; parsing accepts that and the usual input
//! spellings (`load:`, `resubmit:PORT`, bare port numbers, `NXM_*[a..b]` subfields).

use std::fmt;
use std::str::FromStr;

use super::{Action, Controller, Ct, Instructions, Learn};
use crate::TextError;
use crate::oxm::value::{format_mf_value, parse_value};
use crate::oxm::{Field, PortNo, Subfield};
use crate::text::{
    call, format_hex_bytes, key_value, parse_hex_bytes, parse_num, parse_uint, split_top,
};

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Output { port, max_len } if *port == PortNo::CONTROLLER => {
                write!(f, "CONTROLLER:{max_len}")
            }
            Action::Output { port, .. } if port.0 < PortNo::MAX.0 => write!(f, "output:{}", port.0),
            Action::Output { port, .. } => write!(f, "{port}"),
            Action::OutputReg { src, .. } => write!(f, "output:{src}"),
            Action::Group(id) => write!(f, "group:{id}"),
            Action::Meter(id) => write!(f, "meter:{id}"),
            Action::SetField(set) => write!(
                f,
                "set_field:{}->{}",
                format_mf_value(set.field, set.value, set.mask),
                set.field.def().name
            ),
            Action::Move { src, dst } => write!(f, "move:{src}->{dst}"),
            Action::Resubmit {
                port,
                table: None,
                ct: false,
            } if *port != PortNo::IN_PORT => write!(f, "resubmit:{port}"),
            Action::Resubmit { port, table, ct } => {
                f.write_str("resubmit(")?;
                if *port != PortNo::IN_PORT {
                    write!(f, "{port}")?;
                }
                f.write_str(",")?;
                if let Some(t) = table {
                    write!(f, "{t}")?;
                }
                if *ct {
                    f.write_str(",ct")?;
                }
                f.write_str(")")
            }
            Action::DecTtl => f.write_str("dec_ttl"),
            Action::PushVlan(t) => write!(f, "push_vlan:{t:#x}"),
            Action::PopVlan => f.write_str("pop_vlan"),
            Action::Ct(ct) => write!(f, "{ct}"),
            Action::CtClear => f.write_str("ct_clear"),
            Action::Conjunction {
                id,
                clause,
                n_clauses,
            } => write!(f, "conjunction({id},{clause}/{n_clauses})"),
            Action::Learn(l) => write!(f, "{l}"),
            Action::Controller(c) => write!(f, "{c}"),
            Action::Note(bytes) => write!(f, "note:{}", format_hex_bytes(bytes)),
        }
    }
}

/// Formats actions separated by commas (no `drop` for an empty list).
pub fn format_action_list(actions: &[Action]) -> String {
    actions
        .iter()
        .map(|a| a.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Parses a comma-separated action list; `drop` alone is the empty list.
pub fn parse_action_list(s: &str) -> Result<Vec<Action>, TextError> {
    let items = split_top(s, ',');
    if items == ["drop"] {
        return Ok(Vec::new());
    }
    items.into_iter().map(|i| i.parse()).collect()
}

fn parse_set_field(item: &str, rest: &str) -> Result<Action, TextError> {
    let (value, dst) = rest
        .rsplit_once("->")
        .ok_or_else(|| TextError::new(item, "set_field needs VALUE->FIELD"))?;
    let field =
        Field::from_name(dst.trim()).ok_or_else(|| TextError::new(item, "unknown field"))?;
    let (v, m) = parse_value(field, value.trim()).map_err(|e| TextError::new(item, e.reason))?;
    if field == Field::VlanVid && m == field.full_mask() && v & 0x1000 == 0 {
        // The switch refuses it (OFPBAC_BAD_SET_ARGUMENT): say so before sending.
        return Err(TextError::new(
            item,
            "set_field vlan_vid takes the 13-bit value with OFPVID_PRESENT (VID 1 is 4097)",
        ));
    }
    Ok(Action::set_field_masked(field, v, m))
}

/// The legacy `mod_nw_tos:TOS`: the TOS byte's DSCP bits, so a multiple of 4 below 256. It is
/// `set_field:TOS/4->ip_dscp` on the wire and printed that way, as OVS does in OpenFlow 1.5.
fn parse_mod_nw_tos(item: &str, tos: &str) -> Result<Action, TextError> {
    let tos = parse_uint(tos, 8)?;
    if tos & 0x3 != 0 {
        return Err(TextError::new(
            item,
            "not a valid TOS: the two low (ECN) bits must be 0",
        ));
    }
    Ok(Action::set_field_masked(
        Field::IpDscp,
        tos >> 2,
        Field::IpDscp.full_mask(),
    ))
}

fn parse_load(item: &str, rest: &str) -> Result<Action, TextError> {
    let (value, dst) = rest
        .split_once("->")
        .ok_or_else(|| TextError::new(item, "load needs VALUE->DST"))?;
    let dst: Subfield = dst.parse()?;
    let v = parse_uint(value, u32::from(dst.n_bits))?;
    let ones = if dst.n_bits >= 128 {
        u128::MAX
    } else {
        (1u128 << dst.n_bits) - 1
    };
    Ok(Action::set_field_masked(
        dst.field,
        v << dst.ofs,
        ones << dst.ofs,
    ))
}

fn parse_move(item: &str, rest: &str) -> Result<Action, TextError> {
    let (src, dst) = rest
        .split_once("->")
        .ok_or_else(|| TextError::new(item, "move needs SRC->DST"))?;
    let (src, dst): (Subfield, Subfield) = (src.parse()?, dst.parse()?);
    if src.n_bits != dst.n_bits {
        return Err(TextError::new(
            item,
            format!(
                "source is {} bits wide but destination is {}",
                src.n_bits, dst.n_bits
            ),
        ));
    }
    Ok(Action::Move { src, dst })
}

fn parse_output(value: &str) -> Result<Action, TextError> {
    if value.contains('[') {
        return Ok(Action::OutputReg {
            src: value.parse()?,
            max_len: 0xffff,
        });
    }
    let port: PortNo = value.parse()?;
    Ok(Action::Output {
        port,
        max_len: 0xffff,
    })
}

/// A resubmit port: it must have a 16-bit (OpenFlow 1.0) form, the only one the action carries.
fn resubmit_port(s: &str) -> Result<PortNo, TextError> {
    let port: PortNo = s.parse()?;
    match port.to_u16() {
        Some(_) => Ok(port),
        None => Err(TextError::new(
            s,
            "resubmit ports must be below 0xff00 or reserved",
        )),
    }
}

fn parse_resubmit(item: &str, args: &str) -> Result<Action, TextError> {
    let parts: Vec<&str> = args.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(TextError::new(
            item,
            "resubmit takes at most (port,table,ct)",
        ));
    }
    let port = match parts.first() {
        Some(p) if !p.is_empty() => resubmit_port(p)?,
        _ => PortNo::IN_PORT,
    };
    let table = match parts.get(1) {
        // Table 255 is the wire's "no table".
        Some(t) if !t.is_empty() => Some(parse_num::<u8>(t)?).filter(|t| *t != 0xff),
        _ => None,
    };
    let ct = match parts.get(2) {
        Some(&"ct") => true,
        None => false,
        Some(_) => return Err(TextError::new(item, "third resubmit argument must be ct")),
    };
    Ok(Action::Resubmit { port, table, ct })
}

fn parse_conjunction(item: &str, args: &str) -> Result<Action, TextError> {
    let (id, clause) = args
        .split_once(',')
        .ok_or_else(|| TextError::new(item, "conjunction needs (ID,K/N)"))?;
    let (k, n) = clause
        .split_once('/')
        .ok_or_else(|| TextError::new(item, "conjunction needs (ID,K/N)"))?;
    let (clause, n_clauses): (u8, u8) = (parse_num(k)?, parse_num(n)?);
    if n_clauses < 2 || clause == 0 || clause > n_clauses {
        return Err(TextError::new(
            item,
            "conjunction clause must be 1..=N with N >= 2",
        ));
    }
    Ok(Action::Conjunction {
        id: parse_num(id)?,
        clause,
        n_clauses,
    })
}

impl FromStr for Action {
    type Err = TextError;

    fn from_str(item: &str) -> Result<Action, TextError> {
        parse_action(item)
    }
}

fn needs_arg<'a>(item: &str, key: &str, v: Option<&'a str>) -> Result<&'a str, TextError> {
    v.ok_or_else(|| TextError::new(item, format!("{key} needs an argument")))
}

fn parse_action<'a>(item: &'a str) -> Result<Action, TextError> {
    if let Some((name, args)) = call(item) {
        return match name {
            "ct" => Ok(Action::ct(Ct::parse_args(args)?)),
            "learn" => Ok(Action::learn(Learn::parse_args(args)?)),
            "controller" => Ok(Action::controller(Controller::parse_args(args)?)),
            "resubmit" => parse_resubmit(item, args),
            "conjunction" => parse_conjunction(item, args),
            "output" => {
                let mut port = None;
                let mut max_len = 0xffff;
                for arg in split_top(args, ',') {
                    match key_value(arg) {
                        ("port", Some(p)) => port = Some(parse_output(p)?),
                        ("max_len", Some(m)) => max_len = parse_num(m)?,
                        _ => return Err(TextError::new(arg, "unknown output argument")),
                    }
                }
                match port {
                    Some(Action::Output { port, .. }) => Ok(Action::Output { port, max_len }),
                    Some(Action::OutputReg { src, .. }) => Ok(Action::OutputReg { src, max_len }),
                    _ => Err(TextError::new(item, "output needs port=")),
                }
            }
            _ => Err(TextError::new(item, "unknown action")),
        };
    }
    let (key, value) = key_value(item);
    let need = |v: Option<&'a str>| needs_arg(item, key, v);
    let action = match key {
        "output" => parse_output(need(value)?)?,
        "group" => Action::Group(parse_num(need(value)?)?),
        "meter" => Action::Meter(parse_num(need(value)?)?),
        "set_field" => parse_set_field(item, need(value)?)?,
        "mod_nw_tos" => parse_mod_nw_tos(item, need(value)?)?,
        "load" => parse_load(item, need(value)?)?,
        "move" => parse_move(item, need(value)?)?,
        "resubmit" => Action::Resubmit {
            port: resubmit_port(need(value)?)?,
            table: None,
            ct: false,
        },
        "dec_ttl" if value.is_none() => Action::DecTtl,
        "push_vlan" => Action::PushVlan(parse_num(need(value)?)?),
        "pop_vlan" if value.is_none() => Action::PopVlan,
        "ct_clear" if value.is_none() => Action::CtClear,
        "note" => Action::note(parse_hex_bytes(need(value)?)?),
        "CONTROLLER" | "controller" => Action::Output {
            port: PortNo::CONTROLLER,
            max_len: value.map(parse_num).transpose()?.unwrap_or(0xffff),
        },
        _ if value.is_none() => Action::Output {
            port: key
                .parse()
                .map_err(|_| TextError::new(item, "unknown action"))?,
            max_len: 0xffff,
        },
        _ => return Err(TextError::new(item, "unknown action")),
    };
    Ok(action)
}

impl fmt::Display for Instructions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = self.apply.iter().map(|a| a.to_string()).collect();
        if self.clear_actions {
            parts.push("clear_actions".to_string());
        }
        if let Some(w) = &self.write_actions {
            parts.push(format!("write_actions({})", format_action_list(w)));
        }
        if let Some((v, m)) = self.write_metadata {
            parts.push(if m == u64::MAX {
                format!("write_metadata:{v:#x}")
            } else {
                format!("write_metadata:{v:#x}/{m:#x}")
            });
        }
        if let Some(t) = self.goto_table {
            parts.push(format!("goto_table:{t}"));
        }
        if parts.is_empty() {
            f.write_str("drop")
        } else {
            f.write_str(&parts.join(","))
        }
    }
}

impl FromStr for Instructions {
    type Err = TextError;

    /// Parses the text after `actions=`: apply actions followed by instructions.
    fn from_str(s: &str) -> Result<Instructions, TextError> {
        let mut ins = Instructions::default();
        let items = split_top(s, ',');
        if items == ["drop"] {
            return Ok(ins);
        }
        for item in items {
            if let Some(("write_actions", inner)) = call(item) {
                ins.write_actions = Some(parse_action_list(inner)?);
                continue;
            }
            match key_value(item) {
                ("clear_actions", None) => ins.clear_actions = true,
                ("goto_table", Some(t)) => ins.goto_table = Some(parse_num(t)?),
                ("write_metadata", Some(v)) => {
                    let (value, mask) = match v.split_once('/') {
                        Some((a, b)) => (parse_num(a)?, parse_num(b)?),
                        None => (parse_num(v)?, u64::MAX),
                    };
                    ins.write_metadata = Some((value, mask));
                }
                _ => ins.apply.push(item.parse()?),
            }
        }
        Ok(ins)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_spellings_print_canonically() {
        for (input, printed) in [
            ("load:0x2->NXM_NX_REG0[0..3]", "set_field:0x2/0xf->reg0"),
            ("load:1->NXM_NX_REG0[19]", "set_field:0x80000/0x80000->reg0"),
            ("3", "output:3"),
            ("output:LOCAL", "LOCAL"),
            ("output(port=CONTROLLER,max_len=128)", "CONTROLLER:128"),
            ("controller", "CONTROLLER:65535"),
            ("resubmit(3)", "resubmit:3"),
            ("resubmit(,5,ct)", "resubmit(,5,ct)"),
            ("set_field:10.0.0.1->nw_dst", "set_field:10.0.0.1->ip_dst"),
            ("ct(nat,zone=5)", "ct(zone=5,nat)"),
            ("ct(commit,alg=tftp)", "ct(commit,alg=tftp)"),
            ("set_field:4097->vlan_vid", "set_field:4097->vlan_vid"),
            (
                "set_field:0x1000/0x1000->vlan_vid",
                "set_field:4096/0x1000->vlan_vid",
            ),
            ("mod_nw_tos:8", "set_field:2->ip_dscp"),
            ("mod_nw_tos:252", "set_field:63->ip_dscp"),
        ] {
            let a: Action = input.parse().unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(a.to_string(), printed, "{input}");
        }
        assert_eq!(parse_action_list("drop"), Ok(Vec::new()));
        assert_eq!(Instructions::default().to_string(), "drop");
    }

    #[test]
    fn errors_name_the_fragment() {
        for (input, fragment) in [
            ("output:1,bogus(1)", "bogus(1)"),
            ("conjunction(1,3/2)", "conjunction(1,3/2)"),
            ("resubmit:70000", "70000"),
            (
                "move:NXM_NX_REG0[0..3]->NXM_NX_REG1[0..4]",
                "move:NXM_NX_REG0[0..3]->NXM_NX_REG1[0..4]",
            ),
            ("set_field:1->nope", "set_field:1->nope"),
            ("ct(commit,frobnicate)", "frobnicate"),
            ("learn(table=1,NXM_NX_NOPE[])", "NXM_NX_NOPE[]"),
            ("controller(reason=whatever)", "reason=whatever"),
            ("set_field:1->vlan_vid", "set_field:1->vlan_vid"),
            ("set_field:8193->vlan_vid", "set_field:8193->vlan_vid"),
            ("mod_nw_tos:7", "mod_nw_tos:7"),
            ("mod_nw_tos:256", "256"),
        ] {
            let e = parse_action_list(input).unwrap_err();
            assert_eq!(e.input, fragment, "{input}: {e}");
        }
    }
}
