//! The dependency order of groups: a group that forwards to other groups can be added only
//! once they exist, and must be deleted before them. Also finds groups that would forward to
//! themselves.

use std::collections::{HashMap, HashSet, VecDeque};

use openflow::msg::group_mod::GroupDesc;

use super::object::{Object, Target};

/// The groups a group forwards to.
fn uses(group: &GroupDesc) -> impl Iterator<Item = u32> {
    let mut targets = Vec::new();
    group.targets(&mut targets);
    targets.into_iter().filter_map(|t| match t {
        Target::Group(id) => Some(id),
        Target::Meter(_) => None,
    })
}

/// Indexes of `groups` in an order where every group comes after the groups of the set it
/// uses (reverse it for deletes). Groups that do not depend on each other keep their order. On
/// a cycle, returns the index of a group on it.
pub fn dependency_order(groups: &[&GroupDesc]) -> Result<Vec<usize>, usize> {
    let index: HashMap<u32, usize> = groups
        .iter()
        .enumerate()
        .map(|(i, g)| (g.group_id, i))
        .collect();
    let mut waiting_for = vec![0usize; groups.len()];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); groups.len()];
    for (i, group) in groups.iter().enumerate() {
        for used in uses(group) {
            if let Some(&j) = index.get(&used) {
                waiting_for[i] += 1;
                users[j].push(i);
            }
        }
    }
    let mut ready: VecDeque<usize> = (0..groups.len()).filter(|&i| waiting_for[i] == 0).collect();
    let mut order = Vec::with_capacity(groups.len());
    while let Some(i) = ready.pop_front() {
        order.push(i);
        for &user in &users[i] {
            waiting_for[user] -= 1;
            if waiting_for[user] == 0 {
                ready.push_back(user);
            }
        }
    }
    match (0..groups.len()).find(|&i| waiting_for[i] > 0) {
        Some(on_cycle) => Err(on_cycle),
        None => Ok(order),
    }
}

/// Whether `group`, once installed, would reach itself through the groups it uses, looked up
/// with `lookup` (the state after the change). Walks only what `group` reaches.
pub fn reaches_itself<'a>(
    group: &GroupDesc,
    lookup: impl Fn(u32) -> Option<&'a GroupDesc>,
) -> bool {
    let mut seen = HashSet::new();
    let mut next: Vec<u32> = uses(group).collect();
    while let Some(id) = next.pop() {
        if id == group.group_id {
            return true;
        }
        if seen.insert(id)
            && let Some(used) = lookup(id)
        {
            next.extend(uses(used));
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(id: u32, uses: &[u32]) -> GroupDesc {
        let mut text = format!("group_id={id},type=all,bucket=actions=output:1");
        for u in uses {
            text.push_str(&format!(",bucket=actions=group:{u}"));
        }
        GroupDesc::from_text(&text).unwrap()
    }

    #[test]
    fn users_come_after_what_they_use() {
        let gs = [
            group(1, &[2]),
            group(2, &[3, 9]),
            group(3, &[]),
            group(4, &[]),
        ];
        let refs: Vec<&GroupDesc> = gs.iter().collect();
        let order = dependency_order(&refs).unwrap();
        let ids: Vec<u32> = order.iter().map(|&i| gs[i].group_id).collect();
        assert_eq!(ids, [3, 4, 2, 1]);
        let cycle = [group(1, &[2]), group(2, &[1]), group(3, &[])];
        let refs: Vec<&GroupDesc> = cycle.iter().collect();
        assert!(matches!(dependency_order(&refs), Err(0 | 1)));
        let own = [group(5, &[5])];
        assert_eq!(dependency_order(&own.iter().collect::<Vec<_>>()), Err(0));
    }

    #[test]
    fn finds_groups_that_reach_themselves() {
        let installed = [group(2, &[3]), group(3, &[1])];
        let lookup = |id: u32| installed.iter().find(|g| g.group_id == id);
        assert!(reaches_itself(&group(1, &[2]), lookup));
        assert!(!reaches_itself(&group(4, &[2]), lookup));
        assert!(!reaches_itself(&group(1, &[]), lookup));
    }
}
