//! The lab's cluster DNS: an answerer run in a Pod behind the `kube-dns` Service, serving the A
//! records of the lab's Services over UDP and TCP. The messages ([`message`]), what is answered
//! ([`answer`]) and the sockets ([`server`]).

pub mod answer;
pub mod message;
pub mod server;

pub use answer::Zone;
