//! Ways to reach the fake: an in-process `tower::Service`, a plain-HTTP TCP listener with a
//! kubeconfig pointing at it, and (Unix) a plain-HTTP Unix-socket listener.

mod kubeconfig;
mod listener;
mod service;
mod tcp;
#[cfg(unix)]
mod unix;

pub use service::FakeService;
pub use tcp::TcpServer;
#[cfg(unix)]
pub use unix::UnixServer;
