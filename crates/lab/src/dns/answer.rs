//! What the lab's DNS answerer says to a query: A records for the names of the lab's Services
//! (authoritative for `cluster.local`), and the refusals a cluster DNS gives otherwise. Pure:
//! bytes in, bytes out; any input gives an answer or, for what cannot be a query, silence.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use super::message::{
    CLASS_IN, FLAG_AUTHORITATIVE, FLAG_RECURSION_DESIRED, FLAG_RESPONSE, HEADER_LEN, Message,
    Question, Rcode, Record, TYPE_A, TYPE_ANY, valid_name,
};
use crate::services::CLUSTER_DOMAIN;

/// Seconds a client may cache an answer: short, the lab's Services are rebuilt with each lab.
pub const TTL: u32 = 5;

/// The names the answerer knows, lower case, without a trailing dot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Zone {
    records: BTreeMap<String, Ipv4Addr>,
}

impl Zone {
    /// A zone of `records` (name, address); a name that cannot be written in a message is an
    /// error naming it.
    pub fn new(records: impl IntoIterator<Item = (String, Ipv4Addr)>) -> Result<Zone, String> {
        let mut zone = Zone::default();
        for (name, ip) in records {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            if !valid_name(&name) || name.is_empty() {
                return Err(format!("{name:?} is not a DNS name"));
            }
            zone.records.insert(name, ip);
        }
        Ok(zone)
    }

    /// The records file's text: one `name address` line each.
    pub fn to_text(&self) -> String {
        self.records
            .iter()
            .map(|(name, ip)| format!("{name} {ip}\n"))
            .collect()
    }

    /// Reads a records file (one `name address` line each; blank lines and `#` comments
    /// skipped); a bad line is an error naming it.
    pub fn parse(text: &str) -> Result<Zone, String> {
        let mut records = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut words = line.split_whitespace();
            let (Some(name), Some(ip), None) = (words.next(), words.next(), words.next()) else {
                return Err(format!("line {}: expected `name address`: {line:?}", n + 1));
            };
            let ip = ip
                .parse()
                .map_err(|_| format!("line {}: {ip:?} is not an IPv4 address", n + 1))?;
            records.push((name.to_owned(), ip));
        }
        Zone::new(records)
    }

    /// The address of `name` (any case, trailing dot or not).
    pub fn lookup(&self, name: &str) -> Option<Ipv4Addr> {
        self.records
            .get(&name.trim_end_matches('.').to_ascii_lowercase())
            .copied()
    }

    /// The response to the message `query`, or `None` for what gets no answer: fewer bytes than
    /// a header, or a response.
    pub fn answer(&self, query: &[u8]) -> Option<Vec<u8>> {
        let header = query.get(..HEADER_LEN)?;
        let id = u16::from_be_bytes([header[0], header[1]]);
        let flags = u16::from_be_bytes([header[2], header[3]]);
        if flags & FLAG_RESPONSE != 0 {
            return None;
        }
        let reply = |rcode: Rcode, questions: Vec<Question>, answers: Vec<Record>, aa: bool| {
            let mut flags =
                FLAG_RESPONSE | (flags & (0xf << 11)) | (flags & FLAG_RECURSION_DESIRED);
            if aa {
                flags |= FLAG_AUTHORITATIVE;
            }
            Message {
                id,
                flags: flags | rcode as u16,
                questions,
                answers,
            }
            .emit()
        };
        let Ok(message) = Message::parse(query) else {
            return Some(reply(Rcode::FormErr, vec![], vec![], false));
        };
        if message.opcode() != 0 {
            return Some(reply(Rcode::NotImp, vec![], vec![], false));
        }
        let [question] = message.questions.as_slice() else {
            return Some(reply(Rcode::FormErr, vec![], vec![], false));
        };
        let name = question.name.to_ascii_lowercase();
        let ours = name == CLUSTER_DOMAIN || name.ends_with(&format!(".{CLUSTER_DOMAIN}"));
        if question.qclass != CLASS_IN || !ours {
            return Some(reply(Rcode::Refused, vec![question.clone()], vec![], false));
        }
        Some(match self.lookup(&name) {
            None => reply(Rcode::NxDomain, vec![question.clone()], vec![], true),
            Some(ip) if matches!(question.qtype, TYPE_A | TYPE_ANY) => {
                let record = Record {
                    name: question.name.clone(),
                    rtype: TYPE_A,
                    class: CLASS_IN,
                    ttl: TTL,
                    data: ip.octets().to_vec(),
                };
                reply(Rcode::NoError, vec![question.clone()], vec![record], true)
            }
            Some(_) => reply(Rcode::NoError, vec![question.clone()], vec![], true),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dns::message::{FLAG_TRUNCATED, TYPE_AAAA};

    fn zone() -> Zone {
        Zone::parse(
            "# the lab's Services\nlab-web.default.svc.cluster.local 10.96.0.20\n\n\
             kube-dns.kube-system.svc.cluster.local. 10.96.0.10\n",
        )
        .unwrap()
    }

    fn ask(name: &str, qtype: u16) -> Message {
        let query = Message {
            id: 77,
            flags: FLAG_RECURSION_DESIRED,
            questions: vec![Question {
                name: name.into(),
                qtype,
                qclass: CLASS_IN,
            }],
            answers: vec![],
        };
        Message::parse(&zone().answer(&query.emit()).unwrap()).unwrap()
    }

    #[test]
    fn a_service_name_gets_its_cluster_ip() {
        let response = ask("Lab-Web.default.svc.cluster.local", TYPE_A);
        assert_eq!(response.id, 77);
        assert!(response.is_response());
        assert_eq!(
            response.flags & (FLAG_AUTHORITATIVE | FLAG_RECURSION_DESIRED | FLAG_TRUNCATED),
            FLAG_AUTHORITATIVE | FLAG_RECURSION_DESIRED
        );
        assert_eq!(response.rcode(), Rcode::NoError as u16);
        assert_eq!(
            response.questions[0].name,
            "Lab-Web.default.svc.cluster.local"
        );
        assert_eq!(
            response.answers,
            [Record {
                name: "Lab-Web.default.svc.cluster.local".into(),
                rtype: TYPE_A,
                class: CLASS_IN,
                ttl: TTL,
                data: vec![10, 96, 0, 20],
            }]
        );
        assert_eq!(
            zone().lookup("kube-dns.kube-system.svc.cluster.local."),
            Some(Ipv4Addr::new(10, 96, 0, 10))
        );
    }

    #[test]
    fn other_names_and_types_are_told_apart() {
        let aaaa = ask("lab-web.default.svc.cluster.local", TYPE_AAAA);
        assert_eq!(
            (aaaa.rcode(), aaaa.answers.len()),
            (Rcode::NoError as u16, 0)
        );
        let search = ask(
            "lab-web.default.svc.cluster.local.default.svc.cluster.local",
            TYPE_A,
        );
        assert_eq!(search.rcode(), Rcode::NxDomain as u16);
        let outside = ask("example.com", TYPE_A);
        assert_eq!(outside.rcode(), Rcode::Refused as u16);
    }

    #[test]
    fn what_is_not_a_query_gets_formerr_or_nothing() {
        let z = zone();
        assert_eq!(z.answer(b"\x00\x01"), None);
        let response_bit = b"\x00\x01\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00";
        assert_eq!(z.answer(response_bit), None);
        let cut = b"\x00\x09\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07lab";
        let formerr = Message::parse(&z.answer(cut).unwrap()).unwrap();
        assert_eq!((formerr.id, formerr.rcode()), (9, Rcode::FormErr as u16));
        let two = b"\x00\x09\x01\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01\x00\x00\x01\x00\x01";
        let two_questions = Message::parse(&z.answer(two).unwrap()).unwrap();
        assert_eq!(two_questions.rcode(), Rcode::FormErr as u16);
        let notify = b"\x00\x09\x20\x00\x00\x00\x00\x00\x00\x00\x00\x00";
        let notimp = Message::parse(&z.answer(notify).unwrap()).unwrap();
        assert_eq!(notimp.rcode(), Rcode::NotImp as u16);
    }

    #[test]
    fn bad_records_files_are_refused_with_the_line() {
        assert!(
            Zone::parse("a.cluster.local 10.0.0.300\n")
                .unwrap_err()
                .contains("line 1")
        );
        assert!(Zone::parse("\nonlyname\n").unwrap_err().contains("line 2"));
        assert!(Zone::parse("bad..name 10.0.0.1\n").is_err());
        assert_eq!(Zone::parse(&zone().to_text()), Ok(zone()));
    }

    #[test]
    fn arbitrary_queries_never_panic() {
        let z = zone();
        let mut seed = 0x1357_9bdf_u32;
        for len in 0..400 {
            let bytes: Vec<u8> = (0..len % 100)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    (seed >> 24) as u8
                })
                .collect();
            let _ = z.answer(&bytes);
        }
    }
}
