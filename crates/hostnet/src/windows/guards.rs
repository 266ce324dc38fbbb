//! [`TakeoverGuard`]: the NIC takeover of one [`WindowsHost`] seen by its two guards, the
//! self-healing reconciler ([`heal::NetworkRecreator`]: re-run the takeover when the HNS network
//! is gone) and the rollback watchdog ([`watchdog::TakeoverRollback`]: undo the takeover when
//! the Node lost its network).

use super::{WindowsHost, heal, watchdog};
use crate::error::Error;
use crate::host_network::HostNetwork;

/// The takeover of the physical NIC `nic` by the bridge `bridge` on a [`WindowsHost`]: what
/// recreating the network and rolling it back need to know.
pub struct TakeoverGuard<H, I, N, F> {
    host: WindowsHost<H, I, N, F>,
    nic: String,
    bridge: String,
}

impl<H, I, N, F> std::fmt::Debug for TakeoverGuard<H, I, N, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TakeoverGuard")
            .field("nic", &self.nic)
            .field("bridge", &self.bridge)
            .finish_non_exhaustive()
    }
}

impl<H, I, N, F> TakeoverGuard<H, I, N, F>
where
    H: hcn::HcnApi + 'static,
    I: winos::IpHelper + 'static,
    N: winos::NetNat + 'static,
    F: winos::Firewall + 'static,
{
    /// The guard of `host`'s takeover of the NIC `nic` (its alias) by `bridge`; it shares the
    /// host's OS interfaces.
    pub fn new(
        host: &WindowsHost<H, I, N, F>,
        nic: impl Into<String>,
        bridge: impl Into<String>,
    ) -> Self {
        TakeoverGuard {
            host: WindowsHost {
                backend: host.backend.clone(),
            },
            nic: nic.into(),
            bridge: bridge.into(),
        }
    }
}

impl<H, I, N, F> heal::NetworkRecreator for TakeoverGuard<H, I, N, F>
where
    H: hcn::HcnApi + 'static,
    I: winos::IpHelper + 'static,
    N: winos::NetNat + 'static,
    F: winos::Firewall + 'static,
{
    type Error = Error;

    /// Takes the NIC over again, as bring-up does: its configuration (back on it since the
    /// network went) moves to the new network's vNIC, renamed to the bridge, with the extension on.
    async fn recreate_network(&self) -> Result<(), Error> {
        let nic = self.nic.clone();
        let config = self
            .host
            .blocking(move |b| b.config_of(&nic, "uplink"))
            .await?;
        self.host.prepare_bridge(&config, &self.bridge).await?;
        Ok(())
    }
}

impl<H, I, N, F> watchdog::TakeoverRollback for TakeoverGuard<H, I, N, F>
where
    H: hcn::HcnApi + 'static,
    I: winos::IpHelper + 'static,
    N: winos::NetNat + 'static,
    F: winos::Firewall + 'static,
{
    type Error = Error;

    /// Deletes the HNS network (and its endpoints); the NIC gets its configuration back.
    async fn rollback(&self) -> Result<(), Error> {
        match self.host.restore_uplink(&self.bridge).await? {
            Some(nic) => tracing::info!(
                "takeover of {} rolled back; {} holds the Node's configuration",
                self.nic,
                nic.name
            ),
            None => tracing::info!("no HNS network on {}: nothing to roll back", self.bridge),
        }
        Ok(())
    }
}
