//! The Windows named-pipe transport for OpenFlow: `OfConnection` dials `npipe:\\.\pipe\…`
//! (the form of OVS's `br-int.mgmt` pipe on Windows) through `localipc`. Runs on Windows and
//! under Wine.

#![cfg(windows)]

use localipc::{Access, Endpoint, listen};
use openflow::conn::{ConnOptions, Encoded, OfConnection};
use openflow::msg::flow_mod::{FlowMod, FlowModCommand, TABLE_ALL};
use openflow::msg::flow_stats::FlowDescRequest;

/// Serves one pipe connection by relaying it to the TCP address `to`.
async fn relay_pipe_to(to: String) -> Endpoint {
    let name = format!(r"\\.\pipe\openflow-relay-{}", std::process::id());
    let endpoint: Endpoint = format!("npipe:{name}").parse().unwrap();
    let mut listener = listen(&endpoint, Access::Administrators).await.unwrap();
    tokio::spawn(async move {
        let mut pipe = listener.accept().await.unwrap();
        let mut tcp = tokio::net::TcpStream::connect(to).await.unwrap();
        let _ = tokio::io::copy_bidirectional(&mut pipe, &mut tcp).await;
    });
    endpoint
}

/// Through a pipe↔TCP relay to a real ovs-vswitchd on the Linux host: the bridge's passive
/// OpenFlow listener (`set-controller br0 ptcp:PORT:127.0.0.1`). scripts/windows-test.sh starts
/// it and sets `OPENFLOW_TCP_ADDR`.
#[tokio::test]
#[ignore = "needs OPENFLOW_TCP_ADDR: a host ovs-vswitchd bridge listening for OpenFlow"]
async fn connection_installs_and_dumps_flows_over_a_named_pipe() {
    let addr = std::env::var("OPENFLOW_TCP_ADDR")
        .expect("OPENFLOW_TCP_ADDR must name the bridge's OpenFlow listener");
    let endpoint = relay_pipe_to(addr).await;
    let conn = OfConnection::connect(endpoint, ConnOptions::default())
        .await
        .unwrap();
    assert_ne!(conn.features().await.unwrap().datapath_id, 0);
    let cookie = 0x5eed_0000_0000_0000 | u64::from(std::process::id());
    let text =
        format!("table=3,priority=123,cookie={cookie:#x},ip,nw_dst=10.244.1.0/24 actions=drop");
    let flow: FlowMod = text.parse().unwrap();
    conn.bundle(&[Encoded::new(&flow).unwrap()]).await.unwrap();
    let flows = conn.dump_flows(&FlowDescRequest::default()).await.unwrap();
    let ours: Vec<String> = flows
        .iter()
        .filter(|f| f.cookie == cookie)
        .map(|f| f.to_string())
        .collect();
    assert_eq!(ours.len(), 1, "{flows:?}");
    assert!(
        ours[0].contains("priority=123,ip,nw_dst=10.244.1.0/24 actions=drop"),
        "{}",
        ours[0]
    );
    let mut delete =
        FlowMod::from_text(FlowModCommand::Delete, &format!("cookie={cookie:#x}/-1")).unwrap();
    delete.table_id = TABLE_ALL;
    conn.batch(&[Encoded::new(&delete).unwrap()]).await.unwrap();
    let left = conn.dump_flows(&FlowDescRequest::default()).await.unwrap();
    assert!(left.iter().all(|f| f.cookie != cookie));
}
