//! The outcome of an idempotent "make it so" call.

/// What an `ensure_*` call had to do to reach the wanted state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ensured {
    /// The object did not exist and was created.
    Created,
    /// The object existed with other settings; it was removed and created anew.
    Replaced,
    /// The object existed as wanted; nothing was changed.
    Unchanged,
}
