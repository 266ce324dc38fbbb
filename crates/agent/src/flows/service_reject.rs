//! The answer to a new connection towards a Service port without usable endpoints: the
//! `ServiceLB` flow hands the packet to the agent (`PacketInOperation::ServiceReject`), and
//! [`ServiceRejects::run`] sends the client a TCP reset or an ICMP port unreachable from the
//! Service's address (`packet::reject_reply`) out of the port the packet came in on, so the
//! client sees "connection refused" at once, as kube-proxy's REJECT gives, not a timeout.
//!
//! Answers are limited to [`ANSWERS_PER_SECOND`] (bursts of [`ANSWER_BURST`]): a client
//! flooding an endpointless Service costs the agent a bounded amount of work, and the packets
//! over the limit go unanswered (dropped, as before REJECT), counted in the next log line.
//! Where the switch has packet-rate meters the same bound holds in the switch already: the
//! refusals pass their meter before they are sent to the agent.

use std::time::Instant;

use openflow::action::Action;
use openflow::conn::{OfConnection, PacketInMessage};
use openflow::msg::flow_mod::NO_BUFFER;
use openflow::msg::packet_in::PacketIn2;
use openflow::msg::packet_out::PacketOut;
use openflow::oxm::{Field, Match, PortNo};
use pipeline::layout::packet_in::{PACKET_IN_BURST, PACKET_INS_PER_SECOND, PacketInOperation};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

/// Rejections answered per second at most, sustained: what the refusals' meter lets through
/// where the switch has one.
pub const ANSWERS_PER_SECOND: f64 = PACKET_INS_PER_SECOND as f64;
/// Rejections answered at once after a quiet spell.
pub const ANSWER_BURST: f64 = PACKET_IN_BURST as f64;

/// A token bucket: `take` succeeds while tokens last, which come back at `rate` per second up
/// to `burst`.
#[derive(Debug)]
struct RateLimit {
    rate: f64,
    burst: f64,
    tokens: f64,
    refilled: Instant,
}

impl RateLimit {
    fn new(rate: f64, burst: f64, now: Instant) -> RateLimit {
        RateLimit {
            rate,
            burst,
            tokens: burst,
            refilled: now,
        }
    }

    fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.refilled).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.refilled = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The responder: subscribed to the connection's packet-ins when made, so none sent after is
/// missed.
#[derive(Debug)]
pub struct ServiceRejects {
    conn: OfConnection,
    packet_ins: tokio::sync::broadcast::Receiver<PacketInMessage>,
}

impl ServiceRejects {
    /// A responder on `conn` (whose on-connect hook asks for `NXT_PACKET_IN2`).
    pub fn new(conn: OfConnection) -> ServiceRejects {
        let packet_ins = conn.packet_ins();
        ServiceRejects { conn, packet_ins }
    }

    /// Answers the Service rejections the switch sends until `stop` or the connection closes.
    pub async fn run(mut self, stop: CancellationToken) {
        let mut limit = RateLimit::new(ANSWERS_PER_SECOND, ANSWER_BURST, Instant::now());
        let mut over_limit: u64 = 0;
        loop {
            let message = tokio::select! {
                () = stop.cancelled() => return,
                message = self.packet_ins.recv() => message,
            };
            let packet_in = match message {
                Ok(PacketInMessage::Nicira(p))
                    if PacketInOperation::from_userdata(&p.userdata)
                        == Some(PacketInOperation::ServiceReject) =>
                {
                    p
                }
                Ok(_) => continue,
                Err(RecvError::Lagged(missed)) => {
                    tracing::warn!(
                        "Service rejections: {missed} packet-ins arrived faster than they were read and went unanswered"
                    );
                    continue;
                }
                Err(RecvError::Closed) => return,
            };
            if !limit.take(Instant::now()) {
                over_limit += 1;
                continue;
            }
            if over_limit > 0 {
                tracing::info!(
                    "Service rejections: {over_limit} went unanswered over the limit of {ANSWERS_PER_SECOND}/s"
                );
                over_limit = 0;
            }
            if let Err(why) = self.answer(&packet_in).await {
                tracing::debug!("Service rejection not answered: {why}");
            }
        }
    }

    /// Sends the refusal of `packet_in`'s packet out of the port it came in on.
    async fn answer(&self, packet_in: &PacketIn2) -> Result<(), String> {
        let in_port = packet_in
            .metadata
            .get(Field::InPort)
            .map(|entry| entry.value as u32)
            .ok_or("the packet-in names no in_port")?;
        let reply = packet::reject_reply(&packet_in.packet).map_err(|e| e.to_string())?;
        let out = PacketOut {
            buffer_id: NO_BUFFER,
            flow_match: Match::new().with(Field::InPort, u128::from(PortNo::CONTROLLER.0)),
            actions: vec![Action::output(in_port)],
            data: reply,
        };
        self.conn
            .send(&out)
            .await
            .map(drop)
            .map_err(|e| format!("packet-out to port {in_port}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_limit_allows_a_burst_then_the_rate() {
        let start = Instant::now();
        let mut limit = RateLimit::new(10.0, 3.0, start);
        assert!((0..3).all(|_| limit.take(start)));
        assert!(!limit.take(start));
        assert!(!limit.take(start + Duration::from_millis(50)));
        assert!(limit.take(start + Duration::from_millis(150)));
        assert!(!limit.take(start + Duration::from_millis(150)));
        // Never more than the burst, however long the quiet.
        let later = start + Duration::from_secs(60);
        assert!((0..3).all(|_| limit.take(later)));
        assert!(!limit.take(later));
    }
}
