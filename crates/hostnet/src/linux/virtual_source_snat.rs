//! The host's masquerade of the virtual Service IP (proxyAll): the datapath sends the Node's
//! own Service connections to host-network endpoints back to the host with 169.254.0.253 as
//! source, and one to another machine (a control plane Node's API server) must leave with the
//! Node's address, as Antrea's "masquerade OVS virtual source IP" rule does. Table
//! `ip antrea-virtual-ip`, chain `postrouting`: `ip saddr 169.254.0.253 oifname != GATEWAY
//! masquerade`. Installed with the Service routes, removed with them; the rule's comment names
//! the gateway, so an unchanged rule is recognised without writing.

use model::VIRTUAL_SERVICE_IP;

use crate::error::Result;

use super::nft;

/// The table holding the rule.
pub const VIRTUAL_IP_TABLE: &str = "antrea-virtual-ip";
const CHAIN: &str = "postrouting";

fn comment(gateway: &str) -> String {
    format!("antrea masquerade {VIRTUAL_SERVICE_IP} leaving other than {gateway}")
}

/// Makes the table hold exactly the rule for `gateway` (`Some`), or removes it (`None`).
/// Returns whether it wrote. Runs inside the Node's namespace.
pub fn reconcile(gateway: Option<&str>) -> Result<bool> {
    let op = "read the virtual Service IP masquerade";
    let listing = nft::list_table("ip", VIRTUAL_IP_TABLE, op)?;
    let Some(gateway) = gateway else {
        if listing.is_none() {
            return Ok(false);
        }
        nft::delete_table(
            "ip",
            VIRTUAL_IP_TABLE,
            "remove the virtual Service IP masquerade",
        )?;
        return Ok(true);
    };
    let comment = comment(gateway);
    if listing.is_some_and(|objects| nft::holds_only_rule(&objects, CHAIN, &comment)) {
        return Ok(false);
    }
    nft::replace_table(
        "ip",
        VIRTUAL_IP_TABLE,
        &format!(
            "  chain {CHAIN} {{ type nat hook postrouting priority srcnat; policy accept; \
             ip saddr {VIRTUAL_SERVICE_IP} oifname != \"{gateway}\" counter masquerade comment \"{comment}\"; }}\n"
        ),
        "install the virtual Service IP masquerade",
    )?;
    Ok(true)
}
