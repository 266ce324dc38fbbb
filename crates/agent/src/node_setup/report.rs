//! What a node setup sub-command did: [`Report`], one [`Step`] per thing it looked at, printed
//! one line each (`created service ovsdb-server`, `unchanged: file C:\...`, `missing: ...`).

use std::fmt;

/// One line of a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Something was written: `what` says what was done (`created service ovsdb-server`).
    Changed(String),
    /// Already as wanted (`service ovsdb-server`).
    Unchanged(String),
    /// A check passed (`Windows feature Containers is enabled`).
    Ok(String),
    /// A prerequisite is missing: `what` and the `fix`.
    Missing { what: String, fix: String },
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Changed(what) => f.write_str(what),
            Step::Unchanged(what) => write!(f, "unchanged: {what}"),
            Step::Ok(what) => write!(f, "ok: {what}"),
            Step::Missing { what, fix } => write!(f, "missing: {what}; fix: {fix}"),
        }
    }
}

/// The steps of one sub-command, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Every step taken.
    pub steps: Vec<Step>,
}

impl Report {
    /// Records `step` and logs it.
    pub fn push(&mut self, step: Step) {
        tracing::info!("{step}");
        self.steps.push(step);
    }

    /// Records a change.
    pub fn changed(&mut self, what: impl Into<String>) {
        self.push(Step::Changed(what.into()));
    }

    /// Records something already as wanted.
    pub fn unchanged(&mut self, what: impl Into<String>) {
        self.push(Step::Unchanged(what.into()));
    }

    /// Whether anything was written.
    pub fn changed_anything(&self) -> bool {
        self.steps
            .iter()
            .any(|step| matches!(step, Step::Changed(_)))
    }

    /// The missing prerequisites.
    pub fn missing(&self) -> impl Iterator<Item = &Step> {
        self.steps
            .iter()
            .filter(|step| matches!(step, Step::Missing { .. }))
    }

    /// The report's lines.
    pub fn lines(&self) -> Vec<String> {
        self.steps.iter().map(ToString::to_string).collect()
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for step in &self.steps {
            writeln!(f, "{step}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_say_what_changed_what_did_not_and_what_is_missing() {
        let mut report = Report::default();
        report.changed("created service ovsdb-server");
        report.unchanged("service ovs-vswitchd");
        report.push(Step::Ok("containerd service is registered".into()));
        report.push(Step::Missing {
            what: "Windows feature Containers is not enabled".into(),
            fix: "Install-WindowsFeature -Name Containers".into(),
        });
        assert_eq!(
            report.to_string(),
            "created service ovsdb-server\nunchanged: service ovs-vswitchd\n\
             ok: containerd service is registered\n\
             missing: Windows feature Containers is not enabled; fix: Install-WindowsFeature -Name Containers\n"
        );
        assert!(report.changed_anything());
        assert_eq!(report.missing().count(), 1);
        let quiet = Report {
            steps: vec![Step::Unchanged("x".into())],
        };
        assert!(!quiet.changed_anything());
    }
}
