//! The generic client against a real ovsdb-server: every RPC method and transaction operation,
//! server errors, monitors fed by ovs-vsctl, TCP, keepalive and reconnection. Results are
//! cross-checked with ovs-vsctl / ovsdb-client.

#![cfg(target_os = "linux")]

mod common;

use std::time::Duration;

use common::*;
use localipc::Endpoint;
use ovsdb::data::{Row, Value};
use ovsdb::monitor::{MonitorEvent, MonitorRequest, RowUpdate, RowUpdate2, Updates};
use ovsdb::schema::{AtomicType, DatabaseSchema};
use ovsdb::txn::{Condition, Mutation, Mutator, OperationResult, Transaction, WaitUntil};
use ovsdb::{Client, ConnectionState, DisconnectReason, Error, LockEvent};
use serde_json::json;

const DB: &str = "Open_vSwitch";

/// A transaction inserting bridge `name` and linking it from the root row.
fn add_bridge_txn(name: &str) -> (Transaction, ovsdb::txn::OpIndex) {
    let mut t = Transaction::new(DB);
    let (op, br) = t.insert_named(
        "Bridge",
        Row::new()
            .with("name", name)
            .with("protocols", Value::set(["OpenFlow13"])),
    );
    t.mutate(
        "Open_vSwitch",
        vec![],
        vec![Mutation::new(
            "bridges",
            Mutator::Insert,
            Value::Set(vec![br]),
        )],
    );
    (t, op)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_dbs_matches_ovsdb_client() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    let mut ours = client.list_dbs().await.unwrap();
    let mut theirs: Vec<String> = ovsdb_client(&ovs, &["list-dbs", "{db}"])
        .lines()
        .map(str::to_owned)
        .collect();
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs);
    assert!(ours.contains(&DB.to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_schema_matches_ovsdb_client_and_is_typed() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    let schema = client.get_schema(DB).await.unwrap();
    let oracle: serde_json::Value =
        serde_json::from_str(&ovsdb_client(&ovs, &["get-schema", "{db}", DB])).unwrap();
    assert_eq!(schema, DatabaseSchema::parse(&oracle).unwrap());
    assert_eq!(
        schema.version,
        ovsdb_client(&ovs, &["get-schema-version", "{db}", DB]).trim()
    );
    let listing = ovsdb_client(&ovs, &["list-tables", "{db}", DB]);
    let mut tables: Vec<&str> = listing.lines().skip(2).map(str::trim).collect();
    tables.sort();
    assert_eq!(
        schema.tables.keys().map(String::as_str).collect::<Vec<_>>(),
        tables
    );
    let bridge = schema.table("Bridge").unwrap();
    assert_eq!(
        bridge.columns["name"].column_type.key.atomic,
        AtomicType::String
    );
    assert_eq!(
        bridge.columns["ports"].column_type.key.ref_table.as_deref(),
        Some("Port")
    );
    assert_eq!(bridge.columns["ports"].column_type.max, None);
    assert!(schema.table("Open_vSwitch").unwrap().is_root);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_database_is_a_server_error() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    match client.get_schema("Nope").await {
        Err(Error::Rpc { method, error, .. }) => assert_eq!(
            (method.as_str(), error.as_str()),
            ("get_schema", "unknown database")
        ),
        other => panic!("expected an RPC error, got {other:?}"),
    }
    let mut t = Transaction::new("Nope");
    t.comment("x");
    assert!(
        matches!(client.transact(&t).await, Err(Error::Rpc { error, .. }) if error == "unknown database")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_returns_params() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    let params = vec![json!("a"), json!({"b": [1, 2.5, null]})];
    assert_eq!(client.echo(params.clone()).await.unwrap(), params);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insert_with_named_uuid_then_select_update_mutate() {
    let ovs = start_db();
    let client = connect(&ovs).await;

    let (t, insert) = add_bridge_txn("br0");
    let out = client.transact(&t).await.unwrap();
    let uuid = out.inserted(insert).unwrap();
    assert_eq!(out.count(ovsdb::txn::OpIndex(1)), Some(1));
    assert_eq!(vsctl_nowait(&ovs, &["list-br"]).trim(), "br0");
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Bridge", "br0", "_uuid"]).trim(),
        uuid.to_string()
    );

    let mut t = Transaction::new(DB);
    let sel = t.select(
        "Bridge",
        vec![Condition::eq("_uuid", uuid)],
        Some(&["name", "protocols"]),
    );
    let out = client.transact(&t).await.unwrap();
    let rows = out.rows(sel).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].get("name"), Some(&Value::from("br0")));
    assert_eq!(
        rows[0].get("protocols").map(Value::strings),
        Some(vec!["OpenFlow13".to_owned()])
    );

    let mut t = Transaction::new(DB);
    let upd = t.update(
        "Bridge",
        vec![Condition::eq("name", "br0")],
        Row::new().with("external_ids", Value::Map(vec![("k".into(), "v".into())])),
    );
    let mutate = t.mutate(
        "Bridge",
        vec![Condition::eq("name", "br0")],
        vec![Mutation::new(
            "external_ids",
            Mutator::Insert,
            Value::Map(vec![("k2".into(), "v2".into())]),
        )],
    );
    let counter = t.mutate(
        "Open_vSwitch",
        vec![],
        vec![Mutation::new("next_cfg", Mutator::Add, 5i64)],
    );
    let out = client.transact(&t).await.unwrap();
    assert_eq!(
        (out.count(upd), out.count(mutate), out.count(counter)),
        (Some(1), Some(1), Some(1))
    );
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Bridge", "br0", "external_ids:k"]).trim(),
        "v"
    );
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Bridge", "br0", "external_ids:k2"]).trim(),
        "v2"
    );
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Open_vSwitch", ".", "next_cfg"]).trim(),
        "5"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_needs_the_reference_gone_first() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    client.transact(&add_bridge_txn("br0").0).await.unwrap();

    // Deleting a row still referenced by the root row breaks referential integrity.
    let mut t = Transaction::new(DB);
    t.delete("Bridge", vec![Condition::eq("name", "br0")]);
    match client.transact(&t).await {
        Err(Error::Transaction(e)) => {
            assert_eq!(e.error, "referential integrity violation");
            assert_eq!(
                e.index, None,
                "a commit-time failure has no operation index"
            );
            let details = e.details.unwrap_or_default();
            assert!(details.contains("Bridge"), "details: {details}");
        }
        other => panic!("expected referential integrity violation, got {other:?}"),
    }
    assert_eq!(vsctl_nowait(&ovs, &["list-br"]).trim(), "br0");

    let uuid = vsctl_nowait(&ovs, &["get", "Bridge", "br0", "_uuid"])
        .trim()
        .parse::<ovsdb::data::Uuid>()
        .unwrap();
    let mut t = Transaction::new(DB);
    t.mutate(
        "Open_vSwitch",
        vec![],
        vec![Mutation::new(
            "bridges",
            Mutator::Delete,
            Value::set([uuid]),
        )],
    );
    let del = t.delete("Bridge", vec![Condition::eq("_uuid", uuid)]);
    assert_eq!(client.transact(&t).await.unwrap().count(del), Some(1));
    assert_eq!(vsctl_nowait(&ovs, &["list-br"]).trim(), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_index_is_a_constraint_violation_with_details() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    let mut t = Transaction::new(DB);
    let (_, a) = t.insert_named("Bridge", Row::new().with("name", "dup"));
    let (_, b) = t.insert_named("Bridge", Row::new().with("name", "dup"));
    t.mutate(
        "Open_vSwitch",
        vec![],
        vec![Mutation::new(
            "bridges",
            Mutator::Insert,
            Value::Set(vec![a, b]),
        )],
    );
    match client.transact(&t).await {
        Err(Error::Transaction(e)) => {
            assert_eq!(e.error, "constraint violation");
            let details = e.details.unwrap_or_default();
            assert!(
                details.contains("Bridge") && details.contains("dup"),
                "details: {details}"
            );
        }
        other => panic!("expected constraint violation, got {other:?}"),
    }
    assert_eq!(vsctl_nowait(&ovs, &["list-br"]).trim(), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_commit_comment_abort_and_assert() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    client.transact(&add_bridge_txn("br0").0).await.unwrap();

    let mut t = Transaction::new(DB);
    let wait = t.wait(
        "Bridge",
        vec![Condition::eq("name", "br0")],
        &["name"],
        WaitUntil::Equal,
        vec![Row::new().with("name", "br0")],
        Some(0),
    );
    let comment = t.comment("antrea-rs comment marker");
    // Only transactions that change something are written to the log, with their comment.
    t.mutate(
        "Open_vSwitch",
        vec![],
        vec![Mutation::new("next_cfg", Mutator::Add, 1i64)],
    );
    let commit = t.commit(false);
    let out = client.transact(&t).await.unwrap();
    assert_eq!(out.get(wait), Some(&OperationResult::Wait));
    assert_eq!(out.get(comment), Some(&OperationResult::Comment));
    assert_eq!(out.get(commit), Some(&OperationResult::Commit));
    let log = tokio::task::block_in_place(|| std::fs::read(ovs.dir().join("conf.db"))).unwrap();
    assert!(
        String::from_utf8_lossy(&log).contains("antrea-rs comment marker"),
        "comment not in the database log"
    );

    // A wait whose condition does not hold times out, naming the operation.
    let mut t = Transaction::new(DB);
    t.comment("first");
    t.wait(
        "Bridge",
        vec![Condition::eq("name", "br0")],
        &["name"],
        WaitUntil::NotEqual,
        vec![Row::new().with("name", "br0")],
        Some(0),
    );
    match client.transact(&t).await {
        Err(Error::Transaction(e)) => assert_eq!(
            (e.index, e.op, e.error.as_str()),
            (Some(1), Some("wait"), "timed out")
        ),
        other => panic!("expected timed out, got {other:?}"),
    }

    // abort undoes the earlier operations.
    let (mut t, _) = add_bridge_txn("br-aborted");
    let abort = t.abort();
    match client.transact(&t).await {
        Err(Error::Transaction(e)) => {
            assert_eq!((e.index, e.error.as_str()), (Some(abort.0), "aborted"))
        }
        other => panic!("expected aborted, got {other:?}"),
    }
    assert_eq!(vsctl_nowait(&ovs, &["list-br"]).trim(), "br0");

    // assert fails without the lock and passes with it.
    let mut t = Transaction::new(DB);
    t.assert_lock("my_lock");
    let r = client.transact(&t).await;
    assert!(
        matches!(r, Err(Error::Transaction(ref e)) if e.error == "not owner" && e.index == Some(0)),
        "{r:?}"
    );
    assert!(client.lock("my_lock").await.unwrap());
    assert_eq!(
        client.transact(&t).await.unwrap().results,
        vec![OperationResult::Assert]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_abandons_a_blocked_transaction() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    // Blocks until a bridge named "trigger" exists, then would add bridge "late".
    let (mut t, _) = add_bridge_txn("late");
    let blocked = Transaction::new(DB);
    let mut ops = blocked;
    ops.wait(
        "Bridge",
        vec![Condition::eq("name", "trigger")],
        &["name"],
        WaitUntil::NotEqual,
        vec![],
        None,
    );
    for op in t.operations().to_vec() {
        ops.push(op);
    }
    t = ops;
    let in_flight = client.start_transact(t).unwrap();
    // The request is outstanding on the server: an echo sent after it returns first.
    client.echo(vec![]).await.unwrap();
    let id = in_flight.id();
    client.cancel(id).unwrap();
    let outcome = tokio::time::timeout(STEP, in_flight.outcome())
        .await
        .expect("cancel answered");
    assert!(
        matches!(outcome, Err(Error::Canceled { id: i, .. }) if i == id),
        "{outcome:?}"
    );
    // The server dropped the trigger: satisfying the wait now does not run the rest.
    vsctl_nowait(&ovs, &["add-br", "trigger"]);
    assert_eq!(
        client.echo(vec![json!("alive")]).await.unwrap(),
        vec![json!("alive")]
    );
    assert_eq!(vsctl_nowait(&ovs, &["list-br"]).trim(), "trigger");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_steal_unlock_with_notifications() {
    let ovs = start_db();
    let a = connect(&ovs).await;
    let b = connect(&ovs).await;
    let mut b_events = b.lock_events();
    let mut a_events = a.lock_events();
    assert!(a.lock("L").await.unwrap());
    assert!(!b.lock("L").await.unwrap(), "lock is held by a");
    a.unlock("L").await.unwrap();
    let ev = tokio::time::timeout(STEP, b_events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ev, LockEvent::Locked("L".into()));
    assert!(a.steal("L").await.unwrap());
    let ev = tokio::time::timeout(STEP, b_events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ev, LockEvent::Stolen("L".into()));
    let mut t = Transaction::new(DB);
    t.assert_lock("L");
    assert!(matches!(b.transact(&t).await, Err(Error::Transaction(e)) if e.error == "not owner"));
    a.transact(&t).await.unwrap();
    assert!(a_events.try_recv().is_err(), "a got no notification");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monitor_reports_vsctl_insert_modify_delete() {
    let ovs = start_db();
    vsctl_nowait(&ovs, &["add-br", "pre"]);
    let client = connect(&ovs).await;
    let mut mon = client
        .monitor(
            DB,
            [("Bridge", MonitorRequest::columns(&["name", "external_ids"]))],
        )
        .await
        .unwrap();

    let MonitorEvent::Snapshot(Updates::V1(snap)) = next_event(&mut mon).await else {
        panic!("snapshot first")
    };
    let rows: Vec<_> = snap["Bridge"].values().collect();
    assert!(
        matches!(rows.as_slice(), [RowUpdate::Insert(r)] if r.get("name") == Some(&Value::from("pre")))
    );

    vsctl_nowait(&ovs, &["add-br", "br1"]);
    let MonitorEvent::Update(Updates::V1(u)) = next_event(&mut mon).await else {
        panic!("update expected")
    };
    let (uuid, change) = u["Bridge"].iter().next().unwrap();
    assert!(matches!(change, RowUpdate::Insert(r) if r.get("name") == Some(&Value::from("br1"))));
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Bridge", "br1", "_uuid"]).trim(),
        uuid.to_string()
    );

    vsctl_nowait(&ovs, &["set", "Bridge", "br1", "external_ids:x=y"]);
    let MonitorEvent::Update(Updates::V1(u)) = next_event(&mut mon).await else {
        panic!("update expected")
    };
    match &u["Bridge"][uuid] {
        RowUpdate::Modify { old, new } => {
            assert_eq!(old.get("external_ids"), Some(&Value::Map(vec![])));
            assert_eq!(
                new.get("external_ids"),
                Some(&Value::Map(vec![("x".into(), "y".into())]))
            );
        }
        other => panic!("modify expected, got {other:?}"),
    }

    vsctl_nowait(&ovs, &["del-br", "br1"]);
    let MonitorEvent::Update(Updates::V1(u)) = next_event(&mut mon).await else {
        panic!("update expected")
    };
    assert!(
        matches!(&u["Bridge"][uuid], RowUpdate::Delete(r) if r.get("name") == Some(&Value::from("br1")))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monitor_cond_filters_rows_and_reports_update2() {
    let ovs = start_db();
    vsctl_nowait(&ovs, &["add-br", "b1", "--", "add-br", "b2"]);
    let client = connect(&ovs).await;
    let req = MonitorRequest::columns(&["name", "external_ids"])
        .matching(vec![Condition::eq("name", "b1")]);
    let mut mon = client.monitor_cond(DB, [("Bridge", req)]).await.unwrap();
    let MonitorEvent::Snapshot(Updates::V2(snap)) = next_event(&mut mon).await else {
        panic!("snapshot first")
    };
    let rows: Vec<_> = snap["Bridge"].values().collect();
    assert!(
        matches!(rows.as_slice(), [RowUpdate2::Initial(r)] if r.get("name") == Some(&Value::from("b1")))
    );

    // A change to b2 is filtered out; the b1 change after it is the next event.
    vsctl_nowait(&ovs, &["set", "Bridge", "b2", "external_ids:a=1"]);
    vsctl_nowait(&ovs, &["set", "Bridge", "b1", "external_ids:a=2"]);
    let MonitorEvent::Update(Updates::V2(u)) = next_event(&mut mon).await else {
        panic!("update expected")
    };
    let uuid = vsctl_nowait(&ovs, &["get", "Bridge", "b1", "_uuid"])
        .trim()
        .parse()
        .unwrap();
    assert_eq!(
        u["Bridge"][&uuid],
        RowUpdate2::Modify(
            Row::new().with("external_ids", Value::Map(vec![("a".into(), "2".into())]))
        )
    );

    vsctl_nowait(&ovs, &["del-br", "b1"]);
    let MonitorEvent::Update(Updates::V2(u)) = next_event(&mut mon).await else {
        panic!("update expected")
    };
    assert_eq!(u["Bridge"][&uuid], RowUpdate2::Delete);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monitor_cancel_removes_the_monitor_on_the_server() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    let mut mon = client
        .monitor(DB, [("Bridge", MonitorRequest::default())])
        .await
        .unwrap();
    next_event(&mut mon).await;
    let id = mon.id().to_owned();
    mon.cancel().await.unwrap();
    // The server no longer knows the id.
    match client.call("monitor_cancel", vec![json!(id)]).await {
        Err(Error::Rpc { error, .. }) => assert_eq!(error, "unknown monitor"),
        other => panic!("expected unknown monitor, got {other:?}"),
    }
    // And updates for it do not break the connection.
    vsctl_nowait(&ovs, &["add-br", "x"]);
    assert_eq!(client.echo(vec![json!(1)]).await.unwrap(), vec![json!(1)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_transport() {
    let ovs = start_db();
    let port = tokio::task::block_in_place(|| ovs.add_tcp_remote()).unwrap();
    let client = Client::connect(Endpoint::Tcp(format!("127.0.0.1:{port}")), config())
        .await
        .unwrap();
    assert!(client.list_dbs().await.unwrap().contains(&DB.to_owned()));
    client.transact(&add_bridge_txn("tcp-br").0).await.unwrap();
    assert_eq!(vsctl_nowait(&ovs, &["list-br"]).trim(), "tcp-br");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keepalive_echo_keeps_an_idle_connection() {
    let ovs = start_db();
    let cfg = ovsdb::ClientConfig {
        inactivity_probe: Some(Duration::from_millis(50)),
        ..config()
    };
    let client = Client::connect(Endpoint::Unix(ovs.db_socket()), cfg)
        .await
        .unwrap();
    let state = client.connection_state();
    // Many probe intervals of silence: the server answers our echo probes each time.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(
        matches!(
            *state.borrow(),
            ConnectionState::Connected { generation: 1 }
        ),
        "{:?}",
        *state.borrow()
    );
    let log = std::fs::read_to_string(ovs.dir().join("ovsdb-server.log")).unwrap_or_default();
    assert!(
        !log.contains("disconnect"),
        "server saw a disconnect: {log}"
    );
    client.list_dbs().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnects_after_server_restart_and_resends_monitors() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    let mut state = client.connection_state();
    let mut mon = client
        .monitor(DB, [("Bridge", MonitorRequest::columns(&["name"]))])
        .await
        .unwrap();
    assert!(matches!(next_event(&mut mon).await, MonitorEvent::Snapshot(u) if u.is_empty()));

    // A transaction blocked on the server when it dies fails with a typed error.
    let mut t = Transaction::new(DB);
    t.wait(
        "Bridge",
        vec![Condition::eq("name", "never")],
        &["name"],
        WaitUntil::NotEqual,
        vec![],
        None,
    );
    let blocked = client.start_transact(t).unwrap();
    client.echo(vec![]).await.unwrap();

    tokio::task::block_in_place(|| kill_ovsdb(&ovs));
    let outcome = tokio::time::timeout(STEP, blocked.outcome())
        .await
        .expect("in-flight request fails, not hangs");
    assert!(
        matches!(
            outcome,
            Err(Error::Disconnected {
                reason: DisconnectReason::PeerClosed,
                ..
            })
        ),
        "{outcome:?}"
    );
    assert!(matches!(
        next_event(&mut mon).await,
        MonitorEvent::Disconnected(_)
    ));
    assert!(matches!(
        client.list_dbs().await,
        Err(Error::NotConnected { .. })
    ));

    // While the server is down, add a bridge offline so the new snapshot differs.
    tokio::task::block_in_place(|| {
        let db = ovs.dir().join("conf.db");
        let txn = r#"["Open_vSwitch",{"op":"insert","table":"Bridge","row":{"name":"offline"},"uuid-name":"b"},{"op":"mutate","table":"Open_vSwitch","where":[],"mutations":[["bridges","insert",["set",[["named-uuid","b"]]]]]}]"#;
        let out = std::process::Command::new("ovsdb-tool")
            .arg("transact")
            .arg(&db)
            .arg(txn)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        start_ovsdb(&ovs);
    });
    tokio::time::timeout(
        STEP,
        state.wait_for(|s| matches!(s, ConnectionState::Connected { generation: 2 })),
    )
    .await
    .expect("reconnected")
    .unwrap();
    let MonitorEvent::Snapshot(Updates::V1(snap)) = next_event(&mut mon).await else {
        panic!("fresh snapshot after reconnect")
    };
    assert!(
        matches!(snap["Bridge"].values().collect::<Vec<_>>().as_slice(), [RowUpdate::Insert(r)] if r.get("name") == Some(&Value::from("offline")))
    );

    vsctl_nowait(&ovs, &["add-br", "after"]);
    let MonitorEvent::Update(Updates::V1(u)) = next_event(&mut mon).await else {
        panic!("update after reconnect")
    };
    assert!(
        matches!(u["Bridge"].values().next(), Some(RowUpdate::Insert(r)) if r.get("name") == Some(&Value::from("after")))
    );
    assert!(client.list_dbs().await.unwrap().contains(&DB.to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_connect_fails_with_a_typed_error() {
    let dir = std::env::temp_dir().join(format!("ovsdb-missing-{}", std::process::id()));
    let cfg = ovsdb::ClientConfig {
        connect_attempts: 2,
        backoff: Duration::from_millis(10),
        ..config()
    };
    match Client::connect(Endpoint::Unix(dir.join("db.sock")), cfg).await {
        Err(Error::Connect { attempts, .. }) => assert_eq!(attempts, 2),
        other => panic!("expected a connect error, got {:?}", other.map(|_| ())),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn integer_boolean_and_reference_atoms_survive_the_server() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    client.transact(&add_bridge_txn("types").0).await.unwrap();
    let mut t = Transaction::new(DB);
    let (_, ipfix) = t.insert_named(
        "IPFIX",
        Row::new()
            .with("targets", Value::set(["10.0.0.1:4739"]))
            .with("sampling", 7i64),
    );
    t.update(
        "Bridge",
        vec![Condition::eq("name", "types")],
        Row::new().with("ipfix", ipfix).with("stp_enable", true),
    );
    client.transact(&t).await.unwrap();
    let mut t = Transaction::new(DB);
    let sel = t.select(
        "IPFIX",
        vec![Condition::eq("sampling", 7i64)],
        Some(&["_uuid", "sampling", "targets"]),
    );
    let out = client.transact(&t).await.unwrap();
    let rows = out.rows(sel).unwrap();
    assert_eq!(rows[0].get("sampling"), Some(&Value::from(7i64)));
    assert_eq!(
        rows[0].get("targets").map(Value::strings),
        Some(vec!["10.0.0.1:4739".to_owned()])
    );
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Bridge", "types", "stp_enable"]).trim(),
        "true"
    );
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "Bridge", "types", "ipfix"]).trim(),
        rows[0].uuid().unwrap().to_string()
    );
    assert_eq!(
        vsctl_nowait(&ovs, &["get", "IPFIX", ".", "sampling"]).trim(),
        "7"
    );
}

/// A column value with set and map elements in a canonical order, or `None` for a default
/// (empty, zero, false, "") value, which `initial`/`insert` updates leave out.
fn canonical(v: &Value) -> Option<Vec<String>> {
    let mut items: Vec<String> = match v {
        Value::Atom(a) => vec![a.to_json().to_string()],
        Value::Set(atoms) => atoms.iter().map(|a| a.to_json().to_string()).collect(),
        Value::Map(pairs) => pairs
            .iter()
            .map(|(k, v)| format!("{}={}", k.to_json(), v.to_json()))
            .collect(),
    };
    items.sort();
    match items.as_slice() {
        [] => None,
        [one] if one == "\"\"" || one == "0" || one == "false" => None,
        _ => Some(items),
    }
}

fn canonical_table(
    rows: impl IntoIterator<Item = (ovsdb::data::Uuid, Row)>,
) -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, Vec<String>>> {
    rows.into_iter()
        .map(|(uuid, row)| {
            let cols = row
                .0
                .iter()
                .filter(|(c, _)| !c.starts_with('_'))
                .filter_map(|(c, v)| Some((c.clone(), canonical(v)?)))
                .collect();
            (uuid.to_string(), cols)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update2_diffs_keep_a_cache_equal_to_the_table() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    let schema = client.get_schema(DB).await.unwrap();
    let table = schema.table("Bridge").unwrap();
    let columns = [
        "name",
        "protocols",
        "fail_mode",
        "external_ids",
        "flood_vlans",
        "datapath_type",
        "stp_enable",
        "ports",
    ];
    vsctl_nowait(
        &ovs,
        &[
            "add-br",
            "a",
            "--",
            "set",
            "Bridge",
            "a",
            "protocols=OpenFlow13",
            "external_ids:x=1",
        ],
    );
    let mut mon = client
        .monitor_cond(DB, [("Bridge", MonitorRequest::columns(&columns))])
        .await
        .unwrap();
    let mut cache: std::collections::BTreeMap<ovsdb::data::Uuid, Row> = Default::default();
    let changes: &[&[&str]] = &[
        &["add-br", "b"],
        &[
            "set",
            "Bridge",
            "a",
            "protocols=OpenFlow10,OpenFlow13,OpenFlow15",
        ],
        &["set", "Bridge", "a", "protocols=OpenFlow15"],
        &["set", "Bridge", "a", "fail_mode=secure"],
        &["set", "Bridge", "a", "fail_mode=standalone"],
        &["clear", "Bridge", "a", "fail_mode"],
        &["set", "Bridge", "a", "external_ids:x=2", "external_ids:y=3"],
        &["remove", "Bridge", "a", "external_ids", "x"],
        &[
            "set",
            "Bridge",
            "b",
            "flood_vlans=1,2,3",
            "datapath_type=netdev",
            "stp_enable=true",
        ],
        &[
            "set",
            "Bridge",
            "b",
            "flood_vlans=2,4",
            "datapath_type=\"\"",
            "stp_enable=false",
        ],
        &["add-port", "a", "pa"],
        &["del-br", "b"],
    ];
    for step in 0..=changes.len() {
        if let Some(change) = step.checked_sub(1).and_then(|i| changes.get(i)) {
            vsctl_nowait(&ovs, change);
        }
        let (MonitorEvent::Snapshot(Updates::V2(u)) | MonitorEvent::Update(Updates::V2(u))) =
            next_event(&mut mon).await
        else {
            panic!("update2 expected")
        };
        for (uuid, update) in &u["Bridge"] {
            match Row::apply_update2(cache.remove(uuid), update, table) {
                Some(row) => cache.insert(*uuid, row),
                None => None,
            };
        }
        let mut t = Transaction::new(DB);
        let sel = t.select(
            "Bridge",
            vec![],
            Some(&[
                "_uuid",
                "name",
                "protocols",
                "fail_mode",
                "external_ids",
                "flood_vlans",
                "datapath_type",
                "stp_enable",
                "ports",
            ]),
        );
        let out = client.transact(&t).await.unwrap();
        let truth = out
            .rows(sel)
            .unwrap()
            .iter()
            .map(|r| (r.uuid().unwrap(), r.clone()));
        assert_eq!(
            canonical_table(cache.clone()),
            canonical_table(truth),
            "after step {step}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_the_servers_inactivity_probe_on_tcp() {
    let ovs = start_db();
    // ovsdb-server probes idle TCP sessions (5 s) and drops them after another silent interval.
    let port = tokio::task::block_in_place(|| ovs.add_tcp_remote()).unwrap();
    let ctl = ovs.dir().join("ovsdb-server.ctl");
    let status = tokio::task::block_in_place(|| {
        std::process::Command::new("ovs-appctl")
            .arg("-t")
            .arg(&ctl)
            .args(["vlog/set", "jsonrpc:file:dbg"])
            .status()
    });
    assert!(status.unwrap().success());
    let cfg = ovsdb::ClientConfig {
        inactivity_probe: None,
        ..config()
    };
    let client = Client::connect(Endpoint::Tcp(format!("127.0.0.1:{port}")), cfg)
        .await
        .unwrap();
    client.list_dbs().await.unwrap();
    let log_path = ovs.dir().join("ovsdb-server.log");
    let probed = |log: &str| {
        log.lines()
            .any(|l| l.contains("tcp:") && l.contains("received reply") && l.contains("\"echo\""))
    };
    let deadline = tokio::time::Instant::now() + STEP;
    while !probed(&std::fs::read_to_string(&log_path).unwrap_or_default()) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server never received our echo reply"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(matches!(
        *client.connection_state().borrow(),
        ConnectionState::Connected { generation: 1 }
    ));
    assert!(client.list_dbs().await.unwrap().contains(&DB.to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_requests_get_their_own_replies() {
    let ovs = start_db();
    let client = connect(&ovs).await;
    let calls: Vec<_> = (0..200)
        .map(|i| {
            let c = client.clone();
            tokio::spawn(
                async move { (i, c.echo(vec![json!(i), json!(format!("call {i}"))]).await) },
            )
        })
        .collect();
    for call in calls {
        let (i, reply) = call.await.unwrap();
        assert_eq!(reply.unwrap(), vec![json!(i), json!(format!("call {i}"))]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn monitor_select_limits_what_is_reported() {
    let ovs = start_db();
    vsctl_nowait(&ovs, &["add-br", "existing"]);
    let client = connect(&ovs).await;
    let select = ovsdb::monitor::MonitorSelect {
        initial: false,
        insert: false,
        delete: true,
        modify: false,
    };
    let req = MonitorRequest {
        select,
        ..MonitorRequest::columns(&["name"])
    };
    let mut mon = client.monitor(DB, [("Bridge", req)]).await.unwrap();
    assert!(
        matches!(next_event(&mut mon).await, MonitorEvent::Snapshot(u) if u.is_empty()),
        "no initial rows"
    );
    vsctl_nowait(&ovs, &["add-br", "new"]);
    vsctl_nowait(&ovs, &["set", "Bridge", "existing", "external_ids:a=b"]);
    vsctl_nowait(&ovs, &["del-br", "existing"]);
    let MonitorEvent::Update(Updates::V1(u)) = next_event(&mut mon).await else {
        panic!("update expected")
    };
    let rows: Vec<_> = u["Bridge"].values().collect();
    assert!(
        matches!(rows.as_slice(), [RowUpdate::Delete(r)] if r.get("name") == Some(&Value::from("existing"))),
        "{rows:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_reconnect_a_lost_connection_closes_the_client() {
    let ovs = start_db();
    let cfg = ovsdb::ClientConfig {
        reconnect: false,
        ..config()
    };
    let client = Client::connect(Endpoint::Unix(ovs.db_socket()), cfg)
        .await
        .unwrap();
    let mut mon = client
        .monitor(DB, [("Bridge", MonitorRequest::default())])
        .await
        .unwrap();
    next_event(&mut mon).await;
    tokio::task::block_in_place(|| kill_ovsdb(&ovs));
    let mut state = client.connection_state();
    let closed = tokio::time::timeout(
        STEP,
        state.wait_for(|s| matches!(s, ConnectionState::Closed(_))),
    )
    .await
    .expect("closed")
    .unwrap()
    .clone();
    assert!(
        matches!(
            closed,
            ConnectionState::Closed(DisconnectReason::PeerClosed)
        ),
        "{closed:?}"
    );
    assert_eq!(
        tokio::time::timeout(STEP, mon.next())
            .await
            .expect("stream ends"),
        None
    );
    tokio::task::block_in_place(|| start_ovsdb(&ovs));
    assert!(matches!(
        client.list_dbs().await,
        Err(Error::NotConnected { .. })
    ));
}
