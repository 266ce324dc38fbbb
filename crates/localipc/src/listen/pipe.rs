//! Named-pipe listeners: every instance carries the DACL of the listener's [`Access`], remote
//! clients are rejected, and one instance always waits for the next client so a client never
//! finds the pipe missing between two accepts.

use std::io;

use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
use windows_sys::Win32::Foundation::{ERROR_ACCESS_DENIED, ERROR_NO_DATA};

use crate::ffi::{self, SecurityDescriptor};
use crate::{Access, Stream};

#[derive(Debug)]
pub(super) struct PipeListener {
    name: String,
    security: SecurityDescriptor,
    /// The instance waiting for the next client.
    pending: NamedPipeServer,
}

impl PipeListener {
    /// Creates the first instance of pipe `name`; fails if the pipe already exists.
    ///
    /// `FILE_FLAG_FIRST_PIPE_INSTANCE` makes creation fail atomically on Windows. Wine 8 ignores
    /// that flag (it joins the existing pipe), so the pipe's existence is also checked first;
    /// on Wine only that check protects, with a short race window.
    pub(super) fn create(name: &str, access: Access) -> io::Result<Self> {
        if ffi::pipe_exists(name)? {
            return Err(in_use(None));
        }
        let security = SecurityDescriptor::from_sddl(access.sddl())?;
        let pending = create_instance(name, &security, true).map_err(|e| {
            if e.raw_os_error() == Some(ERROR_ACCESS_DENIED as i32) {
                in_use(Some(e))
            } else {
                e
            }
        })?;
        Ok(PipeListener {
            name: name.to_owned(),
            security,
            pending,
        })
    }

    /// Waits for a client on the pending instance, creates the next pending instance, then
    /// hands out the connected one.
    pub(super) async fn accept(&mut self) -> io::Result<Stream> {
        loop {
            match self.pending.connect().await {
                Ok(()) => {
                    let next = create_instance(&self.name, &self.security, false)?;
                    return Ok(Box::pin(std::mem::replace(&mut self.pending, next)));
                }
                // The client connected and left before we saw it: serve the next one on a
                // fresh instance.
                Err(e) if e.raw_os_error() == Some(ERROR_NO_DATA as i32) => {
                    self.pending = create_instance(&self.name, &self.security, false)?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    pub(super) fn dacl_sddl(&self) -> io::Result<String> {
        ffi::dacl_sddl(std::os::windows::io::AsHandle::as_handle(&self.pending))
    }
}

fn in_use(cause: Option<io::Error>) -> io::Error {
    let cause = cause.map(|e| format!(" ({e})")).unwrap_or_default();
    io::Error::new(
        io::ErrorKind::AddrInUse,
        format!("already in use: another server has this pipe{cause}"),
    )
}

fn create_instance(
    name: &str,
    security: &SecurityDescriptor,
    first: bool,
) -> io::Result<NamedPipeServer> {
    let mut options = ServerOptions::new();
    options
        .first_pipe_instance(first)
        .reject_remote_clients(true);
    ffi::create_pipe_instance(&options, name, security)
}
