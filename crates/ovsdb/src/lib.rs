//! (placeholder until the ovsdb work lands)
