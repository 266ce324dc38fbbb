//! Windows Firewall allow rules for Pod and tunnel traffic: [`Firewall`] is what the agent calls,
//! `FakeFirewall` (feature `fake`) a stateful stand-in for tests and `ComFirewall` (Windows only)
//! uses the firewall COM API (`INetFwPolicy2` / `INetFwRule`).

#[cfg(feature = "fake")]
mod fake;
#[cfg(windows)]
mod native;
mod rule;

#[cfg(feature = "fake")]
pub use fake::{FakeFirewall, FirewallCall};
#[cfg(windows)]
pub use native::ComFirewall;
pub use rule::{
    ANTREA_RULE_GROUP, Direction, FirewallRule, LocalPort, PortProtocol, TUNNEL_RULE,
    format_remote_addresses, parse_remote_addresses, pod_cidr_rules, tunnel_rule,
};

use crate::{Ensured, Result};

/// The firewall calls the agent makes. All calls block.
pub trait Firewall: Send + Sync + std::fmt::Debug {
    /// The rule called `name`, if there is one.
    fn rule(&self, name: &str) -> Result<Option<FirewallRule>>;

    /// Adds an enabled allow rule for any protocol on every profile; `AlreadyExists` when a rule
    /// is called `rule.name`.
    fn add(&self, rule: &FirewallRule) -> Result<()>;

    /// Removes the rule called `name` (every rule of that name); `NotFound` when there is none.
    fn delete(&self, name: &str) -> Result<()>;

    /// Makes `rule` present as given: adds it, keeps it, or (other direction or addresses)
    /// replaces it.
    fn ensure_rule(&self, rule: &FirewallRule) -> Result<Ensured> {
        let outcome = match self.rule(&rule.name)? {
            Some(existing) if existing.same_effect(rule) => return Ok(Ensured::Unchanged),
            Some(_) => {
                self.delete(&rule.name)?;
                Ensured::Replaced
            }
            None => Ensured::Created,
        };
        self.add(rule)?;
        tracing::info!(name = rule.name, ?outcome, "firewall rule ensured");
        Ok(outcome)
    }

    /// Makes the rule called `name` absent; returns whether there was one.
    fn remove_rule(&self, name: &str) -> Result<bool> {
        match self.delete(name) {
            Ok(()) => {
                tracing::info!(name, "firewall rule removed");
                Ok(true)
            }
            Err(error) if error.is_not_found() => Ok(false),
            Err(error) => Err(error),
        }
    }
}
