//! The connection's frame reader on an arbitrary byte stream: never panics, and every frame it
//! yields is a whole message of the length its header announces, cut in stream order.
#![no_main]

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use libfuzzer_sys::fuzz_target;
use openflow::conn::frame::FrameReader;

/// Drives a future that never waits (a reader over a byte slice is always ready).
fn ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(out) => out,
        Poll::Pending => panic!("a frame reader over a byte slice waited"),
    }
}

fuzz_target!(|data: &[u8]| {
    let (max, stream) = match data.split_first() {
        // The first byte picks a limit between 8 and 65535 bytes.
        Some((&m, rest)) => (8 + usize::from(m) * 257, rest),
        None => return,
    };
    let mut reader = FrameReader::new(stream, max);
    let mut offset = 0;
    while let Ok(Some(frame)) = ready(reader.next()) {
        let len = usize::from(u16::from_be_bytes([frame[2], frame[3]]));
        assert_eq!(frame.len(), len);
        assert!((8..=max).contains(&len));
        assert_eq!(frame[..], stream[offset..offset + len]);
        offset += len;
    }
});
