//! What a build says about itself, the one source of every binary's `--version` (`antrea-agent`,
//! `antctl`, `antrea`, `antrea-controller`) and of the agent's `/v1/version`: the workspace
//! version and the git commit, which the builder passes as `ANTREA_GIT_COMMIT` at build time
//! (`scripts/release.sh` and `scripts/test.sh` pass `git rev-parse HEAD`). A build without it
//! says `commit unknown`; no commit is ever guessed.

use std::fmt;
use std::sync::OnceLock;

/// The workspace version (`[workspace.package] version`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The git commit given at build time, if any (`ANTREA_GIT_COMMIT`; empty counts as none).
pub const GIT_COMMIT: Option<&str> = match option_env!("ANTREA_GIT_COMMIT") {
    Some(commit) if !commit.is_empty() => Some(commit),
    _ => None,
};

/// A version and the commit it was built from, as every binary prints them:
/// `0.1.0 (commit 55601f9…)` or `0.1.0 (commit unknown)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Described<'a> {
    pub version: &'a str,
    pub git_commit: Option<&'a str>,
}

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.git_commit {
            Some(commit) => write!(f, "{} (commit {commit})", self.version),
            None => write!(f, "{} (commit unknown)", self.version),
        }
    }
}

/// This build's version and commit.
pub fn this_build() -> Described<'static> {
    Described {
        version: VERSION,
        git_commit: GIT_COMMIT,
    }
}

/// This build's `Described` text, for clap's `#[command(version = buildinfo::version())]`
/// (clap prints it after the binary's name: `antrea-agent 0.1.0 (commit …)`).
pub fn version() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| this_build().to_string())
}

/// `<name> <version> (commit …)`, the `--version` line of a binary that does not use clap.
pub fn version_line(name: &str) -> String {
    format!("{name} {}", version())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_commit_or_says_it_is_unknown() {
        let with = Described {
            version: "1.2.3",
            git_commit: Some("0123abcd"),
        };
        assert_eq!(with.to_string(), "1.2.3 (commit 0123abcd)");
        let without = Described {
            version: "1.2.3",
            git_commit: None,
        };
        assert_eq!(without.to_string(), "1.2.3 (commit unknown)");
    }

    #[test]
    fn this_build_is_the_workspace_version_and_the_given_commit() {
        let build = this_build();
        assert_eq!(build.version, env!("CARGO_PKG_VERSION"));
        assert_eq!(version_line("antctl"), format!("antctl {build}"));
    }
}
