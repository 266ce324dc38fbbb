//! The host as [`FakeHcn`](super::FakeHcn) sees it: network adapters with their MAC, IPv4
//! addresses and routes, and the installed switch extensions. Plain data: tests and the Windows
//! backend's fake bridge read it with `FakeHcn::host` and change it with `FakeHcn::apply`. It
//! (de)serializes with serde as part of a [`Snapshot`](super::Snapshot).

use std::net::Ipv4Addr;

use ipnet::Ipv4Net;
use model::MacAddr;
use serde::{Deserialize, Serialize};

use crate::Guid;
use crate::schema::{OVS_EXTENSION_ID, SwitchExtensionState};

/// The adapters and switch extensions of the fake host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostModel {
    /// Every adapter, physical and virtual, in creation order.
    pub adapters: Vec<HostAdapter>,
    /// The vSwitch extensions installed (a `VSwitchExtension` policy or an extension update
    /// must name one of them). Every network lists them all in its `Extensions`, as HNS does.
    pub switch_extensions: Vec<SwitchExtension>,
}

/// An installed vSwitch extension: its ID and its name as Hyper-V reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchExtension {
    /// The extension's ID.
    pub id: Guid,
    /// Its name, e.g. `Open vSwitch Extension`.
    pub name: String,
}

impl SwitchExtension {
    /// The Open vSwitch extension, named as `Get-VMSwitchExtension` shows it.
    pub fn open_vswitch() -> Self {
        SwitchExtension {
            id: OVS_EXTENSION_ID,
            name: "Open vSwitch Extension".to_owned(),
        }
    }
}

impl Default for HostModel {
    /// No adapter; the Open vSwitch extension installed.
    fn default() -> Self {
        HostModel {
            adapters: Vec::new(),
            switch_extensions: vec![SwitchExtension::open_vswitch()],
        }
    }
}

impl HostModel {
    /// A host with one physical NIC and the Open vSwitch extension installed.
    pub fn with_nic(nic: HostAdapter) -> Self {
        HostModel {
            adapters: vec![nic],
            ..HostModel::default()
        }
    }

    /// Whether extension `id` is installed.
    pub fn has_extension(&self, id: Guid) -> bool {
        self.switch_extensions.iter().any(|e| e.id == id)
    }

    /// The `Extensions` list of a new network: every installed extension, disabled.
    pub(crate) fn extension_states(&self) -> Vec<SwitchExtensionState> {
        self.switch_extensions
            .iter()
            .map(|e| SwitchExtensionState {
                id: e.id,
                is_enabled: false,
                name: e.name.clone(),
            })
            .collect()
    }

    /// The adapter named `name`.
    pub fn adapter(&self, name: &str) -> Option<&HostAdapter> {
        self.adapters.iter().find(|a| a.name == name)
    }

    pub(crate) fn adapter_mut(&mut self, name: &str) -> Option<&mut HostAdapter> {
        self.adapters.iter_mut().find(|a| a.name == name)
    }

    /// Removes the virtual adapter HNS created for `owner`, whatever it is named now.
    pub(crate) fn remove_owned_by(&mut self, owner: Guid) {
        self.adapters.retain(|a| a.owner != Some(owner));
    }
}

/// One network adapter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostAdapter {
    /// The adapter's name (interface alias), e.g. `Ethernet0` or `vEthernet (antrea-hnsnetwork)`.
    pub name: String,
    /// Its MAC address.
    pub mac: MacAddr,
    /// Its IPv4 addresses with prefix length.
    pub ipv4: Vec<Ipv4Net>,
    /// Routes through it.
    pub routes: Vec<AdapterRoute>,
    /// Whether it is a virtual adapter (a Transparent network needs a physical one).
    pub is_virtual: bool,
    /// The HNS network or endpoint that created it, if HNS did. It stays set across a rename,
    /// so deleting the object (or a reboot) removes the adapter by owner, not by name.
    pub owner: Option<Guid>,
}

impl HostAdapter {
    /// A physical NIC.
    pub fn physical(
        name: impl Into<String>,
        mac: MacAddr,
        ipv4: Vec<Ipv4Net>,
        routes: Vec<AdapterRoute>,
    ) -> Self {
        HostAdapter {
            name: name.into(),
            mac,
            ipv4,
            routes,
            is_virtual: false,
            owner: None,
        }
    }
}

/// A route through an adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterRoute {
    /// The destination prefix (`0.0.0.0/0` for the default route).
    pub destination: Ipv4Net,
    /// The next hop (`0.0.0.0` for on-link).
    pub next_hop: Ipv4Addr,
    /// The route metric.
    pub metric: u32,
}

/// A change to the host's adapters, made by something other than HNS (the agent renaming the
/// management vNIC, moving an address, adding a route).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdapterChange {
    /// Replace the adapter of the same name, or add it.
    Upsert(HostAdapter),
    /// Remove the adapter named so.
    Remove(String),
    /// Rename an adapter (its `owner` is kept).
    Rename {
        /// The current name.
        from: String,
        /// The new name.
        to: String,
    },
}

/// Why an [`AdapterChange`] cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdapterChangeError {
    /// No adapter has that name.
    #[error("no adapter named {0:?}")]
    NoSuchAdapter(String),
    /// Another adapter already has the new name.
    #[error("an adapter named {0:?} already exists")]
    NameTaken(String),
}

impl HostModel {
    /// Applies `change`.
    pub fn apply(&mut self, change: AdapterChange) -> Result<(), AdapterChangeError> {
        match change {
            AdapterChange::Upsert(adapter) => match self.adapter_mut(&adapter.name) {
                Some(existing) => *existing = adapter,
                None => self.adapters.push(adapter),
            },
            AdapterChange::Remove(name) => {
                let before = self.adapters.len();
                self.adapters.retain(|a| a.name != name);
                if self.adapters.len() == before {
                    return Err(AdapterChangeError::NoSuchAdapter(name));
                }
            }
            AdapterChange::Rename { from, to } => {
                if from != to && self.adapter(&to).is_some() {
                    return Err(AdapterChangeError::NameTaken(to));
                }
                let adapter = self
                    .adapter_mut(&from)
                    .ok_or(AdapterChangeError::NoSuchAdapter(from))?;
                adapter.name = to;
            }
        }
        Ok(())
    }
}
