//! What the agent knows about itself, for `/v1/featuregates`, `/v1/version` and the support
//! bundle: its configuration (and the file it came from), its log file, its version.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::{AgentConfig, Feature};

/// The agent's own facts, set once at start.
#[derive(Debug, Clone)]
pub struct AgentFacts {
    /// The configuration in force.
    pub config: AgentConfig,
    /// The file it was read from.
    pub config_path: PathBuf,
    /// The log file (`--log-file`), when the agent writes one.
    pub log_file: Option<PathBuf>,
}

/// One feature gate as configured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureGateReport {
    pub name: String,
    /// Whether it is on.
    pub enabled: bool,
    /// Antrea's default on this platform.
    pub default: bool,
    /// Whether the configuration sets it.
    pub configured: bool,
}

impl AgentFacts {
    /// Every gate Antrea defines, in name order, as the configuration sets it.
    pub fn feature_gates(&self) -> Vec<FeatureGateReport> {
        let gates = &self.config.feature_gates;
        let explicit: Vec<Feature> = gates.explicit().map(|(f, _)| f).collect();
        let mut reports: Vec<FeatureGateReport> = Feature::all()
            .map(|feature| FeatureGateReport {
                name: feature.name().to_owned(),
                enabled: gates.enabled(feature),
                default: feature.default_on(self.config.platform),
                configured: explicit.contains(&feature),
            })
            .collect();
        reports.sort_by(|a, b| a.name.cmp(&b.name));
        reports
    }
}

/// A build's version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionReport {
    /// The crate version.
    pub version: String,
    /// The git commit, when the build was given one (`ANTREA_GIT_COMMIT` at build time).
    pub git_commit: Option<String>,
}

impl VersionReport {
    /// This build's version and commit ([`buildinfo`], shared by every binary's `--version`).
    pub fn this_build() -> VersionReport {
        let build = buildinfo::this_build();
        VersionReport {
            version: build.version.to_owned(),
            git_commit: build.git_commit.map(str::to_owned),
        }
    }
}

impl std::fmt::Display for VersionReport {
    /// As `--version` prints it: `0.1.0 (commit …)` or `0.1.0 (commit unknown)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        buildinfo::Described {
            version: &self.version,
            git_commit: self.git_commit.as_deref(),
        }
        .fmt(f)
    }
}
