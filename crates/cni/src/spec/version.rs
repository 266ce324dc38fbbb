//! The CNI spec versions this project speaks and what each allows.

use std::fmt;
use std::str::FromStr;

use super::{CniError, code};

/// A CNI spec version whose configuration and result formats we implement.
///
/// 0.1.0 and 0.2.0 (the `ip4`/`ip6` result layout) are not supported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CniVersion {
    /// 0.3.0: first result layout with `interfaces`/`ips`/`routes`; IPs carry `version`.
    V0_3_0,
    /// 0.3.1: same result layout as 0.3.0.
    V0_3_1,
    /// 0.4.0: adds CHECK and `prevResult` on DEL; same result layout as 0.3.x.
    V0_4_0,
    /// 1.0.0: IPs lose `version`; DEL without `CNI_NETNS` is allowed.
    V1_0_0,
    /// 1.1.0: adds STATUS and GC, interface `mtu`/`socketPath`/`pciID`, route
    /// `mtu`/`advmss`/`priority`/`table`/`scope`.
    V1_1_0,
}

impl CniVersion {
    /// Every supported version, oldest first (the `supportedVersions` of VERSION).
    pub const ALL: [CniVersion; 5] = [
        CniVersion::V0_3_0,
        CniVersion::V0_3_1,
        CniVersion::V0_4_0,
        CniVersion::V1_0_0,
        CniVersion::V1_1_0,
    ];

    /// The newest supported version.
    pub const LATEST: CniVersion = CniVersion::V1_1_0;

    /// The version's text, e.g. `"0.3.1"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CniVersion::V0_3_0 => "0.3.0",
            CniVersion::V0_3_1 => "0.3.1",
            CniVersion::V0_4_0 => "0.4.0",
            CniVersion::V1_0_0 => "1.0.0",
            CniVersion::V1_1_0 => "1.1.0",
        }
    }

    /// Whether results use the 0.3.x/0.4.0 layout (IPs with a `version` field).
    pub fn has_legacy_result(self) -> bool {
        self < CniVersion::V1_0_0
    }

    /// Whether CHECK exists in this version.
    pub fn supports_check(self) -> bool {
        self >= CniVersion::V0_4_0
    }

    /// Whether STATUS and GC exist in this version.
    pub fn supports_status_and_gc(self) -> bool {
        self >= CniVersion::V1_1_0
    }

    /// Parses a configuration's `cniVersion`, giving the spec's "incompatible version" error
    /// (code 1) for anything unsupported. An empty version means 0.1.0, as in libcni.
    pub fn negotiate(text: &str) -> Result<CniVersion, CniError> {
        let text = if text.is_empty() { "0.1.0" } else { text };
        text.parse().map_err(|_| {
            let supported: Vec<&str> = CniVersion::ALL.iter().map(|v| v.as_str()).collect();
            CniError::new(
                code::INCOMPATIBLE_CNI_VERSION,
                format!(
                    "Unsupported CNI version {text}, supported versions [{}]",
                    supported.join(" ")
                ),
            )
        })
    }
}

impl fmt::Display for CniVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for CniVersion {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        CniVersion::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_supported_version_and_orders_them() {
        for v in CniVersion::ALL {
            assert_eq!(v.as_str().parse::<CniVersion>(), Ok(v));
        }
        assert!(CniVersion::ALL.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn rejects_old_and_unknown_versions_with_code_1() {
        for bad in ["", "0.1.0", "0.2.0", "1.2.0", "x"] {
            let e = CniVersion::negotiate(bad).unwrap_err();
            assert_eq!(e.code, code::INCOMPATIBLE_CNI_VERSION, "{bad}");
            assert!(
                e.msg
                    .contains("supported versions [0.3.0 0.3.1 0.4.0 1.0.0 1.1.0]"),
                "{}",
                e.msg
            );
        }
    }

    #[test]
    fn capabilities_per_version() {
        assert!(!CniVersion::V0_3_1.supports_check());
        assert!(CniVersion::V0_4_0.supports_check());
        assert!(CniVersion::V0_4_0.has_legacy_result());
        assert!(!CniVersion::V1_0_0.has_legacy_result());
        assert!(!CniVersion::V1_0_0.supports_status_and_gc());
        assert!(CniVersion::V1_1_0.supports_status_and_gc());
    }
}
