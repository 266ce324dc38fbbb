//! The async connection: (to be written)
