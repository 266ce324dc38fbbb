//! The container runtime of `up --runtime containerd`: one containerd per Node that creates
//! the Pods as Pod sandboxes through CRI and calls the `antrea` plugin itself, with its own CNI
//! library, `CNI_ARGS` and runtime configuration. The lab builds the sandbox image locally
//! (nothing is pulled), writes each containerd's configuration and conflist, and removes every
//! sandbox, process and mount again on `down`. (`--runtime direct`, the default, is the lab
//! acting as the runtime itself: [`crate::wiring::agent::add_pod`].)

pub mod config;
pub mod containerd;
pub mod cri;
pub mod image;
pub mod pod;
pub mod tar;
pub mod teardown;
