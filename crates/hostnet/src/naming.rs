//! The endpoint naming rule shared with Antrea on Windows: the host-side name of a Pod's
//! interface (Linux: the host end of the veth; Windows: the HNS endpoint) and its OVS port.

use sha1::{Digest, Sha1};

/// The longest interface name Linux accepts (`IFNAMSIZ - 1`).
pub const MAX_INTERFACE_NAME_LEN: usize = 15;

/// `<first 8 chars of the Pod name, leading '-' trimmed>-<first 6 hex digits of
/// SHA-1(container ID)>`, at most 15 characters (e.g. `web-7975-274540`). The Pod's namespace
/// is not part of it. Characters are counted, so a non-ASCII Pod name cannot split a character.
pub fn endpoint_name(pod_name: &str, container_id: &str) -> String {
    let prefix: String = pod_name.chars().take(8).collect();
    let prefix = prefix.trim_start_matches('-');
    let digest = Sha1::digest(container_id.as_bytes());
    let hash: String = digest.iter().take(3).map(|b| format!("{b:02x}")).collect();
    format!("{prefix}-{hash}")
}

/// Whether `name` has the shape [`endpoint_name`] gives: at most 8 characters not starting with
/// `-`, then `-` and 6 lower-case hex digits. Used to tell our Pod interfaces from others'.
pub fn is_endpoint_name(name: &str) -> bool {
    let Some((prefix, hash)) = name.rsplit_once('-') else {
        return false;
    };
    prefix.chars().count() <= 8
        && !prefix.starts_with('-')
        && hash.len() == 6
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors() {
        // SHA-1("abc") = a9993e36…, SHA-1("") = da39a3ee…
        assert_eq!(
            endpoint_name("web-7975b6c8d-x2x9q", "abc"),
            "web-7975-a9993e"
        );
        assert_eq!(
            endpoint_name("coredns-5d78c9869d-abcde", ""),
            "coredns--da39a3"
        );
        assert_eq!(endpoint_name("p1", "abc"), "p1-a9993e");
    }

    #[test]
    fn leading_dashes_are_trimmed_after_truncation() {
        // The 8-character cut happens first: "--ab" stays "ab", "--------x" becomes "".
        assert_eq!(endpoint_name("--ab", "abc"), "ab-a9993e");
        assert_eq!(endpoint_name("--------x", "abc"), "-a9993e");
    }

    #[test]
    fn never_longer_than_an_interface_name() {
        let long = "a".repeat(300);
        let name = endpoint_name(&long, &long);
        assert_eq!(name.len(), MAX_INTERFACE_NAME_LEN);
    }

    #[test]
    fn recognises_its_own_names_only() {
        for name in [
            endpoint_name("web-7975b6c8d-x2x9q", "abc"),
            endpoint_name("--------x", "abc"),
        ] {
            assert!(is_endpoint_name(&name), "{name}");
        }
        for name in [
            "Ethernet0",
            "br-int",
            "antrea-gw0",
            "web-A9993E",
            "toolongpod-a9993e",
            "x-a9993",
        ] {
            assert!(!is_endpoint_name(name), "{name}");
        }
    }

    #[test]
    fn counts_characters_not_bytes() {
        assert_eq!(endpoint_name("ééééééééé", "abc"), "éééééééé-a9993e");
    }
}
