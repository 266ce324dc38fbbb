//! Leader election through a `coordination.k8s.io/v1` Lease, as client-go's leaderelection
//! package does it: the holder renews `renewTime` every retry period; another replica takes
//! the Lease once `renewTime + leaseDurationSeconds` has passed without a renewal. Every write
//! is a replace carrying the read `resourceVersion`, so two replicas that try at once cannot
//! both win: the API server refuses the second with 409 Conflict.
//!
//! [`decide`] is the rule, without I/O; [`LeaseElector`] applies it against the API server.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Api;
use kube::api::PostParams;

/// What a replica does with the Lease it read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// We hold it: renew it.
    Renew,
    /// Its holder let it expire (or it has none): take it.
    TakeOver,
    /// Another replica holds it until `until`.
    Follow { holder: String, until: Timestamp },
}

/// The rule: what replica `me` does at `now` with a Lease whose spec is `spec` (a Lease
/// without a spec has no holder).
pub fn decide(spec: Option<&LeaseSpec>, me: &str, now: Timestamp) -> Decision {
    let Some(spec) = spec else {
        return Decision::TakeOver;
    };
    match spec.holder_identity.as_deref() {
        Some(holder) if holder == me => Decision::Renew,
        Some(holder) if !holder.is_empty() => {
            let renewed = spec.renew_time.as_ref().or(spec.acquire_time.as_ref());
            let duration =
                SignedDuration::from_secs(spec.lease_duration_seconds.unwrap_or(0).into());
            match renewed.and_then(|t| t.0.checked_add(duration).ok()) {
                Some(until) if until > now => Decision::Follow {
                    holder: holder.to_owned(),
                    until,
                },
                _ => Decision::TakeOver,
            }
        }
        _ => Decision::TakeOver,
    }
}

/// How long a Lease lasts and how often it is tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTiming {
    /// `leaseDurationSeconds`: how long a holder's renewal keeps the others off.
    pub duration: Duration,
    /// How often a replica reads the Lease and renews or tries to take it.
    pub retry: Duration,
}

/// The outcome of one round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Round {
    /// We hold the Lease (created, renewed or taken over).
    Leading,
    /// Another replica does.
    Following { holder: String },
}

/// One replica's side of the election for one Lease.
#[derive(Debug)]
pub struct LeaseElector {
    api: Api<Lease>,
    name: String,
    identity: String,
    timing: LeaseTiming,
}

impl LeaseElector {
    pub fn new(
        api: Api<Lease>,
        name: impl Into<String>,
        identity: impl Into<String>,
        timing: LeaseTiming,
    ) -> LeaseElector {
        LeaseElector {
            api,
            name: name.into(),
            identity: identity.into(),
            timing,
        }
    }

    pub fn identity(&self) -> &str {
        &self.identity
    }

    pub fn timing(&self) -> LeaseTiming {
        self.timing
    }

    /// Reads the Lease and creates it (when there is none), renews or takes it if the rule
    /// allows. A write refused with 409 (another replica wrote first) counts as following
    /// whoever holds the Lease then.
    pub async fn round(&self) -> Result<Round, kube::Error> {
        let now = Timestamp::now();
        let written = match self.api.get_opt(&self.name).await? {
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(self.held_spec(now, 0)),
                };
                self.api.create(&PostParams::default(), &lease).await
            }
            Some(mut lease) => match decide(lease.spec.as_ref(), &self.identity, now) {
                Decision::Follow { holder, .. } => return Ok(Round::Following { holder }),
                Decision::Renew => {
                    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
                    spec.renew_time = Some(MicroTime(now));
                    spec.lease_duration_seconds = Some(self.duration_seconds());
                    self.api
                        .replace(&self.name, &PostParams::default(), &lease)
                        .await
                }
                Decision::TakeOver => {
                    let transitions = lease
                        .spec
                        .as_ref()
                        .and_then(|s| s.lease_transitions)
                        .unwrap_or(0);
                    lease.spec = Some(self.held_spec(now, transitions.saturating_add(1)));
                    self.api
                        .replace(&self.name, &PostParams::default(), &lease)
                        .await
                }
            },
        };
        match written {
            Ok(_) => Ok(Round::Leading),
            Err(kube::Error::Api(status)) if status.code == 409 => {
                tracing::debug!(
                    "Lease {}: another replica wrote it first ({})",
                    self.name,
                    status.message
                );
                let now_held = self.api.get_opt(&self.name).await?;
                let holder = now_held
                    .and_then(|l| l.spec?.holder_identity)
                    .unwrap_or_default();
                Ok(Round::Following { holder })
            }
            Err(e) => Err(e),
        }
    }

    fn duration_seconds(&self) -> i32 {
        i32::try_from(self.timing.duration.as_secs().max(1)).unwrap_or(i32::MAX)
    }

    fn held_spec(&self, now: Timestamp, transitions: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(self.duration_seconds()),
            acquire_time: Some(MicroTime(now)),
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(transitions),
            ..LeaseSpec::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(holder: &str, renewed: Timestamp, seconds: i32) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(holder.to_owned()),
            renew_time: Some(MicroTime(renewed)),
            lease_duration_seconds: Some(seconds),
            ..LeaseSpec::default()
        }
    }

    #[test]
    fn the_rule_of_the_lease() {
        let t0: Timestamp = "2026-12-03T10:00:00Z".parse().unwrap();
        let at = |secs: i64| t0.checked_add(SignedDuration::from_secs(secs)).unwrap();
        assert_eq!(decide(None, "a", t0), Decision::TakeOver);
        assert_eq!(
            decide(Some(&held("a", t0, 15)), "a", at(100)),
            Decision::Renew
        );
        assert_eq!(
            decide(Some(&held("b", t0, 15)), "a", at(14)),
            Decision::Follow {
                holder: "b".into(),
                until: at(15)
            }
        );
        assert_eq!(
            decide(Some(&held("b", t0, 15)), "a", at(15)),
            Decision::TakeOver
        );
        assert_eq!(decide(Some(&held("", t0, 15)), "a", t0), Decision::TakeOver);
        assert_eq!(
            decide(Some(&LeaseSpec::default()), "a", t0),
            Decision::TakeOver
        );
    }
}
