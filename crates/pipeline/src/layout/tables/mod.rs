//! The pipeline's tables: each feature declares its tables with a [`Stage`] ([`features`]), and
//! the [`TableGraph`] orders them by stage, then in declaration order, and numbers them densely
//! from 0 in that order. Renderers name tables and ask the graph for ids and goto targets
//! ([`TableGraph::next`], [`TableGraph::first`]); no OpenFlow table id is written anywhere else.

pub mod features;
mod graph;
mod stage;
mod table;

#[cfg(test)]
mod extra_table_tests;
#[cfg(test)]
pub(crate) mod named_text;

pub use features::*;
pub use graph::{GraphError, TableGraph};
pub use stage::Stage;
pub use table::{Feature, Table};
