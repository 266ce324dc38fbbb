//! The agent's heap: one allocator arena for the whole process, and freed memory given back to
//! the operating system after a large change.
//!
//! glibc gives threads their own arenas (up to eight per core) as soon as they contend for one,
//! and memory freed in one arena serves only that arena's threads; the agent's runtime workers
//! take turns on the same state, so its pieces end up spread over several arenas, each keeping
//! its own free pages. [`use_one_arena`], called before any thread starts, keeps every thread
//! on the main arena (measured: 164 -> 138 MiB held at issue 12's scale, docs/benchmarks.md).
//! A node agent allocates far too little for the shared lock to matter.
//!
//! Installing a large change (a Node's first NetworkPolicy span of 50,000 flows, 10,000
//! Services) allocates about as much again as the state it leaves behind: the rendered flows,
//! the diff, the encoded bundle. With glibc's allocator, memory freed in the middle of a heap,
//! and in the per-thread arenas of the runtime's workers, stays resident, so the agent's RSS
//! would keep the peak of its largest change for the rest of its life (measured: 207 MiB held
//! for about 90 MiB live, docs/benchmarks.md). [`release_freed`] asks glibc to return it
//! (`malloc_trim`, which walks every arena and gives back whole free pages); [`after_change`]
//! does it once per large change, called where everything built for the change is dropped:
//! by the NetworkPolicy controller after its delta (trimmed before, the agent held 2 MiB
//! more), by the datapath after a Service's update.
//!
//! This is the module's FFI; elsewhere (Windows, whose heap decommits freed pages itself, or a
//! libc without `malloc_trim`) there is nothing to call and [`release_freed`] does nothing.

/// Keeps every thread of the process on one allocator arena; whether the allocator took the
/// setting. Call it before any thread starts: threads that already have an arena keep it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn use_one_arena() -> bool {
    // SAFETY: mallopt only sets a parameter of the allocator, under its lock; M_ARENA_MAX with a
    // positive value is one glibc documents.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) == 1 }
}

/// Keeps every thread of the process on one allocator arena; whether the allocator took the
/// setting (there is nothing to set outside glibc).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn use_one_arena() -> bool {
    false
}

/// How many allocator arenas the process has (from glibc's `malloc_info` report); `None`
/// where it cannot be told. Logged at start, so an operator sees [`use_one_arena`] took.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn arena_count() -> Option<usize> {
    let path = std::env::temp_dir().join(format!("antrea-heap-{}.xml", std::process::id()));
    let c_path = std::ffi::CString::new(path.to_str()?).ok()?;
    // SAFETY: both arguments are NUL-terminated strings that outlive the call.
    let file = unsafe { libc::fopen(c_path.as_ptr(), c"w".as_ptr()) };
    if file.is_null() {
        return None;
    }
    // SAFETY: `file` is a stream opened for writing above, closed once right after; malloc_info
    // takes options 0 and writes its XML report to it.
    let written = unsafe { libc::malloc_info(0, file) == 0 && libc::fclose(file) == 0 };
    let report = std::fs::read_to_string(&path);
    let _ = std::fs::remove_file(&path);
    let report = report.ok().filter(|_| written)?;
    Some(report.matches("<heap nr=").count())
}

/// How many allocator arenas the process has; `None` outside glibc.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn arena_count() -> Option<usize> {
    None
}

/// Changes of at least this many flow mods are followed by [`release_freed`]: large enough
/// that a Pod's or a Service's change never pays for a walk of the heap.
pub const LARGE_CHANGE_MODS: usize = 4096;

/// Once a change of `mods` flow, group and meter mods is installed and everything built for it
/// (the delta, the rendered flows, the renderer's journal, the diff) is dropped: after a large
/// change ([`LARGE_CHANGE_MODS`]) the memory freed goes back to the OS ([`release_freed`]).
pub fn after_change(mods: usize) {
    if mods >= LARGE_CHANGE_MODS && release_freed() {
        tracing::debug!(
            "{mods} flow, group and meter mods installed; the memory freed since went back to the OS"
        );
    }
}

/// Returns the heap's free pages to the operating system; whether any were returned.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn release_freed() -> bool {
    // SAFETY: malloc_trim takes a pad size and only walks and trims the allocator's own heaps
    // under their locks; it is safe to call from any thread at any time.
    unsafe { libc::malloc_trim(0) == 1 }
}

/// Returns the heap's free pages to the operating system; whether any were returned.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_freed() -> bool {
    false
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    fn rss_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    }

    #[test]
    fn memory_freed_under_a_live_block_goes_back_to_the_os() {
        // 256 MiB in small blocks, then everything freed but the last block, which keeps the
        // heap from shrinking at its top: the freed pages stay resident until released.
        let blocks: Vec<Box<[u8; 512]>> = (0..512 * 1024)
            .map(|i| Box::new([(i % 251) as u8; 512]))
            .collect();
        let checksum: u64 = blocks.iter().map(|b| u64::from(b[0])).sum();
        assert!(checksum > 0);
        let mut blocks = blocks;
        let kept = blocks.pop();
        drop(blocks);
        let before = rss_kib();
        assert!(release_freed(), "malloc_trim returned nothing");
        let after = rss_kib();
        assert!(
            before.saturating_sub(after) > 128 * 1024,
            "RSS {before} KiB before, {after} KiB after: less than 128 MiB given back"
        );
        drop(kept);
    }
}
