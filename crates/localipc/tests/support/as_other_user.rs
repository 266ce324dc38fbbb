//! FFI: runs a closure on a thread whose credentials are those of `nobody` (65534). Linux
//! credentials are per thread at the system-call level (only libc's wrappers broadcast them to
//! every thread), so the raw `setresuid` below affects that one thread, which then ends.

use std::io;

const NOBODY: libc::uid_t = 65534;

/// Whether the process may switch user (it runs as root).
pub fn available() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// Runs `f` as user and group `nobody` on a new thread and returns its result.
pub fn run<T: Send + 'static>(f: impl FnOnce() -> io::Result<T> + Send + 'static) -> io::Result<T> {
    std::thread::spawn(move || {
        // SAFETY: raw setresgid/setresuid system calls with valid ids; they change only the
        // calling thread's credentials, and this thread ends when `f` returns.
        let rc = unsafe {
            let g = libc::syscall(libc::SYS_setresgid, NOBODY, NOBODY, NOBODY);
            if g == 0 {
                libc::syscall(libc::SYS_setresuid, NOBODY, NOBODY, NOBODY)
            } else {
                g
            }
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        f()
    })
    .join()
    .expect("thread running as nobody panicked")
}
