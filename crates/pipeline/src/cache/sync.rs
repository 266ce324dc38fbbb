//! Sending to the switch: the three steps of every change (meters confirmed before the bundle
//! and undone if it fails, one atomic bundle, meter deletes after it), and whole-cache installs
//! — making the switch hold exactly the cache's objects of its round, after a new round is
//! filled and on every (re)connect (`ovs-vswitchd` forgets every flow, group and meter when it
//! restarts) — with the deletion of groups and meters the switch holds but no owner wants.
//!
//! The agent owns every group and meter of its bridge: any the cache does not want is a
//! leftover.

use openflow::conn::group_dump::group_bound;
use openflow::conn::{ConnError, Encoded, OfConnection};
use openflow::msg::group_mod::{GroupDesc, GroupMod};
use openflow::msg::meter_mod::{MeterDesc, MeterMod};
use openflow::{EncodeError, Message};

use super::diff::{Steps, SwitchMod};
use super::installer::{SharedCache, lock};
use super::order::dependency_order;

/// Encoded messages of the steps around a change's bundle: the meters set before it, their
/// undo, and the meter deletes after it. The bundle itself is encoded while it is sent
/// ([`encoded_chunks`]).
#[derive(Debug, Default)]
pub(super) struct MeterSteps {
    pub before: Vec<Encoded>,
    /// Undoes `before`, one for one.
    pub undo: Vec<Encoded>,
    pub after: Vec<Encoded>,
}

/// Messages per chunk of a streamed bundle: large enough that a write carries many, small
/// enough that the switch starts on the first ones while the next are encoded (measured with
/// 10,000 Services: 64 and 256 did best, 1,024 and 4,096 worse; docs/benchmarks.md).
const CHUNK: usize = 256;

pub(super) fn encode_all<'a>(
    mods: impl IntoIterator<Item = SwitchMod<'a>>,
) -> Result<Vec<Encoded>, EncodeError> {
    let mut out = Vec::new();
    for m in mods {
        m.encode_into(&mut out)?;
    }
    Ok(out)
}

/// `mods` encoded lazily, about [`CHUNK`] messages at a time, for
/// [`OfConnection::bundle_chunks`] (a group longer than a message is several).
pub(super) fn encoded_chunks<'a>(
    mods: impl IntoIterator<Item = SwitchMod<'a>>,
) -> impl Iterator<Item = Result<Vec<Encoded>, EncodeError>> {
    let mut mods = mods.into_iter().peekable();
    std::iter::from_fn(move || {
        mods.peek()?;
        let mut chunk = Vec::with_capacity(CHUNK);
        while chunk.len() < CHUNK {
            let Some(m) = mods.next() else { break };
            if let Err(e) = m.encode_into(&mut chunk) {
                return Some(Err(e));
            }
        }
        Some(Ok(chunk))
    })
}

fn encode_each<M: Message>(msgs: &[M]) -> Result<Vec<Encoded>, EncodeError> {
    msgs.iter().map(Encoded::new).collect()
}

impl MeterSteps {
    /// Encodes the meter steps of a change; fails before anything is sent.
    pub fn of_steps(steps: &Steps<'_>, undo: &[MeterMod]) -> Result<MeterSteps, EncodeError> {
        Ok(MeterSteps {
            before: encode_all(steps.before.iter().copied())?,
            undo: encode_each(undo)?,
            after: encode_all(steps.after.iter().copied())?,
        })
    }
}

/// Sends `undo[i]` for each `i` in `which`, logging (not returning) failures: the replay on the
/// next connection makes the switch equal to the cache again.
async fn undo(conn: &OfConnection, undo: &[Encoded], which: impl Iterator<Item = usize>) {
    let msgs: Vec<Encoded> = which.filter_map(|i| undo.get(i).cloned()).collect();
    if msgs.is_empty() {
        return;
    }
    if let Err(error) = conn.batch(&msgs).await {
        tracing::warn!(%error, "undoing the meter changes of a failed change failed");
    }
}

/// Sends `msgs.before` (confirmed) and `bundle` (atomic, encoded while it is sent); `queued`
/// runs once the whole bundle is queued for the switch (see
/// [`OfConnection::bundle_chunks`]). If either fails, undoes what `before` applied, so the
/// switch is as it was, and returns the error. Returns the number of bundled messages.
pub(super) async fn send_before_and_bundle<'a>(
    conn: &OfConnection,
    msgs: &MeterSteps,
    bundle: impl IntoIterator<Item = SwitchMod<'a>>,
    queued: impl FnOnce(),
) -> Result<usize, ConnError> {
    if !msgs.before.is_empty()
        && let Err(error) = conn.batch(&msgs.before).await
    {
        let rejected: Vec<usize> = match &error {
            ConnError::BatchRejected(rejections) => rejections.iter().map(|r| r.index).collect(),
            _ => Vec::new(),
        };
        undo(
            conn,
            &msgs.undo,
            (0..msgs.before.len()).filter(|i| !rejected.contains(i)),
        )
        .await;
        return Err(error);
    }
    let mut bundle = bundle.into_iter().peekable();
    if bundle.peek().is_none() {
        queued();
        return Ok(0);
    }
    match conn.bundle_chunks(encoded_chunks(bundle), queued).await {
        Ok(count) => Ok(count),
        Err(error) => {
            undo(conn, &msgs.undo, 0..msgs.before.len()).await;
            Err(error)
        }
    }
}

/// Sends `after` (meter deletes once the bundle is in). A failure only leaves unused meters
/// behind, which the next replay or round deletes: it is logged, not returned.
pub(super) async fn send_after(conn: &OfConnection, msgs: &MeterSteps) {
    if msgs.after.is_empty() {
        return;
    }
    if let Err(error) = conn.batch(&msgs.after).await {
        tracing::warn!(%error, "deleting meters no owner wants failed; the next replay deletes them");
    }
}

/// The meter mods that give the switch the `desired` meters, given the ones it has, and their
/// undo.
fn meters_to_set(switch: &[MeterDesc], desired: &[MeterDesc]) -> (Vec<MeterMod>, Vec<MeterMod>) {
    let mut set = Vec::new();
    let mut undo = Vec::new();
    for meter in desired {
        match switch.iter().find(|m| m.meter_id == meter.meter_id) {
            Some(have) if have.normalized() == *meter => {}
            Some(have) => {
                set.push(MeterMod::modify(meter.clone()));
                undo.push(MeterMod::modify(have.clone()));
            }
            None => {
                set.push(MeterMod::add(meter.clone()));
                undo.push(MeterMod::delete(meter.meter_id));
            }
        }
    }
    (set, undo)
}

/// Deletes of the switch's groups no owner wants, each before the groups it uses.
fn stale_groups(switch: &[GroupDesc], desired: &[GroupDesc]) -> Vec<GroupMod> {
    let stale: Vec<&GroupDesc> = switch
        .iter()
        .filter(|g| !desired.iter().any(|d| d.group_id == g.group_id))
        .collect();
    let order = dependency_order(&stale).unwrap_or_else(|_| (0..stale.len()).collect());
    order
        .into_iter()
        .rev()
        .map(|i| GroupMod::delete(stale[i].group_id))
        .collect()
}

/// Deletes of the switch's meters no owner wants.
fn stale_meters(switch: &[MeterDesc], desired: &[MeterDesc]) -> Vec<MeterMod> {
    switch
        .iter()
        .filter(|m| !desired.iter().any(|d| d.meter_id == m.meter_id))
        .map(|m| MeterMod::delete(m.meter_id))
        .collect()
}

fn encode_error(e: EncodeError) -> ConnError {
    ConnError::Encode(e)
}

/// Makes the switch hold exactly the cache's objects of its round and returns the number of
/// messages sent: meters set first
/// (confirmed), then one bundle that deletes the round's flows, adds or modifies every group
/// (each after the groups it uses) and adds every flow. With `delete_stale`, the same bundle
/// ends by deleting the groups no owner wants and the meters are deleted after it (a replay);
/// without, they stay for [`delete_stale`] once the previous round is gone (a new round).
pub(super) async fn install_all(
    conn: &OfConnection,
    cache: &SharedCache,
    delete_stale: bool,
) -> Result<usize, ConnError> {
    let switch_meters = conn.dump_meters().await?;
    let switch_groups = if delete_stale {
        switch_groups(conn, cache, conn.group_bound(&[]).await?).await?
    } else {
        Vec::new()
    };
    let (round, flows, groups, meters) = {
        let cache = lock(cache);
        (
            cache.round(),
            cache.all_flows(),
            cache.all_groups(),
            cache.all_meters(),
        )
    };
    let (set_meters, undo) = meters_to_set(&switch_meters, &meters);
    let (drop_groups, drop_meters) = if delete_stale {
        (
            stale_groups(&switch_groups, &groups),
            stale_meters(&switch_meters, &meters),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let group_mods: Vec<GroupMod> = groups.into_iter().map(GroupMod::add_or_modify).collect();
    let delete_round = round.delete_all();
    let bundle: Vec<SwitchMod<'_>> = std::iter::once(SwitchMod::Flow(&delete_round))
        .chain(group_mods.iter().map(SwitchMod::Group))
        .chain(flows.iter().map(SwitchMod::Flow))
        .chain(drop_groups.iter().map(SwitchMod::Group))
        .collect();
    let msgs = MeterSteps {
        before: encode_each(&set_meters).map_err(encode_error)?,
        undo: encode_each(&undo).map_err(encode_error)?,
        after: encode_each(&drop_meters).map_err(encode_error)?,
    };
    let bundled = send_before_and_bundle(conn, &msgs, bundle, || {}).await?;
    send_after(conn, &msgs).await;
    Ok(msgs.before.len() + bundled + msgs.after.len())
}

/// The groups the switch holds, up to the largest id the cache wants or `named` (the largest
/// id the switch's flows name, [`OfConnection::group_bound`]; see
/// [`OfConnection::dump_groups`]).
pub(super) async fn switch_groups(
    conn: &OfConnection,
    cache: &SharedCache,
    named: u32,
) -> Result<Vec<GroupDesc>, ConnError> {
    let wanted: Vec<u32> = lock(cache)
        .all_groups()
        .iter()
        .map(|g| g.group_id)
        .collect();
    conn.dump_groups(group_bound(&wanted, []).max(named)).await
}

/// Deletes the groups (in one bundle, each before the groups it uses) and then the meters the
/// switch holds that no owner wants, and returns how many; `switch_groups` is what
/// [`switch_groups`] read. Run it once no flow of an earlier round uses them.
pub(super) async fn delete_stale(
    conn: &OfConnection,
    cache: &SharedCache,
    switch_groups: &[GroupDesc],
) -> Result<usize, ConnError> {
    let switch_meters = conn.dump_meters().await?;
    let (groups, meters) = {
        let cache = lock(cache);
        (cache.all_groups(), cache.all_meters())
    };
    let drop_groups = stale_groups(switch_groups, &groups);
    if !drop_groups.is_empty() {
        conn.bundle(&encode_each(&drop_groups)?).await?;
    }
    let drop_meters = stale_meters(&switch_meters, &meters);
    if !drop_meters.is_empty() {
        conn.batch(&encode_each(&drop_meters)?).await?;
    }
    Ok(drop_groups.len() + drop_meters.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meter(text: &str) -> MeterDesc {
        MeterDesc::from_text(text).unwrap()
    }

    fn group(text: &str) -> GroupDesc {
        GroupDesc::from_text(text).unwrap()
    }

    #[test]
    fn meters_are_set_where_they_differ_and_undone_one_for_one() {
        let mut reported = meter("meter=1 kbps bands=type=drop rate=10");
        reported.bands[0].burst_size = 10; // as Open vSwitch reports it
        let switch = [reported, meter("meter=2 kbps bands=type=drop rate=20")];
        let desired = [
            meter("meter=1 kbps bands=type=drop rate=10"),
            meter("meter=2 kbps bands=type=drop rate=25"),
            meter("meter=3 pktps bands=type=drop rate=5"),
        ];
        let (set, undo) = meters_to_set(&switch, &desired);
        assert_eq!(
            set,
            [
                MeterMod::modify(desired[1].clone()),
                MeterMod::add(desired[2].clone())
            ]
        );
        assert_eq!(
            undo,
            [MeterMod::modify(switch[1].clone()), MeterMod::delete(3)]
        );
        assert_eq!(stale_meters(&switch, &desired[1..]), [MeterMod::delete(1)]);
    }

    #[test]
    fn stale_groups_go_before_the_groups_they_use() {
        let switch = [
            group("group_id=1,type=all,bucket=actions=output:1"),
            group("group_id=2,type=all,bucket=actions=group:1"),
            group("group_id=3,type=all,bucket=actions=output:3"),
        ];
        let desired = [group("group_id=3,type=all,bucket=actions=output:4")];
        assert_eq!(
            stale_groups(&switch, &desired),
            [GroupMod::delete(2), GroupMod::delete(1)]
        );
    }
}
