//! Actions and instructions: (to be written)
