//! What can go wrong loading `antrea-agent.conf`, and what is only worth a warning.

use std::fmt;
use std::path::PathBuf;

/// Why a configuration was rejected. Every variant names the key (as a dotted path such as
/// `antreaProxy.enable`) so an operator can find the line to fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The configuration file could not be read.
    #[error("cannot read agent configuration {path}: {source}")]
    Read {
        /// The file that was opened.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The text is not valid YAML.
    #[error("agent configuration is not valid YAML: {message}")]
    Yaml {
        /// The YAML parser's description, with line and column.
        message: String,
    },
    /// A key holds a value of the wrong YAML type.
    #[error("{key}: expected {expected}, found {found}")]
    WrongType {
        /// The key's dotted path (`""` names the document itself).
        key: String,
        /// The type the key takes.
        expected: &'static str,
        /// The type that was there.
        found: &'static str,
    },
    /// A key holds a value outside the allowed set.
    #[error("{key}: {value} is not {allowed}")]
    InvalidValue {
        /// The key's dotted path.
        key: String,
        /// The rejected value, as written (strings quoted).
        value: String,
        /// What the key accepts (`one of a, b`, `a CIDR such as ...`).
        allowed: String,
    },
    /// A value Antrea accepts but antrea-rs does not implement (or not on this platform).
    #[error("{key}: {value} is not supported: {reason}")]
    NotSupported {
        /// The key's dotted path.
        key: String,
        /// The rejected value, as written (strings quoted).
        value: String,
        /// Why, and what to use instead.
        reason: String,
    },
    /// Two keys whose values cannot be combined.
    #[error("{key}: {message}")]
    Conflict {
        /// The key whose value is not allowed given the others.
        key: String,
        /// What it conflicts with.
        message: String,
    },
    /// The Node's name could not be found.
    #[error("cannot determine the Node name: NODE_NAME is not set and the host name is unknown")]
    NodeNameUnknown,
}

/// A problem that does not stop the agent: the key is ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigWarning {
    /// A key neither Antrea nor antrea-rs knows (a typo, most likely).
    UnknownKey {
        /// The key's dotted path.
        key: String,
    },
    /// An Antrea key that antrea-rs does not implement, set to a value that would have an effect
    /// in Antrea.
    NotImplemented {
        /// The key's dotted path.
        key: String,
    },
    /// A feature gate name that Antrea does not define.
    UnknownFeatureGate {
        /// The gate's name as written.
        name: String,
    },
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigWarning::UnknownKey { key } => write!(f, "{key}: unknown key, ignored"),
            ConfigWarning::NotImplemented { key } => {
                write!(
                    f,
                    "{key}: Antrea option not implemented by antrea-rs, ignored"
                )
            }
            ConfigWarning::UnknownFeatureGate { name } => {
                write!(f, "featureGates.{name}: unknown feature gate, ignored")
            }
        }
    }
}
