//! A Node's private Open vSwitch: `ovsdb-server` and `ovs-vswitchd` (userspace datapath) run
//! inside the Node's namespace (one `ovs-vswitchd` per namespace: each creates the `ovs-netdev`
//! tap), with run, database, log and sysconf directories under the state directory, detached,
//! with pidfiles there. `OVS_RUNDIR` points at the run directory, so bridge management sockets
//! (`br-int.mgmt`) appear there for the agent.

use std::fs;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use super::command::{in_netns, run, run_stdin, wait_until};
use crate::error::{LabError, Result};
use crate::layout::Layout;

const SCHEMA: &str = "/usr/share/openvswitch/vswitch.ovsschema";

/// One Node's OVS.
#[derive(Debug, Clone)]
pub struct NodeOvs {
    netns: String,
    run: PathBuf,
    db: PathBuf,
    log: PathBuf,
    etc: PathBuf,
}

impl NodeOvs {
    /// The OVS of `node` (its namespace has the same name).
    pub fn new(layout: &Layout, node: &str) -> NodeOvs {
        NodeOvs {
            netns: node.to_owned(),
            run: layout.ovs_run_dir(node),
            db: layout.ovs_db_dir(node),
            log: layout.log_dir(node),
            etc: layout.ovs_etc_dir(node),
        }
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = in_netns(&self.netns, program);
        cmd.env("OVS_RUNDIR", &self.run)
            .env("OVS_DBDIR", &self.db)
            .env("OVS_LOGDIR", &self.log)
            .env("OVS_SYSCONFDIR", &self.etc)
            .env("OVS_PKGDATADIR", "/usr/share/openvswitch");
        cmd
    }

    /// The OVSDB socket path.
    pub fn db_socket(&self) -> PathBuf {
        self.run.join("db.sock")
    }

    /// `unix:<run>/<bridge>.mgmt` for `ovs-ofctl`.
    pub fn mgmt(&self, bridge: &str) -> String {
        format!("unix:{}", self.run.join(format!("{bridge}.mgmt")).display())
    }

    /// Creates the database and starts both daemons; returns when `ovs-vswitchd` answers.
    pub fn start(&self) -> Result<()> {
        for dir in [&self.run, &self.db, &self.log, &self.etc] {
            fs::create_dir_all(dir).map_err(|source| LabError::File {
                what: "OVS directory",
                path: dir.clone(),
                source,
            })?;
        }
        run(Command::new("ovsdb-tool")
            .arg("create")
            .arg(self.db.join("conf.db"))
            .arg(SCHEMA))?;
        self.start_db()?;
        self.vsctl(&["--no-wait", "init"])?;
        self.vsctl(&[
            "--no-wait",
            "set",
            "Open_vSwitch",
            ".",
            &format!("external_ids:system-id={}", self.netns),
        ])?;
        self.start_vswitchd()
    }

    /// Starts `ovsdb-server` (detached, pidfile in the run directory) on the database the Node
    /// already has; returns once it is detached (it answers from then on).
    pub fn start_db(&self) -> Result<()> {
        let run_dir = self.run.display();
        let log_dir = self.log.display();
        run(self
            .command("ovsdb-server")
            .arg(self.db.join("conf.db"))
            .args([
                format!("--remote=punix:{run_dir}/db.sock"),
                "--remote=db:Open_vSwitch,Open_vSwitch,manager_options".to_owned(),
                format!("--pidfile={run_dir}/ovsdb-server.pid"),
                format!("--unixctl={run_dir}/ovsdb-server.ctl"),
                format!("--log-file={log_dir}/ovsdb-server.log"),
                "-vconsole:off".to_owned(),
                "--detach".to_owned(),
            ]))?;
        Ok(())
    }

    /// The `ovsdb-server` pidfile.
    pub fn db_pidfile(&self) -> PathBuf {
        self.run.join("ovsdb-server.pid")
    }

    /// Starts `ovs-vswitchd` (detached, pidfile in the run directory); returns when its control
    /// socket exists.
    pub fn start_vswitchd(&self) -> Result<()> {
        let run_dir = self.run.display();
        let log_dir = self.log.display();
        let ctl = self.run.join("ovs-vswitchd.ctl");
        run(self.command("ovs-vswitchd").args([
            format!("unix:{run_dir}/db.sock"),
            format!("--pidfile={run_dir}/ovs-vswitchd.pid"),
            format!("--unixctl={ctl}", ctl = ctl.display()),
            format!("--log-file={log_dir}/ovs-vswitchd.log"),
            "-vconsole:off".to_owned(),
            "--detach".to_owned(),
        ]))?;
        wait_until(
            &format!("ovs-vswitchd control socket {}", ctl.display()),
            Duration::from_secs(10),
            || ctl.exists(),
        )
    }

    /// The `ovs-vswitchd` pidfile.
    pub fn vswitchd_pidfile(&self) -> PathBuf {
        self.run.join("ovs-vswitchd.pid")
    }

    /// The flows of `bridge` without statistics, sorted (`ovs-ofctl --no-stats dump-flows`);
    /// an error while `ovs-vswitchd` is not answering.
    pub fn flows(&self, bridge: &str) -> Result<Vec<String>> {
        let out = run(Command::new("ovs-ofctl").args([
            "-O",
            "OpenFlow15",
            "--no-stats",
            "dump-flows",
            &self.mgmt(bridge),
        ]))?;
        let mut flows: Vec<String> = out
            .lines()
            .map(str::trim)
            .filter(|l| {
                !l.is_empty() && !l.starts_with("OFPST_FLOW") && !l.starts_with("NXST_FLOW")
            })
            .map(str::to_owned)
            .collect();
        flows.sort();
        Ok(flows)
    }

    /// How many flows `bridge` holds (`ovs-ofctl dump-aggregate`); an error while
    /// `ovs-vswitchd` is not answering.
    pub fn flow_count(&self, bridge: &str) -> Result<u64> {
        let mgmt = self.mgmt(bridge);
        let out =
            run(Command::new("ovs-ofctl").args(["-O", "OpenFlow15", "dump-aggregate", &mgmt]))?;
        aggregate_flow_count(&out).ok_or_else(|| LabError::Output {
            tool: "ovs-ofctl dump-aggregate",
            message: format!("no flow_count in {:?}", out.trim()),
        })
    }

    /// Every interface's name and OpenFlow port (`name,ofport` lines, sorted).
    pub fn interfaces(&self) -> Result<Vec<String>> {
        let out = self.vsctl(&[
            "--no-wait",
            "--format=csv",
            "--no-headings",
            "--columns=name,ofport",
            "list",
            "Interface",
        ])?;
        let mut lines: Vec<String> = out.lines().map(str::to_owned).collect();
        lines.sort();
        Ok(lines)
    }

    /// `ovs-vsctl --timeout=20 --db=unix:<db.sock> args…`.
    pub fn vsctl(&self, args: &[&str]) -> Result<String> {
        let db = format!("--db=unix:{}", self.db_socket().display());
        run(Command::new("ovs-vsctl")
            .args(["--timeout=20", &db])
            .args(args))
    }

    /// `ovs-ofctl add-flows <bridge> -` with `flows` on stdin.
    pub fn add_flows(&self, bridge: &str, flows: &str) -> Result<()> {
        let mut cmd = Command::new("ovs-ofctl");
        cmd.args(["-O", "OpenFlow13", "add-flows", &self.mgmt(bridge), "-"]);
        run_stdin(&mut cmd, flows.as_bytes(), Duration::from_secs(20)).map(drop)
    }
}

/// The `flow_count=` of an `ovs-ofctl dump-aggregate` reply.
fn aggregate_flow_count(reply: &str) -> Option<u64> {
    reply
        .split_whitespace()
        .find_map(|word| word.strip_prefix("flow_count="))
        .and_then(|count| count.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flow_count_comes_from_the_aggregate_reply() {
        let reply = "OFPST_AGGREGATE reply (OF1.5) (xid=0x2): packet_count=12 byte_count=840 flow_count=50982\n";
        assert_eq!(aggregate_flow_count(reply), Some(50_982));
        assert_eq!(aggregate_flow_count("flow_count=0"), Some(0));
        for garbage in [
            "",
            "OFPST_AGGREGATE reply",
            "flow_count=",
            "flow_count=-1",
            "flow_count=many",
        ] {
            assert_eq!(aggregate_flow_count(garbage), None, "{garbage:?}");
        }
    }
}
