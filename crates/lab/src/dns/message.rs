//! The DNS messages the lab's answerer reads and writes (RFC 1035 §4): the header, the
//! questions and the answer records. [`Message::parse`] is a decode entry point: any bytes give
//! a message or a [`DnsError`], never a panic. Names in the question and answer sections may be
//! compressed (pointers are followed, at most [`MAX_POINTERS`] of them); the authority and
//! additional sections (an EDNS OPT record) are skipped. [`Message::emit`] writes names
//! uncompressed except an answer naming the first question, which points at it, as servers do.

use std::fmt;

/// The header's length.
pub const HEADER_LEN: usize = 12;
/// Pointers followed in one name before it is refused (a loop guard).
pub const MAX_POINTERS: usize = 16;
/// A name's longest encoding (RFC 1035 §2.3.4).
const MAX_NAME_LEN: usize = 255;
/// A label's longest length.
const MAX_LABEL_LEN: usize = 63;

/// Record type A.
pub const TYPE_A: u16 = 1;
/// Record type AAAA.
pub const TYPE_AAAA: u16 = 28;
/// Query type ANY (`*`).
pub const TYPE_ANY: u16 = 255;
/// Class IN.
pub const CLASS_IN: u16 = 1;

/// Header flag: a response.
pub const FLAG_RESPONSE: u16 = 0x8000;
/// Header flag: an authoritative answer.
pub const FLAG_AUTHORITATIVE: u16 = 0x0400;
/// Header flag: truncated.
pub const FLAG_TRUNCATED: u16 = 0x0200;
/// Header flag: recursion desired (copied from the query).
pub const FLAG_RECURSION_DESIRED: u16 = 0x0100;

/// Response codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rcode {
    /// No error.
    NoError = 0,
    /// The query could not be read.
    FormErr = 1,
    /// The name does not exist.
    NxDomain = 3,
    /// The kind of query is not implemented.
    NotImp = 4,
    /// The server will not answer this.
    Refused = 5,
}

/// A message that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DnsError {
    /// The message ends inside a field.
    #[error("message truncated in {0}")]
    Truncated(&'static str),
    /// A name is malformed.
    #[error("bad name: {0}")]
    Name(String),
}

/// One question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// The name, labels joined by dots, without the root's trailing dot.
    pub name: String,
    /// The query type.
    pub qtype: u16,
    /// The query class.
    pub qclass: u16,
}

/// One resource record of the answer section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The owner name.
    pub name: String,
    /// The type.
    pub rtype: u16,
    /// The class.
    pub class: u16,
    /// Seconds it may be cached.
    pub ttl: u32,
    /// The data (an A record's 4 address bytes).
    pub data: Vec<u8>,
}

/// A DNS message as the lab uses it: header, questions and answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The ID, copied from query to response.
    pub id: u16,
    /// The flags word: QR, opcode, AA, TC, RD, RA, Z, rcode.
    pub flags: u16,
    /// The question section.
    pub questions: Vec<Question>,
    /// The answer section.
    pub answers: Vec<Record>,
}

impl Message {
    /// The opcode (0: a standard query).
    pub fn opcode(&self) -> u16 {
        (self.flags >> 11) & 0xf
    }

    /// The response code bits.
    pub fn rcode(&self) -> u16 {
        self.flags & 0xf
    }

    /// Whether it is a response.
    pub fn is_response(&self) -> bool {
        self.flags & FLAG_RESPONSE != 0
    }

    /// Reads a message.
    pub fn parse(bytes: &[u8]) -> Result<Message, DnsError> {
        let mut reader = Reader { bytes, at: 0 };
        let id = reader.u16("header")?;
        let flags = reader.u16("header")?;
        let counts = [
            reader.u16("header")?,
            reader.u16("header")?,
            reader.u16("header")?,
            reader.u16("header")?,
        ];
        let mut questions = Vec::new();
        for _ in 0..counts[0] {
            let name = reader.name()?;
            let qtype = reader.u16("question")?;
            let qclass = reader.u16("question")?;
            questions.push(Question {
                name,
                qtype,
                qclass,
            });
        }
        let mut answers = Vec::new();
        for _ in 0..counts[1] {
            answers.push(reader.record()?);
        }
        for _ in 0..u32::from(counts[2]) + u32::from(counts[3]) {
            reader.record()?;
        }
        Ok(Message {
            id,
            flags,
            questions,
            answers,
        })
    }

    /// Writes the message; an answer whose name is the first question's points at it. Names
    /// are written as given: pass names parsed from a message or checked with [`valid_name`]
    /// (a longer label is cut at 63 bytes rather than written wrong).
    pub fn emit(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(512);
        let count = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
        for word in [
            self.id,
            self.flags,
            count(self.questions.len()),
            count(self.answers.len()),
            0,
            0,
        ] {
            out.extend_from_slice(&word.to_be_bytes());
        }
        for q in &self.questions {
            write_name(&mut out, &q.name);
            out.extend_from_slice(&q.qtype.to_be_bytes());
            out.extend_from_slice(&q.qclass.to_be_bytes());
        }
        let first = self.questions.first().map(|q| q.name.as_str());
        for r in &self.answers {
            if first == Some(r.name.as_str()) {
                out.extend_from_slice(&(0xc000 | HEADER_LEN as u16).to_be_bytes());
            } else {
                write_name(&mut out, &r.name);
            }
            out.extend_from_slice(&r.rtype.to_be_bytes());
            out.extend_from_slice(&r.class.to_be_bytes());
            out.extend_from_slice(&r.ttl.to_be_bytes());
            out.extend_from_slice(&count(r.data.len()).to_be_bytes());
            out.extend_from_slice(&r.data);
        }
        out
    }
}

impl fmt::Display for Question {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} type {} class {}", self.name, self.qtype, self.qclass)
    }
}

/// Whether `name` can be written: labels of 1 to 63 printable ASCII bytes other than `.`, at
/// most 255 bytes encoded (the root, `""`, included).
pub fn valid_name(name: &str) -> bool {
    name.is_empty()
        || (name.len() + 2 <= MAX_NAME_LEN
            && name.split('.').all(|label| {
                (1..=MAX_LABEL_LEN).contains(&label.len())
                    && label.bytes().all(|b| b.is_ascii_graphic())
            }))
}

fn write_name(out: &mut Vec<u8>, name: &str) {
    if !name.is_empty() {
        for label in name.split('.') {
            let bytes = &label.as_bytes()[..label.len().min(MAX_LABEL_LEN)];
            out.push(bytes.len() as u8);
            out.extend_from_slice(bytes);
        }
    }
    out.push(0);
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&[u8], DnsError> {
        let end = self.at.checked_add(n).ok_or(DnsError::Truncated(what))?;
        let slice = self
            .bytes
            .get(self.at..end)
            .ok_or(DnsError::Truncated(what))?;
        self.at = end;
        Ok(slice)
    }

    fn u16(&mut self, what: &'static str) -> Result<u16, DnsError> {
        let b = self.take(2, what)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self, what: &'static str) -> Result<u32, DnsError> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn record(&mut self) -> Result<Record, DnsError> {
        let name = self.name()?;
        let rtype = self.u16("record")?;
        let class = self.u16("record")?;
        let ttl = self.u32("record")?;
        let len = self.u16("record")?;
        let data = self.take(usize::from(len), "record data")?.to_vec();
        Ok(Record {
            name,
            rtype,
            class,
            ttl,
            data,
        })
    }

    /// Reads a name at the cursor, following pointers; the cursor ends after the name's first
    /// pointer or its terminating zero.
    fn name(&mut self) -> Result<String, DnsError> {
        let mut labels: Vec<String> = Vec::new();
        let mut at = self.at;
        let mut resume = None;
        let mut pointers = 0;
        let mut encoded = 1;
        loop {
            let len = *self.bytes.get(at).ok_or(DnsError::Truncated("name"))?;
            match len & 0xc0 {
                0x00 if len == 0 => {
                    at += 1;
                    break;
                }
                0x00 => {
                    let start = at + 1;
                    let label = self
                        .bytes
                        .get(start..start + usize::from(len))
                        .ok_or(DnsError::Truncated("name"))?;
                    if !label.iter().all(|b| b.is_ascii_graphic() && *b != b'.') {
                        return Err(DnsError::Name(format!(
                            "label {:?} is not printable ASCII without dots",
                            String::from_utf8_lossy(label)
                        )));
                    }
                    encoded += label.len() + 1;
                    if encoded > MAX_NAME_LEN {
                        return Err(DnsError::Name("longer than 255 bytes".into()));
                    }
                    labels.push(String::from_utf8_lossy(label).into_owned());
                    at = start + label.len();
                }
                0xc0 => {
                    let low = *self.bytes.get(at + 1).ok_or(DnsError::Truncated("name"))?;
                    pointers += 1;
                    if pointers > MAX_POINTERS {
                        return Err(DnsError::Name("too many compression pointers".into()));
                    }
                    resume.get_or_insert(at + 2);
                    at = usize::from(u16::from_be_bytes([len & 0x3f, low]));
                }
                _ => {
                    return Err(DnsError::Name(format!(
                        "label type {:#04x} is not supported",
                        len & 0xc0
                    )));
                }
            }
        }
        self.at = resume.unwrap_or(at);
        Ok(labels.join("."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `dig +noedns lab-web.default.svc.cluster.local A` as it goes on the wire (id 0x1234, RD).
    const QUERY: &[u8] = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\
        \x07lab-web\x07default\x03svc\x07cluster\x05local\x00\x00\x01\x00\x01";

    fn query() -> Message {
        Message {
            id: 0x1234,
            flags: FLAG_RECURSION_DESIRED,
            questions: vec![Question {
                name: "lab-web.default.svc.cluster.local".into(),
                qtype: TYPE_A,
                qclass: CLASS_IN,
            }],
            answers: vec![],
        }
    }

    #[test]
    fn a_query_parses_and_emits_the_same_bytes() {
        assert_eq!(Message::parse(QUERY), Ok(query()));
        assert_eq!(query().emit(), QUERY);
    }

    #[test]
    fn an_answer_points_at_the_question_and_round_trips() {
        let mut response = query();
        response.flags |= FLAG_RESPONSE | FLAG_AUTHORITATIVE;
        response.answers.push(Record {
            name: "lab-web.default.svc.cluster.local".into(),
            rtype: TYPE_A,
            class: CLASS_IN,
            ttl: 5,
            data: vec![10, 96, 0, 20],
        });
        let bytes = response.emit();
        assert_eq!(&bytes[QUERY.len()..QUERY.len() + 2], b"\xc0\x0c");
        assert_eq!(Message::parse(&bytes), Ok(response));
    }

    #[test]
    fn edns_and_authority_records_are_skipped() {
        let mut with_opt = QUERY.to_vec();
        with_opt[11] = 1; // ARCOUNT 1: an OPT record, root name, type 41, 4096, no options
        with_opt.extend_from_slice(b"\x00\x00\x29\x10\x00\x00\x00\x00\x00\x00\x00");
        assert_eq!(Message::parse(&with_opt), Ok(query()));
    }

    #[test]
    fn every_cut_of_a_message_is_an_error() {
        let mut response = query();
        response.answers.push(Record {
            name: "x".into(),
            rtype: TYPE_A,
            class: CLASS_IN,
            ttl: 5,
            data: vec![1, 2, 3, 4],
        });
        let bytes = response.emit();
        for len in 0..bytes.len() {
            assert!(Message::parse(&bytes[..len]).is_err(), "cut at {len}");
        }
    }

    #[test]
    fn pointer_loops_and_bad_labels_are_refused() {
        let mut looped = QUERY[..HEADER_LEN].to_vec();
        looped.extend_from_slice(b"\xc0\x0c\x00\x01\x00\x01");
        assert!(matches!(Message::parse(&looped), Err(DnsError::Name(_))));
        let mut extended = QUERY[..HEADER_LEN].to_vec();
        extended.extend_from_slice(b"\x41abc\x00\x00\x01\x00\x01");
        assert!(matches!(Message::parse(&extended), Err(DnsError::Name(_))));
        let mut dotted = QUERY[..HEADER_LEN].to_vec();
        dotted.extend_from_slice(b"\x03a.b\x00\x00\x01\x00\x01");
        assert!(matches!(Message::parse(&dotted), Err(DnsError::Name(_))));
        let mut long = QUERY[..HEADER_LEN].to_vec();
        for _ in 0..5 {
            long.push(63);
            long.extend_from_slice(&[b'a'; 63]);
        }
        long.extend_from_slice(b"\x00\x00\x01\x00\x01");
        assert!(matches!(Message::parse(&long), Err(DnsError::Name(_))));
    }

    #[test]
    fn names_are_checked_before_writing() {
        assert!(valid_name("kube-dns.kube-system.svc.cluster.local"));
        assert!(valid_name(""));
        assert!(!valid_name("a..b"));
        assert!(!valid_name(&"a".repeat(64)));
        assert!(!valid_name("sp ace"));
    }

    /// A small xorshift generator: the same bytes every run.
    fn noise(seed: &mut u32) -> u8 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 17;
        *seed ^= *seed << 5;
        (*seed >> 24) as u8
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut seed = 0x2545_f491;
        for len in 0..600 {
            let bytes: Vec<u8> = (0..len % 120).map(|_| noise(&mut seed)).collect();
            let _ = Message::parse(&bytes);
            // Valid headers with random bodies reach the name and record readers.
            let mut framed = QUERY[..HEADER_LEN].to_vec();
            framed[5] = noise(&mut seed) % 4;
            framed[7] = noise(&mut seed) % 4;
            framed[11] = noise(&mut seed) % 4;
            framed.extend_from_slice(&bytes);
            let _ = Message::parse(&framed);
        }
    }

    /// A random name of 0 to 4 labels of 1 to 20 characters.
    fn random_name(seed: &mut u32) -> String {
        let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789-_";
        let labels = usize::from(noise(seed) % 5);
        (0..labels)
            .map(|_| {
                let len = 1 + usize::from(noise(seed) % 20);
                (0..len)
                    .map(|_| char::from(alphabet[usize::from(noise(seed)) % alphabet.len()]))
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join(".")
    }

    #[test]
    fn random_valid_messages_round_trip() {
        let mut seed = 0x9e37_79b9;
        for _ in 0..300 {
            let question = Question {
                name: random_name(&mut seed),
                qtype: TYPE_A,
                qclass: CLASS_IN,
            };
            let answers = (0..noise(&mut seed) % 3)
                .map(|i| Record {
                    name: if i == 0 {
                        question.name.clone()
                    } else {
                        random_name(&mut seed)
                    },
                    rtype: TYPE_A,
                    class: CLASS_IN,
                    ttl: u32::from(i) * 7,
                    data: vec![i; 4],
                })
                .collect();
            let message = Message {
                id: u16::from(noise(&mut seed)),
                flags: FLAG_RESPONSE,
                questions: vec![question],
                answers,
            };
            assert_eq!(Message::parse(&message.emit()), Ok(message));
        }
    }
}
