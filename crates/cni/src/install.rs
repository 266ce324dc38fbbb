//! Installing the plugin and its conflist into a node's CNI directories: each file is written to
//! a temporary name in the target directory and renamed over the target, and a target whose
//! content is already right is left alone, so reruns are no-ops and readers never see a partial
//! file.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The conflist for Linux nodes (`antrea` + `portmap` + `bandwidth`, cniVersion 1.0.0).
pub const LINUX_CONFLIST: &str = include_str!("../../../build/cni/10-antrea.conflist");

/// The conflist for Windows nodes (cniVersion 0.3.0, as Antrea ships it).
pub const WINDOWS_CONFLIST: &str = include_str!("../../../build/cni/windows/10-antrea.conflist");

/// The conflist's file name in the CNI configuration directory.
pub const CONFLIST_NAME: &str = "10-antrea.conflist";

/// The plugin's file name in the CNI binary directory.
pub const PLUGIN_NAME: &str = if cfg!(windows) {
    "antrea.exe"
} else {
    "antrea"
};

/// The conflist for the platform this binary runs on.
pub fn platform_conflist() -> &'static str {
    if cfg!(windows) {
        WINDOWS_CONFLIST
    } else {
        LINUX_CONFLIST
    }
}

/// What to install where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallPlan {
    /// The plugin binary to copy (normally the running executable).
    pub plugin: PathBuf,
    /// The CNI binary directory (`/opt/cni/bin`, `C:\opt\cni\bin`).
    pub cni_bin_dir: PathBuf,
    /// The CNI configuration directory (`/etc/cni/net.d`, `C:\etc\cni\net.d`).
    pub cni_conf_dir: PathBuf,
    /// The conflist content.
    pub conflist: String,
}

/// Why installing failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// Reading or writing a file failed.
    #[error("install {path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The failure.
        source: io::Error,
    },
    /// The conflist is not valid JSON.
    #[error("conflist is not valid JSON: {0}")]
    Conflist(serde_json::Error),
    /// A command-line argument is missing or unknown.
    #[error("usage: antrea install --cni-bin-dir DIR --cni-conf-dir DIR [--conflist FILE]: {0}")]
    Usage(String),
}

/// Which files an install changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The plugin's path and whether it was (re)written.
    pub plugin: (PathBuf, bool),
    /// The conflist's path and whether it was (re)written.
    pub conflist: (PathBuf, bool),
}

impl InstallPlan {
    /// Parses `install` arguments (after the word `install`); the plugin is `current_exe`.
    pub fn from_args(args: &[String], current_exe: PathBuf) -> Result<InstallPlan, InstallError> {
        let (mut bin, mut conf, mut conflist) = (None, None, None);
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let slot = match flag.as_str() {
                "--cni-bin-dir" => &mut bin,
                "--cni-conf-dir" => &mut conf,
                "--conflist" => &mut conflist,
                other => return Err(InstallError::Usage(format!("unknown argument {other:?}"))),
            };
            let value = it
                .next()
                .ok_or_else(|| InstallError::Usage(format!("{flag} needs a value")))?;
            *slot = Some(PathBuf::from(value));
        }
        let conflist = match conflist {
            None => platform_conflist().to_owned(),
            Some(path) => {
                fs::read_to_string(&path).map_err(|source| InstallError::Io { path, source })?
            }
        };
        Ok(InstallPlan {
            plugin: current_exe,
            cni_bin_dir: bin
                .ok_or_else(|| InstallError::Usage("--cni-bin-dir is required".into()))?,
            cni_conf_dir: conf
                .ok_or_else(|| InstallError::Usage("--cni-conf-dir is required".into()))?,
            conflist,
        })
    }

    /// Copies the plugin and writes the conflist.
    pub fn install(&self) -> Result<Installed, InstallError> {
        serde_json::from_str::<serde_json::Value>(&self.conflist)
            .map_err(InstallError::Conflist)?;
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| InstallError::Io { path, source }
        };
        let binary = fs::read(&self.plugin).map_err(io(&self.plugin))?;
        let plugin_path = self.cni_bin_dir.join(PLUGIN_NAME);
        let plugin_written =
            write_if_changed(&plugin_path, &binary, true).map_err(io(&plugin_path))?;
        let conf_path = self.cni_conf_dir.join(CONFLIST_NAME);
        let conf_written = write_if_changed(&conf_path, self.conflist.as_bytes(), false)
            .map_err(io(&conf_path))?;
        Ok(Installed {
            plugin: (plugin_path, plugin_written),
            conflist: (conf_path, conf_written),
        })
    }
}

/// Writes `content` to `path` through a temporary file and a rename, unless `path` already holds
/// exactly `content`. Returns whether it wrote.
fn write_if_changed(path: &Path, content: &[u8], executable: bool) -> io::Result<bool> {
    if fs::read(path).is_ok_and(|old| old == content) {
        return Ok(false);
    }
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no parent directory"))?;
    fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let written = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(content)?;
        f.sync_all()?;
        drop(f);
        set_mode(&tmp, executable)?;
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written.map(|()| true)
}

#[cfg(unix)]
fn set_mode(path: &Path, executable: bool) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(
        path,
        fs::Permissions::from_mode(if executable { 0o755 } else { 0o644 }),
    )
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _executable: bool) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_conflists_have_the_antrea_keys() {
        for (text, version) in [(LINUX_CONFLIST, "1.0.0"), (WINDOWS_CONFLIST, "0.3.0")] {
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(v["cniVersion"], version);
            assert_eq!(v["name"], "antrea");
            assert_eq!(v["plugins"][0]["type"], "antrea");
            assert_eq!(v["plugins"][0]["ipam"]["type"], "host-local");
            assert_eq!(v["plugins"][0]["capabilities"]["dns"], true);
        }
    }

    #[test]
    fn installs_atomically_and_idempotently() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("src-antrea");
        fs::write(&exe, b"plugin v1").unwrap();
        let args: Vec<String> = ["--cni-bin-dir", "bin", "--cni-conf-dir", "net.d"]
            .iter()
            .map(|a| {
                if a.starts_with("--") {
                    (*a).to_owned()
                } else {
                    dir.path().join(a).display().to_string()
                }
            })
            .collect();
        let plan = InstallPlan::from_args(&args, exe.clone()).unwrap();
        let first = plan.install().unwrap();
        assert!(first.plugin.1 && first.conflist.1);
        assert_eq!(fs::read(&first.plugin.0).unwrap(), b"plugin v1");
        assert_eq!(
            fs::read_to_string(&first.conflist.0).unwrap(),
            platform_conflist()
        );
        let again = plan.install().unwrap();
        assert!(
            !again.plugin.1 && !again.conflist.1,
            "second install rewrote files"
        );
        fs::write(&exe, b"plugin v2").unwrap();
        let upgrade = plan.install().unwrap();
        assert!(upgrade.plugin.1 && !upgrade.conflist.1);
        assert_eq!(fs::read(&upgrade.plugin.0).unwrap(), b"plugin v2");
        let leftovers: Vec<_> = fs::read_dir(dir.path().join("bin"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, [std::ffi::OsString::from(PLUGIN_NAME)]);
    }

    #[test]
    fn rejects_bad_arguments_and_conflists() {
        let exe = PathBuf::from("/x");
        assert!(matches!(
            InstallPlan::from_args(&["--cni-bin-dir".into()], exe.clone()),
            Err(InstallError::Usage(_))
        ));
        assert!(matches!(
            InstallPlan::from_args(&["--bogus".into(), "x".into()], exe.clone()),
            Err(InstallError::Usage(_))
        ));
        let plan = InstallPlan {
            plugin: exe,
            cni_bin_dir: "/b".into(),
            cni_conf_dir: "/c".into(),
            conflist: "{".into(),
        };
        assert!(matches!(plan.install(), Err(InstallError::Conflist(_))));
    }
}
