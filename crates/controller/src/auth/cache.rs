//! [`AnswerCache`]: the agents recently authenticated, by the SHA-256 of their token (never the
//! token itself), each kept for a short time so that an agent's reconnections do not each cost
//! a TokenReview. Bounded: when full, the expired answers go first, then the one nearest to
//! expiry.

use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

use controlplane::Watcher;

/// A token's SHA-256: what the cache is keyed by and what logs show (its first bytes).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenDigest([u8; 32]);

impl TokenDigest {
    pub fn of(token: &str) -> TokenDigest {
        let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
        let mut bytes = [0; 32];
        bytes.copy_from_slice(digest.as_ref());
        TokenDigest(bytes)
    }
}

/// `sha256:` and the first 8 bytes in hex: enough to tell tokens apart in a log.
impl fmt::Display for TokenDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        self.0[..8].iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for TokenDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[derive(Debug)]
struct Answer {
    watcher: Watcher,
    expires: Instant,
}

/// Accepted tokens' answers, each kept for `ttl`, at most `capacity` of them.
#[derive(Debug)]
pub struct AnswerCache {
    ttl: Duration,
    capacity: usize,
    answers: HashMap<TokenDigest, Answer>,
}

impl AnswerCache {
    /// A cache keeping answers for `ttl` (zero: none kept), at most `capacity` of them.
    pub fn new(ttl: Duration, capacity: usize) -> AnswerCache {
        AnswerCache {
            ttl,
            capacity,
            answers: HashMap::new(),
        }
    }

    /// The answer kept for `token`, if it has not expired at `now`.
    pub fn get(&mut self, token: &TokenDigest, now: Instant) -> Option<Watcher> {
        match self.answers.get(token) {
            Some(answer) if answer.expires > now => Some(answer.watcher.clone()),
            Some(_) => {
                self.answers.remove(token);
                None
            }
            None => None,
        }
    }

    /// Keeps `watcher` as the answer for `token` from `now` on.
    pub fn insert(&mut self, token: TokenDigest, watcher: Watcher, now: Instant) {
        if self.ttl.is_zero() || self.capacity == 0 {
            return;
        }
        if self.answers.len() >= self.capacity && !self.answers.contains_key(&token) {
            self.answers.retain(|_, answer| answer.expires > now);
        }
        if self.answers.len() >= self.capacity && !self.answers.contains_key(&token) {
            let soonest = self
                .answers
                .iter()
                .min_by_key(|(_, answer)| answer.expires)
                .map(|(digest, _)| *digest);
            if let Some(soonest) = soonest {
                self.answers.remove(&soonest);
            }
        }
        self.answers.insert(
            token,
            Answer {
                watcher,
                expires: now + self.ttl,
            },
        );
    }

    /// How many answers are kept.
    pub fn len(&self) -> usize {
        self.answers.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watcher(node: &str) -> Watcher {
        Watcher {
            user: "system:serviceaccount:kube-system:antrea-agent".into(),
            node: Some(node.into()),
        }
    }

    #[test]
    fn an_answer_is_kept_until_it_expires() {
        let mut cache = AnswerCache::new(Duration::from_secs(10), 8);
        let start = Instant::now();
        let token = TokenDigest::of("token-a");
        cache.insert(token, watcher("n1"), start);
        assert_eq!(cache.get(&token, start), Some(watcher("n1")));
        assert_eq!(
            cache.get(&token, start + Duration::from_secs(9)),
            Some(watcher("n1"))
        );
        assert_eq!(cache.get(&TokenDigest::of("token-b"), start), None);
        assert_eq!(cache.get(&token, start + Duration::from_secs(10)), None);
        assert_eq!(cache.len(), 0, "an expired answer is dropped when met");
    }

    #[test]
    fn a_full_cache_drops_expired_answers_first_then_the_one_nearest_to_expiry() {
        let mut cache = AnswerCache::new(Duration::from_secs(10), 2);
        let start = Instant::now();
        let (a, b, c, d) = (
            TokenDigest::of("a"),
            TokenDigest::of("b"),
            TokenDigest::of("c"),
            TokenDigest::of("d"),
        );
        cache.insert(a, watcher("n1"), start);
        cache.insert(b, watcher("n2"), start + Duration::from_secs(5));
        // a has expired at 11 s: it goes, b stays.
        cache.insert(c, watcher("n3"), start + Duration::from_secs(11));
        assert_eq!(cache.len(), 2);
        let at = start + Duration::from_secs(12);
        assert_eq!(cache.get(&b, at), Some(watcher("n2")));
        assert_eq!(cache.get(&c, at), Some(watcher("n3")));
        // Nothing expired at 12 s: b, nearest to expiry, goes.
        cache.insert(d, watcher("n4"), at);
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(&b, at), None);
        assert_eq!(cache.get(&c, at), Some(watcher("n3")));
        assert_eq!(cache.get(&d, at), Some(watcher("n4")));
        // Renewing a kept answer evicts nothing.
        cache.insert(c, watcher("n3"), at);
        assert_eq!(cache.get(&d, at), Some(watcher("n4")));
    }

    #[test]
    fn a_zero_ttl_keeps_nothing() {
        let mut cache = AnswerCache::new(Duration::ZERO, 8);
        let now = Instant::now();
        cache.insert(TokenDigest::of("a"), watcher("n1"), now);
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn the_digest_shown_is_a_prefix_of_the_sha256() {
        // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
        assert_eq!(
            TokenDigest::of("abc").to_string(),
            "sha256:ba7816bf8f01cfea"
        );
    }
}
