//! OpenFlow 1.5 port numbers (`ofp_port_no`), including the reserved ports and the names
//! `ovs-ofctl` gives them.

use std::fmt;
use std::str::FromStr;

use crate::TextError;
use crate::text::parse_num;

/// An OpenFlow 1.5 port number (32 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PortNo(pub u32);

impl PortNo {
    /// Largest number a physical port can have.
    pub const MAX: PortNo = PortNo(0xffff_ff00);
    pub const IN_PORT: PortNo = PortNo(0xffff_fff8);
    pub const TABLE: PortNo = PortNo(0xffff_fff9);
    pub const NORMAL: PortNo = PortNo(0xffff_fffa);
    pub const FLOOD: PortNo = PortNo(0xffff_fffb);
    pub const ALL: PortNo = PortNo(0xffff_fffc);
    pub const CONTROLLER: PortNo = PortNo(0xffff_fffd);
    pub const LOCAL: PortNo = PortNo(0xffff_fffe);
    /// `OFPP_ANY`: no port (wildcard in requests, "none" in `out_port`).
    pub const ANY: PortNo = PortNo(0xffff_ffff);

    const NAMES: [(PortNo, &'static str); 8] = [
        (PortNo::IN_PORT, "IN_PORT"),
        (PortNo::TABLE, "TABLE"),
        (PortNo::NORMAL, "NORMAL"),
        (PortNo::FLOOD, "FLOOD"),
        (PortNo::ALL, "ALL"),
        (PortNo::CONTROLLER, "CONTROLLER"),
        (PortNo::LOCAL, "LOCAL"),
        (PortNo::ANY, "ANY"),
    ];

    /// The reserved-port name, if this is a reserved port.
    pub fn name(self) -> Option<&'static str> {
        Self::NAMES
            .iter()
            .find(|(p, _)| *p == self)
            .map(|(_, n)| *n)
    }

    /// Converts a 16-bit OpenFlow 1.0 / NXM port number (reserved ports at `0xfff8..`).
    pub fn from_u16(port: u16) -> PortNo {
        if port >= 0xff00 {
            PortNo(u32::from(port) | 0xffff_0000)
        } else {
            PortNo(u32::from(port))
        }
    }

    /// The 16-bit OpenFlow 1.0 / NXM form, if the port has one.
    pub fn to_u16(self) -> Option<u16> {
        if self.0 < 0xff00 || self.0 >= 0xffff_ff00 {
            Some(self.0 as u16)
        } else {
            None
        }
    }
}

impl fmt::Display for PortNo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "{}", self.0),
        }
    }
}

impl FromStr for PortNo {
    type Err = TextError;

    fn from_str(s: &str) -> Result<PortNo, TextError> {
        let upper = s.to_ascii_uppercase();
        if let Some((p, _)) = Self::NAMES.iter().find(|(_, n)| *n == upper) {
            return Ok(*p);
        }
        if upper == "NONE" {
            return Ok(PortNo::ANY);
        }
        let n: u32 = parse_num(s)?;
        // Numbers written in the 16-bit reserved range mean the reserved ports, as in ovs-ofctl.
        if (0xff00..=0xffff).contains(&n) {
            Ok(PortNo::from_u16(n as u16))
        } else {
            Ok(PortNo(n))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        for (p, n) in PortNo::NAMES {
            assert_eq!(p.to_string(), n);
            assert_eq!(n.parse::<PortNo>(), Ok(p));
        }
        assert_eq!("65534".parse::<PortNo>(), Ok(PortNo::LOCAL));
        assert_eq!("local".parse::<PortNo>(), Ok(PortNo::LOCAL));
        assert_eq!("7".parse::<PortNo>(), Ok(PortNo(7)));
        assert_eq!(PortNo(7).to_string(), "7");
        assert!("eth0".parse::<PortNo>().is_err());
        assert_eq!(PortNo::from_u16(0xfff8), PortNo::IN_PORT);
        assert_eq!(PortNo::IN_PORT.to_u16(), Some(0xfff8));
        assert_eq!(PortNo(0x12345).to_u16(), None);
    }
}
