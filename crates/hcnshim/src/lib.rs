//! `computenetwork.dll` for Wine: the HCN exports `hcn::HcnClient` resolves, served by the HNS
//! fake of the `hcn` crate (`hcn::fake::FakeHcn`), so that the client's real FFI code (wide
//! strings, GUIDs, HRESULTs, error records, `CoTaskMemAlloc`'d strings, handles) runs under Wine,
//! which has no HCN. Test infrastructure only; never shipped. See docs/hcn.md, "The Wine shim".
//!
//! - [`service`]: the calls with the DLL's semantics, as safe Rust over JSON text and handle
//!   numbers; every rule comes from the fake.
//! - [`store`]: where the fake's state lives: in the process, or in the file named by
//!   [`store::STATE_ENV`], read before and written after every call, as HNS keeps its state
//!   outside the client's process.
//! - [`trace`]: one JSON line per export call in the file named by [`trace::TRACE_ENV`], for
//!   tests to check what the client called and that it closed every handle.
//! - `ffi` (Windows): the `extern "system"` exports, the only `unsafe` code, and `DllMain`,
//!   which refuses to load when [`ABSENT_ENV`] is `1`.

#[cfg(windows)]
mod ffi;
pub mod service;
pub mod store;
pub mod trace;

/// Set to `1` in a process's environment, the DLL fails to load in it (`LoadLibrary` gives
/// ERROR_DLL_INIT_FAILED), as on a host without `computenetwork.dll`.
pub const ABSENT_ENV: &str = "ANTREA_HCN_SHIM_ABSENT";
