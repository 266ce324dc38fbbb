//! Pod egress SNAT (`nft` transactions) and kernel ingress blocking (nf_tables over netlink),
//! both run inside our namespace.

use crate::error::Result;
use crate::model::{Outcome, PodSnat};

use super::nfnetlink::Nftables;
use super::nft::{self, SNAT_CHAIN, TABLE};
use super::{LinuxHost, validate_ifname};

impl LinuxHost {
    pub(super) async fn snat(&self, snat: &PodSnat) -> Result<Outcome> {
        validate_ifname(&snat.egress_interface)?;
        let comment = nft::snat_comment(snat);
        let script = nft::snat_script(snat);
        let changed = self
            .netns
            .run(move || {
                let op = "read the Pod SNAT rule";
                if nft::list_table("ip", TABLE, op)?
                    .is_some_and(|objects| nft::holds_only_rule(&objects, SNAT_CHAIN, &comment))
                {
                    return Ok(false);
                }
                nft::apply(&script, "install the Pod SNAT rule")?;
                Ok(true)
            })
            .await?;
        Ok(self.outcome(changed))
    }

    pub(super) async fn no_snat(&self) -> Result<Outcome> {
        let changed = self
            .netns
            .run(|| {
                let op = "read the Pod SNAT rule";
                let Some(objects) = nft::list_table("ip", TABLE, op)? else {
                    return Ok(false);
                };
                if nft::objects(&objects, "chain", SNAT_CHAIN).is_empty() {
                    return Ok(false);
                }
                let chains = objects.iter().filter_map(|o| o.get("chain")).count();
                let script = if chains <= 1 {
                    format!("delete table ip {TABLE}\n")
                } else {
                    format!("delete chain ip {TABLE} {SNAT_CHAIN}\n")
                };
                nft::apply(&script, "remove the Pod SNAT rule")?;
                Ok(true)
            })
            .await?;
        Ok(self.outcome(changed))
    }

    pub(super) async fn block_ingress(&self, interface: &str) -> Result<Outcome> {
        validate_ifname(interface)?;
        self.kernel
            .require_link(interface, "kernel ingress block")
            .await?;
        let interface = interface.to_owned();
        let changed = self
            .netns
            .run(move || {
                let mut nftables = Nftables::open()?;
                if nftables.has_ingress_block(&interface)? {
                    return Ok(false);
                }
                nftables.add_ingress_block(&interface)?;
                Ok(true)
            })
            .await?;
        Ok(self.outcome(changed))
    }

    pub(super) async fn unblock_ingress(&self, interface: &str) -> Result<Outcome> {
        validate_ifname(interface)?;
        let interface = interface.to_owned();
        let changed = self
            .netns
            .run(move || Nftables::open()?.delete_ingress_block(&interface))
            .await?;
        Ok(self.outcome(changed))
    }

    pub(super) fn outcome(&self, changed: bool) -> Outcome {
        if changed {
            self.kernel.writes().record();
            Outcome::Changed
        } else {
            Outcome::Unchanged
        }
    }
}
