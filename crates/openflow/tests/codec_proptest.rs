//! Property tests: `parse(emit(x)) == x` for matches, action lists, flow mods, group mods, meter
//! mods and packet messages; `parse(display(x)) == x` for the text forms; and every decoder and text
//! parser returns an error instead of panicking on arbitrary input.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use openflow::Message;
use openflow::action::text::{format_action_list, parse_action_list};
use openflow::action::{
    Action, Controller, Ct, CtZone, Instructions, Learn, LearnSpec, Nat, NatKind, parse_actions,
};
use openflow::msg::flow_mod::{FlowMod, FlowModCommand};
use openflow::msg::flow_stats::{Duration, FlowDescReply, FlowStats, FlowStatsCounters};
use openflow::msg::group_mod::{
    Bucket, GroupDesc, GroupDescReply, GroupMod, GroupModCommand, GroupType, SelectionMethod,
};
use openflow::msg::meter_mod::{
    BandAction, MeterBand, MeterDesc, MeterDescReply, MeterMod, MeterModCommand, meter_flags,
};
use openflow::msg::packet_in::{PacketIn, PacketIn2};
use openflow::msg::packet_out::PacketOut;
use openflow::oxm::{FIELDS, Field, Match, PortNo, Subfield};
use proptest::prelude::*;
use proptest::sample::select;

fn masked(field: Field, v: u128, m: u128) -> (u128, u128) {
    let full = field.full_mask();
    let m = if field.def().maskable { m & full } else { full };
    (v & m, m)
}

/// Any field of the table with a random value and mask (wire round trips need no prerequisites).
fn any_entry() -> impl Strategy<Value = (Field, u128, u128)> {
    (0..FIELDS.len(), any::<u128>(), any::<u128>(), any::<bool>()).prop_map(|(i, v, m, exact)| {
        let f = FIELDS[i].field;
        let (v, m) = masked(f, v, if exact { u128::MAX } else { m });
        (f, v, m)
    })
}

fn any_match() -> impl Strategy<Value = Match> {
    prop::collection::vec(any_entry(), 0..8).prop_map(|entries| {
        let mut m = Match::new();
        for (f, v, mask) in entries {
            m.set_masked(f, v, mask);
        }
        m
    })
}

fn reg() -> impl Strategy<Value = Field> {
    (0u8..16).prop_map(Field::Reg)
}

fn reg_subfield() -> impl Strategy<Value = Subfield> {
    (reg(), 0u16..32, 1u16..=32).prop_map(|(f, ofs, n)| {
        let n = n.min(32 - ofs);
        Subfield {
            field: f,
            ofs,
            n_bits: n.max(1),
        }
    })
}

/// Fields whose `set_field` text form names and values round-trip.
const SET_FIELDS: &[Field] = &[
    Field::Reg(0),
    Field::Reg(5),
    Field::Xreg(3),
    Field::Xxreg(1),
    Field::Metadata,
    Field::TunId,
    Field::TunDst,
    Field::PktMark,
    Field::CtMark,
    Field::CtLabel,
    Field::EthSrc,
    Field::EthDst,
    Field::Ipv4Src,
    Field::Ipv4Dst,
    Field::Ipv6Dst,
    Field::ArpOp,
    Field::ArpSpa,
    Field::ArpSha,
    Field::TcpDst,
    Field::UdpSrc,
    Field::IpDscp,
    Field::InPort,
    Field::InPortNxm,
];

fn set_field() -> impl Strategy<Value = Action> {
    (
        select(SET_FIELDS),
        any::<u128>(),
        any::<u128>(),
        any::<bool>(),
    )
        .prop_map(|(f, v, m, exact)| {
            let (v, m) = masked(f, v, if exact { u128::MAX } else { m });
            Action::set_field_masked(f, v, m)
        })
}

fn ip_pair() -> impl Strategy<Value = (IpAddr, IpAddr)> {
    prop_oneof![
        (any::<u32>(), any::<u32>())
            .prop_map(|(a, b)| (IpAddr::V4(Ipv4Addr::from(a)), IpAddr::V4(Ipv4Addr::from(b)))),
        (any::<u128>(), any::<u128>())
            .prop_map(|(a, b)| (IpAddr::V6(Ipv6Addr::from(a)), IpAddr::V6(Ipv6Addr::from(b)))),
    ]
}

fn nat() -> impl Strategy<Value = Nat> {
    (
        any::<bool>(),
        proptest::option::of(ip_pair()),
        proptest::option::of((any::<u16>(), any::<u16>())),
        any::<[bool; 3]>(),
    )
        .prop_map(|(src, addrs, ports, [persistent, hash, random])| Nat {
            kind: Some(if src { NatKind::Src } else { NatKind::Dst }),
            ports: if addrs.is_some() {
                ports.map(|(a, b)| (a.max(1), b.max(1)))
            } else {
                None
            },
            addrs,
            persistent,
            hash,
            random,
        })
}

fn ct() -> impl Strategy<Value = Action> {
    (
        any::<[bool; 2]>(),
        proptest::option::of(0u8..255),
        prop_oneof![
            any::<u16>().prop_map(CtZone::Imm),
            reg_subfield().prop_map(CtZone::Field)
        ],
        select(&[0u16, 21, 69][..]),
        proptest::option::of(nat()),
        prop::collection::vec(set_field(), 0..3),
    )
        .prop_map(|([commit, force], table, zone, alg, nat, exec)| {
            Action::ct(Ct {
                commit,
                force,
                table,
                zone,
                alg,
                nat,
                exec,
            })
        })
}

fn learn_spec() -> impl Strategy<Value = LearnSpec> {
    (reg_subfield(), reg_subfield(), any::<u128>(), 0u8..5).prop_map(|(a, b, v, kind)| {
        let b = Subfield {
            n_bits: a.n_bits,
            ofs: b.ofs.min(32 - a.n_bits),
            ..b
        };
        let v = v & ((1u128 << a.n_bits) - 1);
        match kind {
            0 => LearnSpec::MatchField { dst: a, src: b },
            1 => LearnSpec::MatchImm { dst: a, value: v },
            2 => LearnSpec::LoadField { src: b, dst: a },
            3 => LearnSpec::LoadImm { value: v, dst: a },
            _ => LearnSpec::Output { src: a },
        }
    })
}

fn learn() -> impl Strategy<Value = Action> {
    (
        any::<[u16; 5]>(),
        any::<u64>(),
        0u16..4,
        any::<u8>(),
        prop::collection::vec(learn_spec(), 0..5),
    )
        .prop_map(
            |([idle, hard, fin_idle, fin_hard, priority], cookie, flags, table, specs)| {
                Action::learn(Learn {
                    table,
                    idle_timeout: idle,
                    hard_timeout: hard,
                    fin_idle_timeout: fin_idle,
                    fin_hard_timeout: fin_hard,
                    priority,
                    cookie,
                    flags,
                    specs,
                })
            },
        )
}

fn port() -> impl Strategy<Value = PortNo> {
    prop_oneof![
        (1u32..0xff00).prop_map(PortNo),
        select(
            &[
                PortNo::IN_PORT,
                PortNo::LOCAL,
                PortNo::NORMAL,
                PortNo::FLOOD,
                PortNo::ALL,
                PortNo::TABLE
            ][..]
        ),
    ]
}

/// Actions whose text form round-trips.
fn text_action() -> BoxedStrategy<Action> {
    prop_oneof![
        port().prop_map(|port| Action::Output {
            port,
            max_len: 0xffff
        }),
        any::<u16>().prop_map(|max_len| Action::Output {
            port: PortNo::CONTROLLER,
            max_len
        }),
        reg_subfield().prop_map(|src| Action::OutputReg {
            src,
            max_len: 0xffff
        }),
        any::<u32>().prop_map(Action::Group),
        any::<u32>().prop_map(Action::Meter),
        set_field(),
        (reg_subfield(), reg()).prop_map(|(src, f)| Action::Move {
            src,
            dst: Subfield { field: f, ..src }
        }),
        (
            prop_oneof![Just(PortNo::IN_PORT), (1u32..0xff00).prop_map(PortNo)],
            proptest::option::of(0u8..255),
            any::<bool>()
        )
            .prop_map(|(port, table, ct)| Action::Resubmit { port, table, ct }),
        Just(Action::DecTtl),
        select(&[0x8100u16, 0x88a8][..]).prop_map(Action::PushVlan),
        Just(Action::PopVlan),
        ct(),
        Just(Action::CtClear),
        (any::<u32>(), 2u8..64, any::<u8>()).prop_map(|(id, n, k)| Action::Conjunction {
            id,
            clause: k % n + 1,
            n_clauses: n
        }),
        learn(),
        (
            any::<u16>(),
            any::<u16>(),
            0u8..6,
            prop::collection::vec(any::<u8>(), 1..12),
            any::<bool>()
        )
            .prop_map(|(max_len, controller_id, reason, userdata, pause)| {
                Action::controller(Controller {
                    max_len,
                    controller_id,
                    reason,
                    userdata,
                    pause,
                })
            }),
        (0usize..4)
            .prop_flat_map(|k| prop::collection::vec(any::<u8>(), 6 + 8 * k))
            .prop_map(Action::note),
    ]
    .boxed()
}

/// Any action the wire form carries.
fn wire_action() -> BoxedStrategy<Action> {
    prop_oneof![
        text_action(),
        (port(), any::<u16>()).prop_map(|(port, max_len)| Action::Output { port, max_len }),
        (reg_subfield(), any::<u16>())
            .prop_map(|(src, max_len)| Action::OutputReg { src, max_len }),
        any::<u16>().prop_map(|max_len| Action::controller(Controller {
            max_len,
            ..Controller::default()
        })),
    ]
    .boxed()
}

fn instructions(
    action: impl Strategy<Value = Action> + Clone,
) -> impl Strategy<Value = Instructions> {
    (
        prop::collection::vec(action.clone(), 0..6),
        any::<bool>(),
        proptest::option::of(prop::collection::vec(action, 0..3)),
        proptest::option::of((any::<u64>(), any::<u64>())),
        proptest::option::of(any::<u8>()),
    )
        .prop_map(
            |(apply, clear_actions, write_actions, write_metadata, goto_table)| Instructions {
                apply,
                clear_actions,
                write_actions,
                write_metadata,
                goto_table,
            },
        )
}

fn flow_mod() -> impl Strategy<Value = FlowMod> {
    (
        select(
            &[
                FlowModCommand::Add,
                FlowModCommand::Modify,
                FlowModCommand::ModifyStrict,
                FlowModCommand::Delete,
                FlowModCommand::DeleteStrict,
            ][..],
        ),
        any::<[u64; 2]>(),
        any::<u8>(),
        any::<[u16; 5]>(),
        any::<[u32; 3]>(),
        any_match(),
        instructions(wire_action()),
    )
        .prop_map(
            |(
                command,
                [cookie, cookie_mask],
                table_id,
                [idle, hard, priority, flags, importance],
                [buffer_id, out_port, out_group],
                flow_match,
                instructions,
            )| {
                FlowMod {
                    command,
                    cookie,
                    cookie_mask,
                    table_id,
                    idle_timeout: idle,
                    hard_timeout: hard,
                    priority,
                    buffer_id,
                    out_port: PortNo(out_port),
                    out_group,
                    flags,
                    importance,
                    flow_match,
                    instructions,
                }
            },
        )
}

fn group_desc() -> impl Strategy<Value = GroupDesc> {
    let bucket = (
        any::<u32>(),
        any::<u16>(),
        proptest::option::of(1u32..0xffff_ff00),
        proptest::option::of(0u32..0xffff_ff00),
        prop::collection::vec(wire_action(), 0..4),
    )
        .prop_map(
            |(bucket_id, weight, watch_port, watch_group, actions)| Bucket {
                bucket_id,
                weight,
                watch_port: watch_port.map(PortNo),
                watch_group,
                actions,
            },
        );
    let selection = (
        select(&["hash", "dp_hash"][..]),
        any::<u64>(),
        prop::collection::vec(any_entry(), 0..3),
    )
        .prop_map(|(method, param, fields)| SelectionMethod {
            method: method.to_string(),
            param,
            fields: fields
                .into_iter()
                .map(|(f, _, m)| (f, (m != f.full_mask()).then_some(m)))
                .collect(),
        });
    (
        select(
            &[
                GroupType::All,
                GroupType::Select,
                GroupType::Indirect,
                GroupType::FastFailover,
            ][..],
        ),
        any::<u32>(),
        prop::collection::vec(bucket, 0..4),
        proptest::option::of(selection),
    )
        .prop_map(|(group_type, group_id, mut buckets, selection)| {
            if group_type != GroupType::Select {
                // Non-select buckets without a weight property decode with weight 0.
                for b in &mut buckets {
                    b.weight = b.weight.max(1);
                }
            }
            GroupDesc {
                group_type,
                group_id,
                buckets,
                selection,
            }
        })
}

/// A meter the text form can carry: a unit, burst sizes only with the burst flag.
fn meter_desc() -> impl Strategy<Value = MeterDesc> {
    let band = (any::<bool>(), any::<u8>(), any::<u32>(), any::<u32>()).prop_map(
        |(drop, prec_level, rate, burst_size)| MeterBand {
            action: if drop {
                BandAction::Drop
            } else {
                BandAction::DscpRemark { prec_level }
            },
            rate,
            burst_size,
        },
    );
    (
        any::<u32>(),
        select(&[meter_flags::KBPS, meter_flags::PKTPS][..]),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(band, 0..4),
    )
        .prop_map(|(meter_id, unit, burst, stats, mut bands)| {
            let mut flags = unit;
            if burst {
                flags |= meter_flags::BURST;
            } else {
                bands.iter_mut().for_each(|b| b.burst_size = 0);
            }
            if stats {
                flags |= meter_flags::STATS;
            }
            MeterDesc {
                meter_id,
                flags,
                bands,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn match_wire_round_trip(m in any_match()) {
        let mut b = Vec::new();
        m.emit(&mut b);
        prop_assert_eq!(b.len() % 8, 0);
        prop_assert_eq!(Match::parse(&b), Ok((m, b.len())));
    }

    #[test]
    fn actions_wire_round_trip(actions in prop::collection::vec(wire_action(), 0..8)) {
        let mut b = Vec::new();
        openflow::action::emit_actions(&actions, &mut b);
        prop_assert_eq!(b.len() % 8, 0);
        prop_assert_eq!(parse_actions(&b), Ok(actions));
    }

    #[test]
    fn actions_text_round_trip(actions in prop::collection::vec(text_action(), 1..6)) {
        let text = format_action_list(&actions);
        prop_assert_eq!(parse_action_list(&text), Ok(actions), "{}", text);
    }

    #[test]
    fn instructions_text_round_trip(ins in instructions(text_action())) {
        let text = ins.to_string();
        prop_assert_eq!(text.parse::<Instructions>(), Ok(ins), "{}", text);
    }

    #[test]
    fn flow_mod_wire_round_trip(fm in flow_mod(), xid in any::<u32>()) {
        let b = fm.to_bytes(xid).unwrap();
        prop_assert_eq!(FlowMod::decode(&b), Ok((fm, xid)));
    }

    #[test]
    fn group_mod_wire_round_trip(group in group_desc(), command_bucket_id in any::<u32>()) {
        let gm = GroupMod { command: GroupModCommand::Modify, command_bucket_id, group };
        let b = gm.to_bytes(1).unwrap();
        prop_assert_eq!(GroupMod::decode(&b), Ok((gm.clone(), 1)));
        let reply = GroupDescReply { more: false, groups: vec![gm.group] };
        prop_assert_eq!(GroupDescReply::decode(&reply.to_bytes(2).unwrap()), Ok((reply, 2)));
    }

    #[test]
    fn meter_mod_wire_round_trip(meter in meter_desc(), flags in any::<u16>(), delete in any::<bool>()) {
        let command = if delete { MeterModCommand::Delete } else { MeterModCommand::Modify };
        let mm = MeterMod { command, meter: MeterDesc { flags, ..meter } };
        let b = mm.to_bytes(1).unwrap();
        prop_assert_eq!(MeterMod::decode(&b), Ok((mm.clone(), 1)));
        let reply = MeterDescReply { more: delete, meters: vec![mm.meter] };
        prop_assert_eq!(MeterDescReply::decode(&reply.to_bytes(2).unwrap()), Ok((reply, 2)));
    }

    #[test]
    fn flow_desc_reply_round_trip(fm in flow_mod(), counts in any::<[u64; 2]>(), secs in any::<[u32; 3]>()) {
        let fs = FlowStats {
            stats: FlowStatsCounters {
                duration: Some(Duration { sec: secs[0], nsec: secs[1] }),
                idle_time: Some(Duration { sec: secs[2], nsec: 0 }),
                flow_count: None,
                packet_count: Some(counts[0]),
                byte_count: Some(counts[1]),
            },
            ..FlowStats::of_flow_mod(&fm)
        };
        let reply = FlowDescReply { more: true, flows: vec![fs] };
        prop_assert_eq!(FlowDescReply::decode(&reply.to_bytes(3).unwrap()), Ok((reply, 3)));
    }

    #[test]
    fn packet_messages_round_trip(m in any_match(), actions in prop::collection::vec(wire_action(), 0..4), data in prop::collection::vec(any::<u8>(), 0..200), nums in any::<(u32, u16, u8, u8, u64)>(), userdata in prop::collection::vec(any::<u8>(), 0..20), continuation in prop::collection::vec(any::<u8>(), 0..40)) {
        let (buffer_id, total_len, reason, table_id, cookie) = nums;
        let out = PacketOut { buffer_id, flow_match: m.clone(), actions, data: data.clone() };
        prop_assert_eq!(PacketOut::decode(&out.to_bytes(1).unwrap()), Ok((out, 1)));
        let pin = PacketIn { buffer_id, total_len, reason, table_id, cookie, flow_match: m.clone(), data: data.clone() };
        prop_assert_eq!(PacketIn::decode(&pin.to_bytes(1).unwrap()), Ok((pin, 1)));
        let pin2 = PacketIn2 { full_len: u32::from(total_len), packet: data, buffer_id, table_id, cookie, reason, metadata: m, userdata, continuation };
        prop_assert_eq!(PacketIn2::decode(&pin2.to_bytes(1).unwrap()), Ok((pin2, 1)));
    }

    #[test]
    fn decoders_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let _ = FlowMod::decode(&bytes);
        let _ = GroupMod::decode(&bytes);
        let _ = PacketIn::decode(&bytes);
        let _ = PacketIn2::decode(&bytes);
        let _ = PacketOut::decode(&bytes);
        let _ = FlowDescReply::decode(&bytes);
        let _ = GroupDescReply::decode(&bytes);
        let _ = MeterMod::decode(&bytes);
        let _ = MeterDescReply::decode(&bytes);
        let _ = Match::parse(&bytes);
        let _ = Match::parse_oxms(&bytes);
        let _ = parse_actions(&bytes);
        let _ = Instructions::parse(&bytes);
    }

    #[test]
    fn decoders_never_panic_on_mutated_messages(fm in flow_mod(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6), cut in any::<prop::sample::Index>()) {
        let mut b = fm.to_bytes(1).unwrap();
        for (i, v) in flips {
            let i = i.index(b.len());
            b[i] = v;
        }
        let _ = FlowMod::decode(&b);
        let n = cut.index(b.len());
        let _ = FlowMod::decode(&b[..n]);
        let body = &b[8.min(b.len())..];
        let _ = FlowMod::parse_body(body);
        let _ = FlowDescReply::parse_body(body);
        let _ = GroupMod::parse_body(body);
        let _ = PacketOut::parse_body(body);
        let _ = PacketIn2::parse_body(body);
    }

    #[test]
    fn text_parsers_never_panic(s in "[a-z0-9_=:,./()\\[\\]+\\- >]{0,80}") {
        let _ = s.parse::<FlowMod>();
        let _ = s.parse::<Match>();
        let _ = s.parse::<GroupMod>();
        let _ = s.parse::<MeterMod>();
        let _ = parse_action_list(&s);
        let _ = s.parse::<Subfield>();
    }
}

/// Matches with a consistent protocol context, for the text round trip (prerequisites hold).
fn text_match() -> impl Strategy<Value = Match> {
    const COMMON: &[Field] = &[
        Field::PktMark,
        Field::DpHash,
        Field::ConjId,
        Field::CtZone,
        Field::CtMark,
        Field::CtLabel,
        Field::Reg(0),
        Field::Reg(7),
        Field::Reg(15),
        Field::TunId,
        Field::TunSrc,
        Field::TunDst,
        Field::Metadata,
        Field::InPort,
        Field::EthSrc,
        Field::EthDst,
    ];
    const CONTEXTS: &[(u128, Option<u128>, &[Field])] = &[
        (
            0x0800,
            None,
            &[Field::Ipv4Src, Field::Ipv4Dst, Field::IpDscp, Field::IpEcn],
        ),
        (
            0x0800,
            Some(6),
            &[
                Field::Ipv4Src,
                Field::TcpSrc,
                Field::TcpDst,
                Field::TcpFlags,
            ],
        ),
        (
            0x0800,
            Some(17),
            &[Field::Ipv4Dst, Field::UdpSrc, Field::UdpDst],
        ),
        (0x0800, Some(132), &[Field::SctpSrc, Field::SctpDst]),
        (0x0800, Some(1), &[Field::Icmpv4Type, Field::Icmpv4Code]),
        (0x0800, Some(47), &[Field::Ipv4Src]),
        (
            0x86dd,
            None,
            &[Field::Ipv6Src, Field::Ipv6Dst, Field::Ipv6Label],
        ),
        (
            0x86dd,
            Some(58),
            &[
                Field::Icmpv6Type,
                Field::Icmpv6Code,
                Field::NdTarget,
                Field::NdSll,
                Field::NdTll,
            ],
        ),
        (0x86dd, Some(6), &[Field::TcpDst]),
        (
            0x0806,
            None,
            &[
                Field::ArpSpa,
                Field::ArpTpa,
                Field::ArpOp,
                Field::ArpSha,
                Field::ArpTha,
            ],
        ),
        (0x1234, None, &[]),
    ];
    (
        0..CONTEXTS.len(),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                any::<bool>(),
                any::<u128>(),
                any::<u128>(),
                any::<bool>(),
            ),
            0..8,
        ),
        proptest::option::of((any::<u8>(), any::<u8>())),
        proptest::option::of((any::<u16>(), any::<bool>())),
    )
        .prop_map(|(ctx, picks, ct_state, vlan)| {
            let (eth, proto, fields) = CONTEXTS[ctx];
            let mut m = Match::new().with(Field::EthType, eth);
            if let Some(p) = proto {
                m.set(Field::IpProto, p);
            }
            for (i, from_ctx, v, mask, exact) in picks {
                let pool = if from_ctx && !fields.is_empty() {
                    fields
                } else {
                    COMMON
                };
                let f = pool[i.index(pool.len())];
                let (v, mask) = masked(f, v, if exact { u128::MAX } else { mask });
                m.set_masked(f, v, mask);
            }
            if let Some((v, mask)) = ct_state {
                m.set_masked(Field::CtState, u128::from(v & mask), u128::from(mask));
            }
            if let Some((tci, pcp)) = vlan {
                m.set_masked(Field::VlanVid, u128::from(tci & 0xfff) | 0x1000, 0x1fff);
                if pcp {
                    m.set(Field::VlanPcp, u128::from(tci >> 13));
                }
            }
            m
        })
}

proptest! {
    #[test]
    fn match_text_round_trip(m in text_match()) {
        let text = m.to_string();
        prop_assert_eq!(text.parse::<Match>(), Ok(m), "{}", text);
    }

    #[test]
    fn flow_mod_text_round_trip(m in text_match(), ins in instructions(text_action()), table_id in any::<u8>(), priority in any::<u16>(), cookie in any::<u64>(), timeouts in any::<[u16; 3]>(), flags in 0u16..32) {
        let mut fm = FlowMod::new(FlowModCommand::Add);
        fm.flow_match = m;
        fm.instructions = ins;
        fm.table_id = table_id;
        fm.priority = priority;
        fm.cookie = cookie;
        fm.idle_timeout = timeouts[0];
        fm.hard_timeout = timeouts[1];
        fm.importance = timeouts[2];
        fm.flags = flags;
        let text = fm.to_string();
        prop_assert_eq!(text.parse::<FlowMod>(), Ok(fm), "{}", text);
    }

    #[test]
    fn group_text_round_trip(mut group in group_desc()) {
        // Text carries what ovs-ofctl prints: selection method only with a name, fields without
        // masks here, and bucket actions that have a text form.
        for b in &mut group.buckets {
            b.actions.retain(|a| a.to_string().parse::<Action>().as_ref() == Ok(a));
        }
        if let Some(sel) = &mut group.selection {
            for f in &mut sel.fields {
                f.1 = None;
            }
            sel.fields.dedup_by_key(|f| f.0);
        }
        let text = group.to_string();
        prop_assert_eq!(GroupDesc::from_text(&text), Ok(group), "{}", text);
    }

    #[test]
    fn meter_text_round_trip(meter in meter_desc()) {
        let text = meter.to_string();
        prop_assert_eq!(MeterDesc::from_text(&text), Ok(meter), "{}", text);
    }
}
