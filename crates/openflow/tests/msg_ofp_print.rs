//! `ovs-ofctl ofp-print` as the oracle for the bytes our messages emit: Open vSwitch's own
//! decoder must read each message kind as the one we meant, with the fields we set.
#![cfg(target_os = "linux")]

use std::process::Command;

use openflow::Message;
use openflow::msg::barrier::BarrierRequest;
use openflow::msg::bundle::{BundleAdd, BundleControl, BundleCtrlType, bundle_flags};
use openflow::msg::config::{SetConfig, SwitchConfig, config_flags};
use openflow::msg::echo::{EchoReply, EchoRequest};
use openflow::msg::error::{ErrorKind, ErrorMsg, error_type};
use openflow::msg::features::FeaturesRequest;
use openflow::msg::hello::{Hello, HelloElement};
use openflow::msg::port::{PortDescRequest, PortMod, PortModProperty, port_config};
use openflow::msg::role::{Role, RoleBody, RoleRequest};

fn ofp_print(bytes: &[u8]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let out = Command::new("ovs-ofctl")
        .args(["ofp-print", &hex])
        .output()
        .expect("run ovs-ofctl");
    assert!(
        out.status.success(),
        "ofp-print failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        !text.contains("***"),
        "ofp-print found a problem in {hex}:\n{text}"
    );
    text
}

fn assert_prints(bytes: &[u8], expected: &str) {
    let text = ofp_print(bytes);
    assert!(text.contains(expected), "expected {expected:?} in:\n{text}");
}

#[test]
fn hello() {
    assert_prints(
        &Hello::of15().to_bytes(1).unwrap(),
        "OFPT_HELLO (OF1.5) (xid=0x1):\n version bitmap: 0x06",
    );
    let multi = Hello {
        elements: vec![HelloElement::VersionBitmap(vec![0x52])],
    };
    assert_prints(
        &multi.to_bytes(2).unwrap(),
        "version bitmap: 0x01, 0x04, 0x06",
    );
}

#[test]
fn echo() {
    assert_prints(
        &EchoRequest { payload: vec![] }.to_bytes(3).unwrap(),
        "OFPT_ECHO_REQUEST (OF1.5) (xid=0x3): 0 bytes of payload",
    );
    assert_prints(
        &EchoReply {
            payload: vec![1, 2, 3],
        }
        .to_bytes(4)
        .unwrap(),
        "OFPT_ECHO_REPLY (OF1.5) (xid=0x4): 3 bytes of payload",
    );
}

#[test]
fn error() {
    let err = ErrorMsg {
        kind: ErrorKind::Standard {
            err_type: error_type::FLOW_MOD_FAILED,
            code: 3,
        },
        data: BarrierRequest.to_bytes(9).unwrap(),
    };
    assert_prints(
        &err.to_bytes(9).unwrap(),
        "OFPT_ERROR (OF1.5) (xid=0x9): OFPFMFC_OVERLAP",
    );
}

#[test]
fn features_request() {
    assert_prints(
        &FeaturesRequest.to_bytes(5).unwrap(),
        "OFPT_FEATURES_REQUEST (OF1.5) (xid=0x5)",
    );
}

#[test]
fn set_config() {
    let set = SetConfig(SwitchConfig {
        flags: config_flags::FRAG_DROP,
        miss_send_len: 0xffff,
    });
    assert_prints(
        &set.to_bytes(6).unwrap(),
        "OFPT_SET_CONFIG (OF1.5) (xid=0x6): frags=drop miss_send_len=65535",
    );
}

#[test]
fn barrier() {
    assert_prints(
        &BarrierRequest.to_bytes(7).unwrap(),
        "OFPT_BARRIER_REQUEST (OF1.5) (xid=0x7)",
    );
}

#[test]
fn bundle_control() {
    let open = BundleControl::new(
        0x2a,
        BundleCtrlType::OpenRequest,
        bundle_flags::ATOMIC | bundle_flags::ORDERED,
    );
    assert_prints(
        &open.to_bytes(8).unwrap(),
        "OFPT_BUNDLE_CONTROL (OF1.5) (xid=0x8):\n bundle_id=0x2a type=OPEN_REQUEST flags=atomic ordered",
    );
    let commit = BundleControl::new(0x2a, BundleCtrlType::CommitRequest, bundle_flags::ATOMIC);
    assert_prints(
        &commit.to_bytes(9).unwrap(),
        "bundle_id=0x2a type=COMMIT_REQUEST flags=atomic",
    );
    let discard = BundleControl::new(0x2a, BundleCtrlType::DiscardRequest, 0);
    assert_prints(
        &discard.to_bytes(9).unwrap(),
        "bundle_id=0x2a type=DISCARD_REQUEST",
    );
}

#[test]
fn bundle_add() {
    let port_mod = PortMod {
        port_no: 3,
        hw_addr: [2, 0, 0, 0, 0, 3],
        config: 0,
        mask: port_config::NO_RECV,
        properties: vec![],
    };
    let add = BundleAdd::new(0x2a, bundle_flags::ATOMIC, port_mod.to_bytes(0x11).unwrap()).unwrap();
    let text = ofp_print(&add.to_bytes(add.xid()).unwrap());
    assert!(
        text.contains("OFPT_BUNDLE_ADD_MESSAGE (OF1.5) (xid=0x11):\n bundle_id=0x2a flags=atomic"),
        "{text}"
    );
    assert!(
        text.contains("OFPT_PORT_MOD (OF1.5) (xid=0x11): port: 3: addr:02:00:00:00:00:03"),
        "{text}"
    );
}

#[test]
fn port_mod() {
    let pm = PortMod {
        port_no: 3,
        hw_addr: [0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff],
        config: port_config::PORT_DOWN,
        mask: port_config::PORT_DOWN | port_config::NO_PACKET_IN,
        properties: vec![PortModProperty::Ethernet { advertise: 0x20 }],
    };
    let text = ofp_print(&pm.to_bytes(10).unwrap());
    assert!(
        text.contains("OFPT_PORT_MOD (OF1.5) (xid=0xa): port: 3: addr:aa:bb:cc:dd:ee:ff"),
        "{text}"
    );
    assert!(text.contains("config: PORT_DOWN"), "{text}");
    assert!(text.contains("mask:   PORT_DOWN NO_PACKET_IN"), "{text}");
    assert!(text.contains("advertise: 1GB-FD"), "{text}");
}

#[test]
fn port_desc_request() {
    assert_prints(
        &PortDescRequest::default().to_bytes(11).unwrap(),
        "OFPST_PORT_DESC request (OF1.5) (xid=0xb): port=ANY",
    );
    assert_prints(
        &PortDescRequest { port_no: 2 }.to_bytes(12).unwrap(),
        "OFPST_PORT_DESC request (OF1.5) (xid=0xc): port=2",
    );
}

#[test]
fn role_request() {
    let role = RoleRequest(RoleBody {
        role: Role::Primary,
        generation_id: 7,
    });
    assert_prints(
        &role.to_bytes(13).unwrap(),
        "OFPT_ROLE_REQUEST (OF1.5) (xid=0xd): role=primary generation_id=7",
    );
    let equal = RoleRequest(RoleBody {
        role: Role::Equal,
        generation_id: 0,
    });
    assert_prints(&equal.to_bytes(14).unwrap(), "role=equal");
}

#[test]
fn get_config_request_and_reply() {
    use openflow::msg::config::{GetConfigReply, GetConfigRequest};
    assert_prints(
        &GetConfigRequest.to_bytes(15).unwrap(),
        "OFPT_GET_CONFIG_REQUEST (OF1.5) (xid=0xf)",
    );
    let reply = GetConfigReply(SwitchConfig {
        flags: config_flags::FRAG_NORMAL,
        miss_send_len: 128,
    });
    assert_prints(
        &reply.to_bytes(16).unwrap(),
        "OFPT_GET_CONFIG_REPLY (OF1.5) (xid=0x10): frags=normal miss_send_len=128",
    );
}

#[test]
fn features_reply() {
    use openflow::msg::features::{FeaturesReply, capability};
    let reply = FeaturesReply {
        datapath_id: 0xabcd,
        n_buffers: 0,
        n_tables: 254,
        auxiliary_id: 0,
        capabilities: capability::FLOW_STATS | capability::GROUP_STATS,
    };
    let text = ofp_print(&reply.to_bytes(17).unwrap());
    assert!(
        text.contains("OFPT_FEATURES_REPLY (OF1.5) (xid=0x11): dpid:000000000000abcd"),
        "{text}"
    );
    assert!(text.contains("n_tables:254, n_buffers:0"), "{text}");
    assert!(
        text.contains("capabilities: FLOW_STATS GROUP_STATS"),
        "{text}"
    );
}

fn sample_port() -> openflow::msg::port::Port {
    use openflow::msg::port::{EthernetProperty, Port, PortProperty, port_state};
    Port {
        port_no: 7,
        hw_addr: [2, 0, 0, 0, 0, 7],
        name: "antrea-gw0".into(),
        config: port_config::NO_PACKET_IN,
        state: port_state::LIVE,
        properties: vec![PortProperty::Ethernet(EthernetProperty {
            curr: 0x2800 | 0x20,
            curr_speed: 1_000_000,
            max_speed: 0,
            ..EthernetProperty::default()
        })],
    }
}

#[test]
fn port_status() {
    use openflow::msg::port::{PortReason, PortStatus};
    let status = PortStatus {
        reason: PortReason::Modify,
        port: sample_port(),
    };
    let text = ofp_print(&status.to_bytes(0).unwrap());
    assert!(
        text.contains(
            "OFPT_PORT_STATUS (OF1.5) (xid=0x0): MOD: 7(antrea-gw0): addr:02:00:00:00:00:07"
        ),
        "{text}"
    );
    assert!(text.contains("config:     NO_PACKET_IN"), "{text}");
    assert!(text.contains("state:      LIVE"), "{text}");
    assert!(text.contains("speed: 1000 Mbps now"), "{text}");
}

#[test]
fn port_desc_reply() {
    use openflow::msg::port::PortDescReply;
    let reply = PortDescReply {
        flags: 0,
        ports: vec![sample_port()],
    };
    let text = ofp_print(&reply.to_bytes(18).unwrap());
    assert!(
        text.contains(
            "OFPST_PORT_DESC reply (OF1.5) (xid=0x12):\n 7(antrea-gw0): addr:02:00:00:00:00:07"
        ),
        "{text}"
    );
}

#[test]
fn bundle_control_reply() {
    let reply = BundleControl::new(5, BundleCtrlType::CommitReply, 0);
    assert_prints(
        &reply.to_bytes(19).unwrap(),
        "bundle_id=0x5 type=COMMIT_REPLY",
    );
}

#[test]
fn of10_no_flood_port_mod() {
    use openflow::of10;
    let on = of10::PortMod::no_flood(32770, [2, 0, 0, 0, 0, 1], true).to_bytes(2);
    let text = ofp_print(&on);
    assert!(
        text.contains("OFPT_PORT_MOD (xid=0x2): port: 32770: addr:02:00:00:00:00:01"),
        "{text}"
    );
    assert!(text.contains("config: NO_FLOOD"), "{text}");
    assert!(text.contains("mask:   NO_FLOOD"), "{text}");
    assert!(text.contains("advertise: UNCHANGED"), "{text}");
    let off = of10::PortMod::no_flood(32770, [2, 0, 0, 0, 0, 1], false).to_bytes(2);
    assert_prints(&off, "config: 0\n     mask:   NO_FLOOD");
}
