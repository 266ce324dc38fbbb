//! Transactions (RFC 7047 §5.2): the operations, conditions and mutations, a builder that
//! assembles them, and typed per-operation results.

mod builder;
mod condition;
mod operation;
mod outcome;

pub use builder::{OpIndex, Transaction};
pub use condition::{Condition, Function, Mutation, Mutator};
pub use operation::{Operation, WaitUntil};
pub use outcome::{OperationError, OperationResult, TransactOutcome};
