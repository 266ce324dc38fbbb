//! Match fields: (to be written)
