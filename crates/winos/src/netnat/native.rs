//! [`WmiNetNat`]: the [`NetNat`] calls over WMI in `root\StandardCimv2`: `MSFT_NetNat`, the
//! class `New-NetNat`/`Get-NetNat`/`Remove-NetNat` wrap, and `MSFT_NetNatStaticMapping`, the one
//! `Add-`/`Get-`/`Remove-NetNatStaticMapping` wrap. Each call opens its own session on the
//! calling thread.
//!
//! A static mapping is created the way `Add-NetNatStaticMapping` does it (its parameter set is
//! `cim:CreateInstance`): an instance spawned from the class, its properties set, stored with
//! `PutInstance`; Windows gives it its `StaticMappingID`. It is removed with `DeleteInstance`
//! of its `__PATH`, as `Remove-NetNatStaticMapping` does. Integer properties are written with
//! the `VARIANT` types WMI uses for them (`uint8` as `VT_UI1`, `uint16` as `VT_I4`).

use std::mem::ManuallyDrop;
use std::net::Ipv4Addr;

use windows::Win32::System::Variant::{
    VARENUM, VARIANT, VARIANT_0, VARIANT_0_0, VARIANT_0_0_0, VT_I4, VT_UI1,
};
use windows::Win32::System::Wmi::IWbemClassObject;

use super::{NatInstance, NatProtocol, NetNat, StaticMapping, StaticMappingInstance};
use crate::native::com::Variant;
use crate::native::wmi::{self, STANDARD_CIMV2, Wmi};
use crate::{Result, WinOsError};

const CLASS: &str = "MSFT_NetNat";
const NAME: &str = "Name";
const PREFIX: &str = "InternalIPInterfaceAddressPrefix";

const MAPPING_CLASS: &str = "MSFT_NetNatStaticMapping";
const NAT_NAME: &str = "NatName";
const MAPPING_ID: &str = "StaticMappingID";
const PROTOCOL: &str = "Protocol";
const EXTERNAL_ADDRESS: &str = "ExternalIPAddress";
const EXTERNAL_PORT: &str = "ExternalPort";
const INTERNAL_ADDRESS: &str = "InternalIPAddress";
const INTERNAL_PORT: &str = "InternalPort";

/// Host NAT instances through WMI.
#[derive(Debug, Default, Clone, Copy)]
pub struct WmiNetNat;

impl WmiNetNat {
    /// The NAT of this host.
    pub fn new() -> Self {
        WmiNetNat
    }
}

fn find(session: &Wmi, name: &str) -> Result<Vec<IWbemClassObject>> {
    session.find_by(CLASS, NAME, name)
}

/// A variant of type `vt` holding `payload` (which must be the member `vt` names).
fn tagged(vt: VARENUM, payload: VARIANT_0_0_0) -> Variant {
    Variant(VARIANT {
        Anonymous: VARIANT_0 {
            Anonymous: ManuallyDrop::new(VARIANT_0_0 {
                vt,
                Anonymous: payload,
                ..VARIANT_0_0::default()
            }),
        },
    })
}

/// A `VT_UI1` variant: how WMI takes a `uint8` property.
fn byte_variant(value: u8) -> Variant {
    let mut payload = VARIANT_0_0_0::default();
    payload.bVal = value;
    tagged(VT_UI1, payload)
}

/// A `VT_I4` variant: how WMI takes a `uint16` property.
fn port_variant(port: u16) -> Variant {
    let mut payload = VARIANT_0_0_0::default();
    payload.lVal = i32::from(port);
    tagged(VT_I4, payload)
}

/// The value of a `uint8` property `name` (WMI hands it over as `VT_UI1`; an integer of
/// another width is taken when it fits).
fn byte_of(value: &Variant, name: &str) -> Result<u8> {
    // SAFETY: the tag `vt` is valid in every VARIANT; the byte member is read only when the tag
    // says the union holds a byte.
    let byte = unsafe {
        let inner = &value.0.Anonymous.Anonymous;
        if inner.vt == VT_UI1 {
            Some(inner.Anonymous.bVal)
        } else {
            None
        }
    };
    match byte {
        Some(byte) => Ok(byte),
        None => {
            let number = value.to_u32(MAPPING_CLASS, name)?;
            u8::try_from(number).map_err(|_| WinOsError::Malformed {
                function: MAPPING_CLASS,
                detail: format!("{name} {number} does not fit uint8"),
            })
        }
    }
}

/// Reads `uint16` property `name` of a static mapping.
fn get_port(object: &IWbemClassObject, name: &str) -> Result<u16> {
    let number = wmi::get(object, name, MAPPING_CLASS)?.to_u32(MAPPING_CLASS, name)?;
    u16::try_from(number).map_err(|_| WinOsError::Malformed {
        function: MAPPING_CLASS,
        detail: format!("{name} {number} is not a port"),
    })
}

/// Reads `StaticMappingID` of a static mapping.
fn get_id(object: &IWbemClassObject) -> Result<u32> {
    wmi::get(object, MAPPING_ID, MAPPING_CLASS)?.to_u32(MAPPING_CLASS, MAPPING_ID)
}

/// An address as a static mapping holds it: an IPv4 address, also written as a /32.
fn parse_address(text: &str) -> Option<Ipv4Addr> {
    text.strip_suffix("/32").unwrap_or(text).parse().ok()
}

/// Reads address property `name` of a static mapping.
fn get_address(object: &IWbemClassObject, name: &str) -> Result<Ipv4Addr> {
    let text = wmi::get_text(object, name, MAPPING_CLASS)?;
    parse_address(&text).ok_or_else(|| WinOsError::Malformed {
        function: MAPPING_CLASS,
        detail: format!("{name} {text:?} is not a single IPv4 address"),
    })
}

/// The static mapping `object` describes, with its id.
fn read_mapping(object: &IWbemClassObject) -> Result<StaticMappingInstance> {
    let number = byte_of(&wmi::get(object, PROTOCOL, MAPPING_CLASS)?, PROTOCOL)?;
    let protocol = NatProtocol::from_number(number).ok_or_else(|| WinOsError::Malformed {
        function: MAPPING_CLASS,
        detail: format!("{PROTOCOL} {number} is neither TCP nor UDP"),
    })?;
    Ok(StaticMappingInstance {
        id: get_id(object)?,
        mapping: StaticMapping {
            nat: wmi::get_text(object, NAT_NAME, MAPPING_CLASS)?,
            protocol,
            external_address: get_address(object, EXTERNAL_ADDRESS)?,
            external_port: get_port(object, EXTERNAL_PORT)?,
            internal_address: get_address(object, INTERNAL_ADDRESS)?,
            internal_port: get_port(object, INTERNAL_PORT)?,
        },
    })
}

/// A static mapping of any instance with `mapping`'s protocol, external address and external
/// port, in words, if there is one. Mappings of others are compared by what they share with
/// `mapping` only, so one this crate cannot read (an external prefix) does not stop the search.
fn same_external(session: &Wmi, mapping: &StaticMapping) -> Result<Option<String>> {
    let query = format!(
        "SELECT * FROM {MAPPING_CLASS} WHERE {PROTOCOL} = {} AND {EXTERNAL_PORT} = {}",
        mapping.protocol.number(),
        mapping.external_port
    );
    for object in session.query(&query, MAPPING_CLASS)? {
        let external = wmi::get_text(&object, EXTERNAL_ADDRESS, MAPPING_CLASS)?;
        if parse_address(&external) == Some(mapping.external_address) {
            let nat = wmi::get_text(&object, NAT_NAME, MAPPING_CLASS)?;
            let id = get_id(&object)?;
            return Ok(Some(format!(
                "static mapping {id} of NetNat {nat:?} ({} {external}:{})",
                mapping.protocol, mapping.external_port
            )));
        }
    }
    Ok(None)
}

impl NetNat for WmiNetNat {
    fn get(&self, name: &str) -> Result<Option<NatInstance>> {
        let session = Wmi::connect(STANDARD_CIMV2)?;
        let Some(object) = find(&session, name)?.into_iter().next() else {
            return Ok(None);
        };
        let prefix = wmi::get_text(&object, PREFIX, CLASS)?;
        let internal_prefix = prefix.parse().map_err(|_| WinOsError::Malformed {
            function: CLASS,
            detail: format!("{PREFIX} {prefix:?} is not a prefix"),
        })?;
        Ok(Some(NatInstance {
            name: wmi::get_text(&object, NAME, CLASS)?,
            internal_prefix,
        }))
    }

    fn create(&self, nat: &NatInstance) -> Result<()> {
        let session = Wmi::connect(STANDARD_CIMV2)?;
        if !find(&session, &nat.name)?.is_empty() {
            return Err(WinOsError::AlreadyExists {
                function: "MSFT_NetNat.Put",
                what: format!("NetNat {:?}", nat.name),
            });
        }
        let class = session.class(CLASS)?;
        // SAFETY: `class` is a live class object; flags must be 0.
        let instance = unsafe { class.SpawnInstance(0) }.map_err(|e| {
            crate::native::errors::com_error("IWbemClassObject::SpawnInstance", CLASS, e)
        })?;
        wmi::put(&instance, NAME, &Variant::string(&nat.name), CLASS)?;
        wmi::put(
            &instance,
            PREFIX,
            &Variant::string(&nat.internal_prefix.trunc().to_string()),
            CLASS,
        )?;
        session.create_instance(&instance, CLASS)?;
        tracing::debug!(name = nat.name, prefix = %nat.internal_prefix, "NetNat created");
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<()> {
        let session = Wmi::connect(STANDARD_CIMV2)?;
        let found = find(&session, name)?;
        if found.is_empty() {
            return Err(WinOsError::NotFound {
                function: "MSFT_NetNat.Delete",
                what: format!("NetNat {name:?}"),
            });
        }
        for object in found {
            session.delete_instance(&wmi::get_text(&object, "__PATH", CLASS)?, CLASS)?;
        }
        Ok(())
    }

    fn static_mappings(&self, nat: &str) -> Result<Vec<StaticMappingInstance>> {
        let session = Wmi::connect(STANDARD_CIMV2)?;
        session
            .find_by(MAPPING_CLASS, NAT_NAME, nat)?
            .iter()
            .map(read_mapping)
            .collect()
    }

    fn add_static_mapping(&self, mapping: &StaticMapping) -> Result<()> {
        const PUT: &str = "MSFT_NetNatStaticMapping.Put";
        let session = Wmi::connect(STANDARD_CIMV2)?;
        if find(&session, &mapping.nat)?.is_empty() {
            return Err(WinOsError::NotFound {
                function: PUT,
                what: format!("NetNat {:?}", mapping.nat),
            });
        }
        if let Some(taken) = same_external(&session, mapping)? {
            return Err(WinOsError::AlreadyExists {
                function: PUT,
                what: taken,
            });
        }
        let class = session.class(MAPPING_CLASS)?;
        // SAFETY: `class` is a live class object; flags must be 0.
        let instance = unsafe { class.SpawnInstance(0) }.map_err(|e| {
            crate::native::errors::com_error("IWbemClassObject::SpawnInstance", MAPPING_CLASS, e)
        })?;
        let properties = [
            (NAT_NAME, Variant::string(&mapping.nat)),
            (PROTOCOL, byte_variant(mapping.protocol.number())),
            (
                EXTERNAL_ADDRESS,
                Variant::string(&mapping.external_address.to_string()),
            ),
            (EXTERNAL_PORT, port_variant(mapping.external_port)),
            (
                INTERNAL_ADDRESS,
                Variant::string(&mapping.internal_address.to_string()),
            ),
            (INTERNAL_PORT, port_variant(mapping.internal_port)),
        ];
        for (name, value) in &properties {
            wmi::put(&instance, name, value, MAPPING_CLASS)?;
        }
        session.create_instance(&instance, MAPPING_CLASS)?;
        tracing::debug!(%mapping, "NetNat static mapping created");
        Ok(())
    }

    fn remove_static_mapping(&self, nat: &str, id: u32) -> Result<()> {
        let session = Wmi::connect(STANDARD_CIMV2)?;
        let mut found = Vec::new();
        for object in session.find_by(MAPPING_CLASS, NAT_NAME, nat)? {
            if get_id(&object)? == id {
                found.push(wmi::get_text(&object, "__PATH", MAPPING_CLASS)?);
            }
        }
        if found.is_empty() {
            return Err(WinOsError::NotFound {
                function: "MSFT_NetNatStaticMapping.Delete",
                what: format!("static mapping {id} of NetNat {nat:?}"),
            });
        }
        for path in found {
            session.delete_instance(&path, MAPPING_CLASS)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    //! The static mapping values as WMI exchanges them, without WMI (Wine has no
    //! `root\StandardCimv2`).

    use super::*;

    #[test]
    fn integer_variants_have_wmis_types_and_read_back() {
        let protocol = byte_variant(NatProtocol::Udp.number());
        assert_eq!(byte_of(&protocol, PROTOCOL), Ok(17));
        // SAFETY: the tag is valid in every VARIANT.
        assert_eq!(unsafe { protocol.0.Anonymous.Anonymous.vt }, VT_UI1);
        let port = port_variant(u16::MAX);
        // SAFETY: as above.
        assert_eq!(unsafe { port.0.Anonymous.Anonymous.vt }, VT_I4);
        assert_eq!(port.to_u32(MAPPING_CLASS, EXTERNAL_PORT), Ok(65535));
        assert_eq!(
            byte_of(&port_variant(6), PROTOCOL),
            Ok(6),
            "a wider integer that fits"
        );
        assert!(matches!(
            byte_of(&port_variant(300), PROTOCOL),
            Err(WinOsError::Malformed { .. })
        ));
        assert!(matches!(
            byte_of(&Variant::string("6"), PROTOCOL),
            Err(WinOsError::Malformed { .. })
        ));
    }

    #[test]
    fn mapping_addresses_are_single_ipv4_addresses() {
        assert_eq!(parse_address("0.0.0.0"), Some(Ipv4Addr::UNSPECIFIED));
        assert_eq!(
            parse_address("169.254.0.252/32"),
            Some(Ipv4Addr::new(169, 254, 0, 252))
        );
        for text in ["10.0.0.0/24", "fe80::1", "", "10.0.0.1/"] {
            assert_eq!(parse_address(text), None, "{text:?}");
        }
    }
}
