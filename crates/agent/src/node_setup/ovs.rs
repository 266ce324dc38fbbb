//! `install-ovs`: the Open vSwitch services as Antrea's Install-OVS.ps1 registers them (no
//! download or driver install: the OVS files are already in the install directory), the run
//! and log directories they need, and the OVS database, created from the shipped schema when
//! missing.
//!
//! - `ovsdb-server`: `<ovs>\usr\sbin\ovsdb-server.exe <ovs>\etc\openvswitch\conf.db -vfile:info
//!   --remote=punix:db.sock --remote=ptcp:6640:127.0.0.1
//!   --log-file=<ovs>\var\log\openvswitch\ovsdb-server.log --pidfile --service`;
//! - `ovs-vswitchd`, after `ovsdb-server`: `<ovs>\usr\sbin\ovs-vswitchd.exe --pidfile
//!   -vfile:info --log-file=<ovs>\var\log\openvswitch\ovs-vswitchd.log --service`;
//!
//! both started at boot and restarted at once on failure, three times
//! ([`FailureActions::restart_at_once`]).

use std::ffi::OsString;
use std::path::PathBuf;

use super::host::{ServiceManager, SetupError};
use super::report::Report;
use super::{HostFiles, NodePaths, ovsdb_file};
use crate::service::{Difference, FailureActions, Installed, OVS_SERVICES, ServiceSpec, StartType};

/// The `ovsdb-server` service.
pub fn ovsdb_server(paths: &NodePaths) -> ServiceSpec {
    let [name, _] = OVS_SERVICES;
    ovs_service(
        name,
        "Open vSwitch DB Service",
        "The Open vSwitch database server (ovsdb-server)",
        paths,
        vec![
            paths.ovs_db().into(),
            "-vfile:info".into(),
            "--remote=punix:db.sock".into(),
            "--remote=ptcp:6640:127.0.0.1".into(),
            format!("--log-file={}", paths.ovs_log(name)).into(),
            "--pidfile".into(),
            "--service".into(),
        ],
        Vec::new(),
    )
}

/// The `ovs-vswitchd` service, which needs `ovsdb-server`.
pub fn ovs_vswitchd(paths: &NodePaths) -> ServiceSpec {
    let [db, name] = OVS_SERVICES;
    ovs_service(
        name,
        "Open vSwitch Service",
        "The Open vSwitch switch daemon (ovs-vswitchd)",
        paths,
        vec![
            "--pidfile".into(),
            "-vfile:info".into(),
            format!("--log-file={}", paths.ovs_log(name)).into(),
            "--service".into(),
        ],
        vec![db.to_owned()],
    )
}

fn ovs_service(
    name: &str,
    display_name: &str,
    description: &str,
    paths: &NodePaths,
    arguments: Vec<OsString>,
    dependencies: Vec<String>,
) -> ServiceSpec {
    ServiceSpec {
        name: name.to_owned(),
        display_name: display_name.to_owned(),
        description: description.to_owned(),
        program: PathBuf::from(paths.ovs_program(name)),
        arguments,
        start: StartType::Auto,
        dependencies,
        failure_actions: FailureActions::restart_at_once(),
    }
}

/// Both services, in the order they are created (`ovsdb-server` first).
pub fn services(paths: &NodePaths) -> [ServiceSpec; 2] {
    [ovsdb_server(paths), ovs_vswitchd(paths)]
}

/// `install-ovs`: the run and log directories and the OVS database when missing, then both
/// services.
pub fn install_ovs(
    services: &dyn ServiceManager,
    files: &HostFiles,
    paths: &NodePaths,
    report: &mut Report,
) -> Result<(), SetupError> {
    for dir in [paths.ovs_run_dir(), paths.ovs_log_dir()] {
        if files
            .ensure_dir(&dir)
            .map_err(SetupError::of(format!("create {dir}")))?
        {
            report.changed(format!("created directory {dir}"));
        } else {
            report.unchanged(format!("directory {dir}"));
        }
    }
    ensure_database(files, paths, report)?;
    for spec in self::services(paths) {
        install_service(services, &spec, report)?;
    }
    Ok(())
}

/// Creates the OVS database from the schema when there is no database file.
pub fn ensure_database(
    files: &HostFiles,
    paths: &NodePaths,
    report: &mut Report,
) -> Result<(), SetupError> {
    let db = paths.ovs_db();
    if files
        .read(&db)
        .map_err(SetupError::of("look for the OVS database"))?
        .is_some()
    {
        report.unchanged(format!("OVS database {db}"));
        return Ok(());
    }
    let schema_path = paths.ovs_schema();
    let schema = files
        .read(&schema_path)
        .map_err(SetupError::of("read the OVS schema"))?
        .ok_or_else(|| {
            SetupError::new(
                "create the OVS database",
                format!(
                    "no schema {schema_path}: is Open vSwitch installed in {}?",
                    paths.ovs_dir
                ),
            )
        })?;
    let content = ovsdb_file::create(&schema)
        .map_err(SetupError::of(format!("read the OVS schema {schema_path}")))?;
    files
        .ensure(&db, &content)
        .map_err(SetupError::of("create the OVS database"))?;
    report.changed(format!("created OVS database {db} from {schema_path}"));
    Ok(())
}

/// Installs one service and reports what changed.
pub fn install_service(
    services: &dyn ServiceManager,
    spec: &ServiceSpec,
    report: &mut Report,
) -> Result<(), SetupError> {
    match services.install(spec)? {
        Installed::Created => report.changed(format!("created service {}", spec.name)),
        Installed::Updated(differences) => report.changed(format!(
            "updated service {}: {}",
            spec.name,
            differences
                .iter()
                .map(Difference::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        )),
        Installed::Unchanged => report.unchanged(format!("service {}", spec.name)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::service::FailureAction;

    #[test]
    fn golden_command_lines_dependencies_and_failure_actions() {
        let [db, switch] = services(&NodePaths::default());
        assert_eq!(db.name, "ovsdb-server");
        assert_eq!(
            db.command_line().join(" "),
            r"C:\openvswitch\usr\sbin\ovsdb-server.exe C:\openvswitch\etc\openvswitch\conf.db -vfile:info --remote=punix:db.sock --remote=ptcp:6640:127.0.0.1 --log-file=C:\openvswitch\var\log\openvswitch\ovsdb-server.log --pidfile --service"
        );
        assert!(db.dependencies.is_empty());
        assert_eq!(switch.name, "ovs-vswitchd");
        assert_eq!(
            switch.command_line().join(" "),
            r"C:\openvswitch\usr\sbin\ovs-vswitchd.exe --pidfile -vfile:info --log-file=C:\openvswitch\var\log\openvswitch\ovs-vswitchd.log --service"
        );
        assert_eq!(switch.dependencies, ["ovsdb-server"]);
        for spec in [&db, &switch] {
            assert_eq!(spec.start, StartType::Auto);
            assert_eq!(
                spec.failure_actions.to_string(),
                "reset= 0 actions= restart/0/restart/0/restart/0"
            );
            assert_eq!(
                spec.failure_actions.actions,
                [FailureAction::Restart(Duration::ZERO); 3]
            );
        }
    }
}
