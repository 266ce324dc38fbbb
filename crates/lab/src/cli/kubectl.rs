//! `antrea-lab kubectl …`: runs kubectl against the lab's fake API server with the lab's
//! kubeconfig, from the API server's own namespace (`lab-api`, on the LAN), since the server
//! listens on the lab's LAN address, which the host's namespace does not reach.

use std::ffi::OsStr;
use std::process::{Command, ExitCode};

use crate::error::{LabError, Result};
use crate::host::command::{describe, in_netns};
use crate::layout::Layout;
use crate::plan::{API_NETNS, ClusterApi};

/// The kubectl command line for `args` in a lab whose agents read the cluster from `api` (it
/// must be the fake API server).
pub fn command(
    layout: &Layout,
    api: ClusterApi,
    kubectl: &OsStr,
    args: &[String],
) -> Result<Command> {
    if api != ClusterApi::Fake {
        return Err(LabError::Options(format!(
            "this lab reads its cluster from the {api} (`up --api {api}`, or `--wiring normal`): it has no API server; `antrea-lab kubectl` needs a lab with the fake API server (`up`, or `up --api fake`)"
        )));
    }
    let mut cmd = in_netns(API_NETNS, kubectl);
    cmd.arg("--kubeconfig")
        .arg(layout.api_kubeconfig())
        .args(args);
    Ok(cmd)
}

/// Runs kubectl with the terminal's standard streams; its exit status is the command's.
pub fn run(mut cmd: Command) -> Result<ExitCode> {
    let status = cmd.status().map_err(|source| LabError::Spawn {
        program: describe(&cmd),
        source,
    })?;
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn layout() -> Layout {
        Layout::new(PathBuf::from("/run/antrea-lab"))
    }

    #[test]
    fn kubectl_runs_in_the_api_namespace_with_the_lab_kubeconfig() {
        let args = [
            "get".to_owned(),
            "pods".to_owned(),
            "-o".to_owned(),
            "wide".to_owned(),
        ];
        let cmd = command(&layout(), ClusterApi::Fake, OsStr::new("kubectl"), &args).unwrap();
        assert_eq!(
            describe(&cmd),
            "ip netns exec lab-api kubectl --kubeconfig /run/antrea-lab/api/kubeconfig get pods -o wide"
        );
    }

    #[test]
    fn every_argument_after_kubectl_goes_to_kubectl() {
        use crate::cli::{Cli, Cmd};
        use clap::Parser;
        let cli = Cli::try_parse_from([
            "antrea-lab",
            "--state-dir",
            "/tmp/lab",
            "kubectl",
            "-n",
            "kube-node-lease",
            "get",
            "leases",
            "-o",
            "wide",
        ])
        .unwrap();
        let Cmd::Kubectl { kubectl_bin, args } = cli.command else {
            panic!("not the kubectl command: {:?}", cli.command);
        };
        assert_eq!(kubectl_bin, PathBuf::from("kubectl"));
        assert_eq!(
            args,
            ["-n", "kube-node-lease", "get", "leases", "-o", "wide"]
        );
        assert_eq!(cli.state_dir, PathBuf::from("/tmp/lab"));
    }

    #[test]
    fn a_directory_lab_has_no_server_for_kubectl() {
        let error =
            command(&layout(), ClusterApi::Directory, OsStr::new("kubectl"), &[]).unwrap_err();
        assert!(error.to_string().contains("--api fake"), "{error}");
    }
}
