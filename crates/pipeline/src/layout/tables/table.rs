//! [`Table`]: a table as a feature declares it (its name and stage, no id), and [`Feature`]: the
//! tables one feature declares, in the order they come within their stages.

use std::fmt;

use super::Stage;

/// A declared table. Its OpenFlow id comes from the [`super::TableGraph`] it is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Table {
    // The stage first: comparing tables of different stages stops at one byte.
    stage: Stage,
    name: &'static str,
}

impl Table {
    /// The table `name` (Antrea's spelling where the table does the same job) in `stage`.
    pub const fn new(name: &'static str, stage: Stage) -> Table {
        Table { stage, name }
    }

    /// The name shown in dumps, `antctl` and the docs.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The stage the table belongs to.
    pub fn stage(self) -> Stage {
        self.stage
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A feature of the pipeline and the tables it declares. Within a stage, a feature's tables
/// come in the order given here, after those of the features declared before it.
#[derive(Debug, Clone, Copy)]
pub struct Feature<'a> {
    /// What the feature does, for error messages.
    pub name: &'a str,
    pub tables: &'a [Table],
}
