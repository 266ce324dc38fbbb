//! The review answers kept for a short time, so that a Prometheus scrape every few seconds does
//! not cost two API calls each time: at most [`CAPACITY`] entries, each for [`TTL`], keyed by
//! the token's SHA-256 (never the token itself) and the path.

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;

use ring::digest::Digest;

use super::Verdict;

/// How long an answer (allowed, unauthenticated or forbidden) is reused.
pub const TTL: Duration = Duration::from_secs(10);
/// The most answers kept.
pub const CAPACITY: usize = 1024;

/// A token (by digest) and a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    token: Vec<u8>,
    path: String,
}

impl CacheKey {
    pub fn new(token: &Digest, path: &str) -> CacheKey {
        CacheKey {
            token: token.as_ref().to_vec(),
            path: path.to_owned(),
        }
    }
}

/// Answers with the time they were given.
#[derive(Debug, Default)]
pub struct VerdictCache {
    entries: HashMap<CacheKey, (Instant, Verdict)>,
}

impl VerdictCache {
    /// The answer for `key`, if one younger than [`TTL`] is kept.
    pub fn get(&mut self, key: &CacheKey) -> Option<Verdict> {
        match self.entries.get(key) {
            Some((at, verdict)) if at.elapsed() < TTL => Some(verdict.clone()),
            Some(_) => {
                self.entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps `verdict` for `key`; when full, expired answers go first, then the oldest.
    pub fn put(&mut self, key: CacheKey, verdict: Verdict) {
        if self.entries.len() >= CAPACITY && !self.entries.contains_key(&key) {
            self.entries.retain(|_, (at, _)| at.elapsed() < TTL);
            if self.entries.len() >= CAPACITY {
                let oldest = self
                    .entries
                    .iter()
                    .min_by_key(|(_, (at, _))| *at)
                    .map(|(key, _)| key.clone());
                if let Some(oldest) = oldest {
                    self.entries.remove(&oldest);
                }
            }
        }
        self.entries.insert(key, (Instant::now(), verdict));
    }

    /// How many answers are kept.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::digest::{SHA256, digest};

    #[test]
    fn the_cache_stays_bounded() {
        let mut cache = VerdictCache::default();
        let token = digest(&SHA256, b"t");
        for i in 0..CAPACITY + 10 {
            cache.put(CacheKey::new(&token, &format!("/p{i}")), Verdict::Allowed);
        }
        assert_eq!(cache.len(), CAPACITY);
        let last = CacheKey::new(&token, &format!("/p{}", CAPACITY + 9));
        assert_eq!(cache.get(&last), Some(Verdict::Allowed));
    }

    #[tokio::test(start_paused = true)]
    async fn answers_expire() {
        let mut cache = VerdictCache::default();
        let key = CacheKey::new(&digest(&SHA256, b"t"), "/metrics");
        cache.put(key.clone(), Verdict::Forbidden("no".into()));
        assert!(cache.get(&key).is_some());
        tokio::time::advance(TTL).await;
        assert_eq!(cache.get(&key), None);
    }
}
