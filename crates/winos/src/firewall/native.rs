//! [`ComFirewall`]: the [`Firewall`] calls over the Windows Firewall COM API (`HNetCfg.FwPolicy2`
//! → `INetFwRules`, new rules from `HNetCfg.FWRule`). Each call enters COM on the calling
//! thread, does its work and leaves.

use windows::Win32::Foundation::VARIANT_TRUE;
use windows::Win32::NetworkManagement::WindowsFirewall::{
    INetFwPolicy2, INetFwRule, INetFwRules, NET_FW_ACTION_ALLOW, NET_FW_IP_PROTOCOL_ANY,
    NET_FW_PROFILE2_ALL, NET_FW_RULE_DIR_IN, NET_FW_RULE_DIR_OUT, NET_FW_RULE_DIRECTION,
    NetFwPolicy2, NetFwRule,
};
use windows::Win32::System::Com::{CLSCTX_INPROC_SERVER, CoCreateInstance};
use windows::core::BSTR;

use super::{
    ANTREA_RULE_GROUP, Direction, Firewall, FirewallRule, LocalPort, PortProtocol,
    format_remote_addresses, parse_remote_addresses,
};
use crate::native::com::ComApartment;
use crate::native::errors::{com_error, is_file_not_found};
use crate::{Result, WinOsError};

/// The firewall rule collection with COM held up for as long as it lives.
struct Rules {
    rules: INetFwRules,
    // Dropped after `rules`.
    _apartment: ComApartment,
}

fn rules() -> Result<Rules> {
    let apartment = ComApartment::enter()?;
    // SAFETY: COM is initialized on this thread; NetFwPolicy2 is a CLSID.
    let policy: INetFwPolicy2 =
        unsafe { CoCreateInstance(&NetFwPolicy2, None, CLSCTX_INPROC_SERVER) }
            .map_err(|e| com_error("CoCreateInstance(NetFwPolicy2)", "HNetCfg.FwPolicy2", e))?;
    // SAFETY: `policy` is a live interface.
    let rules = unsafe { policy.Rules() }
        .map_err(|e| com_error("INetFwPolicy2::Rules", "INetFwRules", e))?;
    Ok(Rules {
        rules,
        _apartment: apartment,
    })
}

impl Rules {
    fn item(&self, name: &str) -> Result<Option<INetFwRule>> {
        // SAFETY: a valid BSTR; the result is an owned interface.
        match unsafe { self.rules.Item(&BSTR::from(name)) } {
            Ok(rule) => Ok(Some(rule)),
            Err(error) if is_file_not_found(&error) => Ok(None),
            Err(error) => Err(com_error("INetFwRules::Item", "INetFwRules", error)),
        }
    }
}

fn read(name: &str, rule: &INetFwRule) -> Result<FirewallRule> {
    let function = "INetFwRule";
    // SAFETY: `rule` is a live interface; the getters return owned values.
    let (direction, remote, protocol) =
        unsafe { (rule.Direction(), rule.RemoteAddresses(), rule.Protocol()) };
    let direction = match direction.map_err(|e| com_error("INetFwRule::Direction", function, e))? {
        NET_FW_RULE_DIR_IN => Direction::Inbound,
        NET_FW_RULE_DIR_OUT => Direction::Outbound,
        other => {
            return Err(WinOsError::Malformed {
                function,
                detail: format!("rule {name:?} has direction {}", other.0),
            });
        }
    };
    let remote = remote
        .map_err(|e| com_error("INetFwRule::RemoteAddresses", function, e))?
        .to_string();
    let remote_addresses =
        parse_remote_addresses(&remote).ok_or_else(|| WinOsError::Malformed {
            function,
            detail: format!("rule {name:?} has remote addresses {remote:?}"),
        })?;
    let protocol = match protocol.map_err(|e| com_error("INetFwRule::Protocol", function, e))? {
        any if any == NET_FW_IP_PROTOCOL_ANY.0 => None,
        6 => Some(PortProtocol::Tcp),
        17 => Some(PortProtocol::Udp),
        other => {
            return Err(WinOsError::Malformed {
                function,
                detail: format!("rule {name:?} has protocol {other}"),
            });
        }
    };
    let local_port = match protocol {
        None => None,
        Some(protocol) => {
            // SAFETY: `rule` is a live interface; the getter returns an owned BSTR.
            let ports = unsafe { rule.LocalPorts() }
                .map_err(|e| com_error("INetFwRule::LocalPorts", function, e))?
                .to_string();
            let port = ports.trim().parse().map_err(|_| WinOsError::Malformed {
                function,
                detail: format!("rule {name:?} has local ports {ports:?}"),
            })?;
            Some(LocalPort { protocol, port })
        }
    };
    Ok(FirewallRule {
        name: name.to_owned(),
        direction,
        remote_addresses,
        local_port,
    })
}

/// Sets every property of a new allow rule. The protocol is set before the ports and addresses;
/// a port rule without remote addresses keeps the default, any address.
fn configure(
    new: &INetFwRule,
    rule: &FirewallRule,
    direction: NET_FW_RULE_DIRECTION,
) -> windows::core::Result<()> {
    // SAFETY: `new` is a live interface; every argument is a valid BSTR or enum value.
    unsafe {
        new.SetName(&BSTR::from(rule.name.as_str()))?;
        new.SetDescription(&BSTR::from("Managed by the antrea-rs agent"))?;
        new.SetGrouping(&BSTR::from(ANTREA_RULE_GROUP))?;
        new.SetDirection(direction)?;
        new.SetAction(NET_FW_ACTION_ALLOW)?;
        match rule.local_port {
            None => new.SetProtocol(NET_FW_IP_PROTOCOL_ANY.0)?,
            Some(LocalPort { protocol, port }) => {
                new.SetProtocol(protocol.number())?;
                new.SetLocalPorts(&BSTR::from(port.to_string()))?;
            }
        }
        if !rule.remote_addresses.is_empty() {
            new.SetRemoteAddresses(&BSTR::from(format_remote_addresses(&rule.remote_addresses)))?;
        }
        new.SetProfiles(NET_FW_PROFILE2_ALL.0)?;
        new.SetEnabled(VARIANT_TRUE)
    }
}

/// How many same-named rules one delete removes at most before giving up.
const MAX_SAME_NAMED_RULES: usize = 64;

/// The Windows Firewall through its COM API.
#[derive(Debug, Default, Clone, Copy)]
pub struct ComFirewall;

impl ComFirewall {
    /// The firewall of this host.
    pub fn new() -> Self {
        ComFirewall
    }
}

impl Firewall for ComFirewall {
    fn rule(&self, name: &str) -> Result<Option<FirewallRule>> {
        rules()?
            .item(name)?
            .map(|rule| read(name, &rule))
            .transpose()
    }

    fn add(&self, rule: &FirewallRule) -> Result<()> {
        let function = "INetFwRules::Add";
        if !rule.is_valid() {
            return Err(WinOsError::InvalidArgument {
                function,
                detail: "a rule needs a name, and remote addresses unless it is a port rule".into(),
            });
        }
        let rules = rules()?;
        if rules.item(&rule.name)?.is_some() {
            return Err(WinOsError::AlreadyExists {
                function,
                what: format!("firewall rule {:?}", rule.name),
            });
        }
        // SAFETY: COM is initialized (held by `rules`); NetFwRule is a CLSID.
        let new: INetFwRule =
            unsafe { CoCreateInstance(&NetFwRule, None, CLSCTX_INPROC_SERVER) }
                .map_err(|e| com_error("CoCreateInstance(NetFwRule)", "HNetCfg.FWRule", e))?;
        let direction = match rule.direction {
            Direction::Inbound => NET_FW_RULE_DIR_IN,
            Direction::Outbound => NET_FW_RULE_DIR_OUT,
        };
        configure(&new, rule, direction)
            .map_err(|e| com_error("INetFwRule::put_*", "INetFwRule", e))?;
        // SAFETY: both interfaces are live.
        unsafe { rules.rules.Add(&new) }.map_err(|e| com_error(function, "INetFwRule", e))?;
        // The API accepts rules it then does not keep (Wine's stub does exactly that): check.
        if rules.item(&rule.name)?.is_none() {
            return Err(WinOsError::Unsupported {
                function: "INetFwRules::Add (the rule was not kept)",
            });
        }
        tracing::debug!(name = rule.name, "firewall rule added");
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<()> {
        let rules = rules()?;
        if rules.item(name)?.is_none() {
            return Err(WinOsError::NotFound {
                function: "INetFwRules::Remove",
                what: format!("firewall rule {name:?}"),
            });
        }
        // Remove takes one rule of the name at a time; rules of the same name may repeat.
        for _ in 0..MAX_SAME_NAMED_RULES {
            // SAFETY: a valid BSTR.
            unsafe { rules.rules.Remove(&BSTR::from(name)) }
                .map_err(|e| com_error("INetFwRules::Remove", "INetFwRules", e))?;
            if rules.item(name)?.is_none() {
                return Ok(());
            }
        }
        Err(WinOsError::Unsupported {
            function: "INetFwRules::Remove (the rule stayed)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new rule object takes every property `add` sets. Windows reads them back (remote
    /// addresses in its mask form, which `read` parses); Wine's rule object accepts the setters
    /// but implements no getter.
    #[test]
    fn a_new_rule_object_takes_every_property() {
        let _apartment = ComApartment::enter().unwrap();
        // SAFETY: COM is initialized on this thread; NetFwRule is a CLSID.
        let new: INetFwRule =
            unsafe { CoCreateInstance(&NetFwRule, None, CLSCTX_INPROC_SERVER) }.unwrap();
        let rule = FirewallRule {
            name: "antrea-winos-unit".into(),
            direction: Direction::Outbound,
            remote_addresses: vec![
                "10.244.0.0/24".parse().unwrap(),
                "10.245.0.7/32".parse().unwrap(),
            ],
            local_port: None,
        };
        configure(&new, &rule, NET_FW_RULE_DIR_OUT).unwrap();
        let read_back = read(&rule.name, &new);
        if crate::under_wine() {
            assert_eq!(
                read_back,
                Err(WinOsError::Unsupported {
                    function: "INetFwRule::Direction"
                })
            );
        } else {
            assert_eq!(read_back, Ok(rule));
        }
        // A port rule: protocol and local port, remote addresses left at any.
        // SAFETY: as above.
        let port: INetFwRule =
            unsafe { CoCreateInstance(&NetFwRule, None, CLSCTX_INPROC_SERVER) }.unwrap();
        let tunnel = crate::firewall::tunnel_rule(6081);
        configure(&port, &tunnel, NET_FW_RULE_DIR_IN).unwrap();
        if !crate::under_wine() {
            assert_eq!(read(&tunnel.name, &port), Ok(tunnel));
        }
    }
}
