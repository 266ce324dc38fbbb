//! The host interfaces node setup acts through, beyond the files and the host network backend:
//! the service control manager ([`ServiceManager`]; on Windows `service::scm::Scm`) and the
//! Windows optional features ([`Features`]; on Windows `winos::features::WmiFeatures`), and
//! [`SetupError`], a failure of any of them with what was being done.

use crate::service::{Installed, InstalledService, ServiceSpec, Uninstalled};

/// A node setup step that failed: what was being done, and why.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct SetupError {
    /// What was being done (`create service ovsdb-server`).
    pub what: String,
    /// Why it failed.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl SetupError {
    /// A failure of `what`.
    pub fn new(
        what: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> SetupError {
        SetupError {
            what: what.into(),
            source: source.into(),
        }
    }

    /// `map_err` for a failure of `what`.
    pub fn of<E>(what: impl Into<String>) -> impl FnOnce(E) -> SetupError
    where
        E: Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    {
        let what = what.into();
        move |source| SetupError::new(what, source)
    }
}

/// The service control manager, as node setup uses it. Every call blocks.
pub trait ServiceManager {
    /// The registered configuration of the service named `name`, `None` when there is none.
    fn installed(&self, name: &str) -> Result<Option<InstalledService>, SetupError>;

    /// Creates `spec`'s service, or updates it when it differs, or leaves it alone.
    fn install(&self, spec: &ServiceSpec) -> Result<Installed, SetupError>;

    /// Stops the service named `name` if it runs, then deletes it.
    fn uninstall(&self, name: &str) -> Result<Uninstalled, SetupError>;
}

#[cfg(windows)]
impl ServiceManager for crate::service::scm::Scm {
    fn installed(&self, name: &str) -> Result<Option<InstalledService>, SetupError> {
        crate::service::scm::Scm::installed(self, name)
            .map_err(SetupError::of(format!("read service {name}")))
    }

    fn install(&self, spec: &ServiceSpec) -> Result<Installed, SetupError> {
        crate::service::scm::Scm::install(self, spec)
            .map_err(SetupError::of(format!("install service {}", spec.name)))
    }

    fn uninstall(&self, name: &str) -> Result<Uninstalled, SetupError> {
        crate::service::scm::Scm::uninstall(self, name)
            .map_err(SetupError::of(format!("uninstall service {name}")))
    }
}

/// Whether a Windows optional feature is there (`Win32_OptionalFeature.InstallState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeatureState {
    /// Enabled (`InstallState` 1).
    Enabled,
    /// Known but not enabled (disabled, absent, unknown).
    NotEnabled,
    /// The system does not know the feature.
    Unknown,
}

/// The Windows optional features. Every call blocks.
pub trait Features {
    /// The state of the feature called `name` (`Microsoft-Hyper-V`, `Containers`).
    fn state(&self, name: &str) -> Result<FeatureState, SetupError>;
}

#[cfg(windows)]
impl Features for winos::features::WmiFeatures {
    fn state(&self, name: &str) -> Result<FeatureState, SetupError> {
        let state = winos::features::WmiFeatures::install_state(self, name)
            .map_err(SetupError::of(format!("read Windows feature {name}")))?;
        Ok(match state {
            None => FeatureState::Unknown,
            Some(winos::features::INSTALL_STATE_ENABLED) => FeatureState::Enabled,
            Some(_) => FeatureState::NotEnabled,
        })
    }
}
