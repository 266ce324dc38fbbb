//! Reading ovs-vswitchd's conntrack: the UDP entries of zone 65520 as `dpctl/dump-conntrack
//! zone=65520` lists them, one a line:
//!
//! ```text
//! udp,orig=(src=10.244.1.5,dst=10.96.0.30,sport=40001,dport=53),reply=(src=10.244.1.11,dst=10.244.1.5,sport=5353,dport=40001),zone=65520
//! ```
//!
//! Each becomes (original destination, reply source): for a DNATed Service connection, the
//! frontend and the endpoint. Lines of other protocols, IPv6, or that do not read are skipped.

use std::net::SocketAddrV4;

/// The (original destination, reply source) of every UDP entry of `dump`.
pub(super) fn udp_entries(dump: &str) -> Vec<(SocketAddrV4, SocketAddrV4)> {
    dump.lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("udp,")?;
            let orig = tuple(rest, "orig=(")?;
            let reply = tuple(rest, "reply=(")?;
            Some((
                SocketAddrV4::new(field(orig, "dst")?, field(orig, "dport")?),
                SocketAddrV4::new(field(reply, "src")?, field(reply, "sport")?),
            ))
        })
        .collect()
}

/// The text between `start` and the next `)` in `line`.
fn tuple<'a>(line: &'a str, start: &str) -> Option<&'a str> {
    let from = line.find(start)? + start.len();
    let len = line[from..].find(')')?;
    Some(&line[from..from + len])
}

/// The value of `name=` in a tuple's comma-separated fields.
fn field<T: std::str::FromStr>(tuple: &str, name: &str) -> Option<T> {
    tuple
        .split(',')
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn addr(text: &str) -> Ipv4Addr {
        text.parse().unwrap()
    }

    #[test]
    fn udp_entries_are_the_frontend_and_the_endpoint_and_the_rest_is_skipped() {
        let dump = "\
udp,orig=(src=10.244.1.5,dst=10.96.0.30,sport=40001,dport=53),reply=(src=10.244.1.11,dst=10.244.1.5,sport=5353,dport=40001),zone=65520
tcp,orig=(src=10.244.1.5,dst=10.96.0.10,sport=40002,dport=80),reply=(src=10.244.1.12,dst=10.244.1.5,sport=8080,dport=40002),zone=65520,protoinfo=(state=ESTABLISHED)
udp,orig=(src=fd00::5,dst=fd00::30,sport=40003,dport=53),reply=(src=fd00::11,dst=fd00::5,sport=5353,dport=40003),zone=65520
udp,orig=(src=10.244.1.5,dst=10.96.0.30,sport=40004,dport=53),reply=(src=10.244.1.11
garbage
";
        assert_eq!(
            udp_entries(dump),
            [(
                SocketAddrV4::new(addr("10.96.0.30"), 53),
                SocketAddrV4::new(addr("10.244.1.11"), 5353)
            )]
        );
    }
}
