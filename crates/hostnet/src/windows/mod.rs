//! The Windows backend: the Node's networking through HNS (HCN), NetNat and IP Helper.
//!
//! Its parts that only need [`hcn::HcnApi`] and small traits of their own compile on every
//! platform, so they are tested over `hcn::fake::FakeHcn` on Linux as well as under Wine:
//!
//! - [`heal`]: keeps HNS state matching the agent's intent after reboots, HNS restarts and
//!   failed CNI calls (missing network, orphan, duplicate and unattached endpoints).
//! - [`watchdog`]: after the NIC takeover, rolls it back when neither the default gateway nor
//!   the API server can be reached for a whole window.
//!
//! See docs/windows.md.

pub mod heal;
pub mod watchdog;

/// An error returned by a caller's callback (network recreation, takeover rollback), kept as
/// the caller's own error.
pub type CallbackError = Box<dyn std::error::Error + Send + Sync + 'static>;
