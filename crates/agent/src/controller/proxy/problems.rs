//! [`Problems`]: the Services and EndpointSlices the proxy cannot translate, each under its
//! object (`"{kind} {namespace}/{name}"`), kept up to date object by object, and which of them
//! appeared or changed since they were last reported (so each is logged once, when it appears
//! or changes).

use std::collections::{BTreeMap, BTreeSet};

use super::translate::Problem;

/// The id of the problem of the object `kind` `object` (`namespace/name`).
pub fn problem_id(kind: &str, object: &str) -> String {
    format!("{kind} {object}")
}

/// The objects that cannot be translated now.
#[derive(Debug, Default)]
pub struct Problems {
    now: BTreeMap<String, Problem>,
    /// As at the last [`Problems::take_fresh`].
    reported: BTreeMap<String, Problem>,
    /// The ids set or cleared since the last [`Problems::take_fresh`].
    touched: BTreeSet<String>,
}

impl Problems {
    /// `problem` is its object's problem now.
    pub fn set(&mut self, problem: Problem) {
        let id = problem_id(problem.kind, &problem.object);
        self.touched.insert(id.clone());
        self.now.insert(id, problem);
    }

    /// The object with problem id `id` has no problem now.
    pub fn clear(&mut self, id: &str) {
        if self.now.remove(id).is_some() {
            self.touched.insert(id.to_owned());
        }
    }

    /// Every problem now, by id.
    pub fn all(&self) -> &BTreeMap<String, Problem> {
        &self.now
    }

    /// The problems that appeared or changed since the last call (each once), in id order.
    pub fn take_fresh(&mut self) -> Vec<Problem> {
        let mut fresh = Vec::new();
        for id in std::mem::take(&mut self.touched) {
            match self.now.get(&id) {
                Some(problem) => {
                    if self.reported.get(&id) != Some(problem) {
                        fresh.push(problem.clone());
                        self.reported.insert(id, problem.clone());
                    }
                }
                None => {
                    self.reported.remove(&id);
                }
            }
        }
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(object: &str, reason: &str) -> Problem {
        Problem {
            kind: "Service",
            object: object.into(),
            reason: reason.into(),
        }
    }

    #[test]
    fn a_problem_is_fresh_when_it_appears_or_changes_not_when_set_again() {
        let mut problems = Problems::default();
        problems.set(problem("default/a", "no ports"));
        assert_eq!(problems.take_fresh(), [problem("default/a", "no ports")]);
        problems.clear("Service default/a");
        problems.set(problem("default/a", "no ports"));
        assert!(problems.take_fresh().is_empty(), "the same problem again");
        problems.set(problem("default/a", "no spec"));
        assert_eq!(problems.take_fresh(), [problem("default/a", "no spec")]);
        problems.clear("Service default/a");
        assert!(problems.take_fresh().is_empty());
        assert!(problems.all().is_empty());
        problems.set(problem("default/a", "no spec"));
        assert_eq!(
            problems.take_fresh(),
            [problem("default/a", "no spec")],
            "gone, then back: fresh again"
        );
    }
}
