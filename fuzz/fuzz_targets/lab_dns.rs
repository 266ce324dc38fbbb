//! The lab's DNS answerer on any bytes (`lab::dns`): a message that parses, with names it can
//! write, parses again to itself once emitted; the zone's answer to any query never panics and
//! is itself a message that parses, a response carrying the query's ID.
#![no_main]

use lab::dns::answer::Zone;
use lab::dns::message::{Message, valid_name};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(message) = Message::parse(data) {
        let writable = message.questions.iter().all(|q| valid_name(&q.name))
            && message.answers.iter().all(|r| valid_name(&r.name))
            && message.answers.iter().all(|r| r.data.len() <= usize::from(u16::MAX));
        if writable {
            assert_eq!(Message::parse(&message.emit()), Ok(message));
        }
    }
    let zone = Zone::new([
        ("kube-dns.kube-system.svc.cluster.local".to_owned(), [10, 96, 0, 10].into()),
        ("lab-web.default.svc.cluster.local".to_owned(), [10, 96, 0, 20].into()),
    ])
    .expect("a valid zone");
    if let Some(reply) = zone.answer(data) {
        let reply = Message::parse(&reply).expect("an answer parses");
        assert!(reply.is_response());
        assert_eq!(reply.id.to_be_bytes(), [data[0], data[1]]);
    }
});
