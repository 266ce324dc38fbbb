//! `heap::use_one_arena` in a process of its own (no other test's threads have arenas yet):
//! threads that contend for the allocator afterwards create no arena.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::sync::{Arc, Barrier};

#[test]
fn threads_contending_for_the_allocator_share_one_arena() {
    assert!(agent::heap::use_one_arena(), "mallopt refused M_ARENA_MAX");
    let before = agent::heap::arena_count().expect("malloc_info reports the arenas");
    let threads = 16;
    let barrier = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let mut held: Vec<Vec<u8>> = Vec::new();
                for i in 0..20_000 {
                    held.push(vec![(t + i) as u8; 64 + i % 512]);
                    if held.len() > 256 {
                        held.swap_remove(i % 256);
                    }
                }
                held.len()
            })
        })
        .collect();
    for worker in workers {
        assert!(worker.join().unwrap() > 0);
    }
    let after = agent::heap::arena_count().expect("malloc_info reports the arenas");
    assert_eq!(
        after,
        before,
        "{threads} contending threads made {} new arena(s)",
        after - before
    );
}
