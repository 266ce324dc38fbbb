//! Ways to reach the fake: an in-process `tower::Service` and a plain-HTTP TCP listener with a
//! kubeconfig pointing at it.

mod kubeconfig;
mod service;
mod tcp;

pub use service::FakeService;
pub use tcp::TcpServer;
