//! The lab's life: `up` builds it (and removes everything again if building fails), `status`
//! shows what exists, `down` removes every process, namespace and file it made.

pub mod down;
pub mod node;
pub mod status;
pub mod up;
