//! [`first_port_number`]: the OpenFlow port number of a port being added, from whichever of
//! ovs-vswitchd's two reports arrives first.
//!
//! ovs-vswitchd adds a new port to its datapath and sends `OFPT_PORT_STATUS` (reason ADD)
//! to its OpenFlow connections in the same step; it writes the Interface row's `ofport` to OVSDB
//! only when its whole reconfiguration (every port of the bridge) is done and committed. On a
//! userspace datapath with 100 ports that second report comes 4–17 ms after the first (measured,
//! docs/benchmarks.md). The port passes packets from the first report on.
//!
//! The OVSDB report stays the authority when OpenFlow says nothing: a port that already
//! existed (a repeated ADD sends no ADD status), a switch connection that is down, a port name
//! longer than OpenFlow's 15 bytes (cut in the status), and an interface ovs-vswitchd failed to
//! open (only OVSDB carries the error).

use std::future::Future;

use openflow::msg::port::{PortReason, PortStatus};
use tokio::sync::broadcast::{self, error::RecvError};

/// The port number of `name`: the first `OFPT_PORT_STATUS` ADD naming it on `statuses`
/// (subscribed before the port was created), or `ovsdb`'s answer if that comes first or the
/// status stream ends.
pub async fn first_port_number<E>(
    statuses: broadcast::Receiver<PortStatus>,
    name: &str,
    ovsdb: impl Future<Output = Result<u32, E>>,
) -> Result<u32, E> {
    tokio::select! {
        biased;
        Some(number) = added(statuses, name) => Ok(number),
        reported = ovsdb => reported,
    }
}

/// The number of the first ADD naming `name`; `None` when the stream closes first.
async fn added(mut statuses: broadcast::Receiver<PortStatus>, name: &str) -> Option<u32> {
    loop {
        match statuses.recv().await {
            Ok(status) if status.reason == PortReason::Add && status.port.name == name => {
                return Some(status.port.port_no);
            }
            Ok(_) => {}
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!(
                    "{missed} port statuses missed while waiting for {name}'s: its number comes from OVSDB if not from a later one"
                );
            }
            Err(RecvError::Closed) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::pending;
    use std::time::Duration;

    use openflow::msg::port::Port;

    use super::*;

    fn status(reason: PortReason, name: &str, port_no: u32) -> PortStatus {
        PortStatus {
            reason,
            port: Port {
                port_no,
                hw_addr: [0; 6],
                name: name.to_owned(),
                config: 0,
                state: 0,
                properties: Vec::new(),
            },
        }
    }

    #[tokio::test]
    async fn the_add_naming_the_port_answers_before_ovsdb() {
        let (tx, rx) = broadcast::channel(8);
        tx.send(status(PortReason::Add, "other", 7)).unwrap();
        tx.send(status(PortReason::Modify, "veth-a", 8)).unwrap();
        tx.send(status(PortReason::Delete, "veth-a", 9)).unwrap();
        tx.send(status(PortReason::Add, "veth-a", 10)).unwrap();
        let number = first_port_number(rx, "veth-a", pending::<Result<u32, ()>>()).await;
        assert_eq!(number, Ok(10));
    }

    #[tokio::test]
    async fn ovsdb_answers_when_no_status_names_the_port() {
        let (tx, rx) = broadcast::channel(8);
        tx.send(status(PortReason::Add, "other", 7)).unwrap();
        let ovsdb = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok::<_, ()>(3)
        };
        assert_eq!(first_port_number(rx, "veth-a", ovsdb).await, Ok(3));
        drop(tx);
    }

    #[tokio::test]
    async fn an_ovsdb_error_comes_through_when_the_status_stream_is_closed() {
        let (tx, rx) = broadcast::channel::<PortStatus>(8);
        drop(tx);
        let ovsdb = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Err::<u32, _>("interface failed")
        };
        assert_eq!(
            first_port_number(rx, "veth-a", ovsdb).await,
            Err("interface failed")
        );
    }

    #[tokio::test]
    async fn a_lagged_receiver_still_sees_a_later_add() {
        let (tx, rx) = broadcast::channel(2);
        for n in 0..5 {
            tx.send(status(PortReason::Modify, "other", n)).unwrap();
        }
        tx.send(status(PortReason::Add, "veth-a", 12)).unwrap();
        let number = first_port_number(rx, "veth-a", pending::<Result<u32, ()>>()).await;
        assert_eq!(number, Ok(12));
    }
}
