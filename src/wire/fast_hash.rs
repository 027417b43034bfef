//! A small multiply-rotate hasher (FxHash's scheme) for working maps whose keys are ids,
//! numbers and short words: the ledger append's state, the term index's vocabularies.
//! SipHash's resistance to chosen collisions buys nothing there (the keys are the
//! caller's own data, in a process of its own), and no output may depend on a map's
//! iteration order: every user sorts what it prints or stores.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// The hasher: each 8-byte word of the input rotated in and multiplied.
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

const FAST_HASH_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(FAST_HASH_SEED);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let mut tail = [0u8; 8];
        let rest = chunks.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(tail) ^ ((rest.len() as u64) << 59));
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_i64(&mut self, n: i64) {
        self.add(n as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    /// The state turned so that its best-mixed (high) bits come last: a hash table
    /// picks a bucket by the low bits, where a product of short keys differs too little.
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

/// A map hashed with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<FastHasher>>;

/// A set hashed with [`FastHasher`].
pub type FastSet<K> = HashSet<K, BuildHasherDefault<FastHasher>>;

#[cfg(test)]
mod tests {
    use super::FastHasher;
    use std::hash::Hasher as _;

    #[test]
    fn the_fast_hasher_separates_lengths_and_contents() {
        let hash = |bytes: &[u8]| {
            let mut h = FastHasher::default();
            h.write(bytes);
            h.finish()
        };
        assert_ne!(hash(b"muo_a"), hash(b"muo_b"));
        assert_ne!(hash(b"abc"), hash(b"abc\0"));
        assert_ne!(hash(b"01234567"), hash(b"012345670"));
        assert_eq!(hash(b"same"), hash(b"same"));
    }

    #[test]
    fn short_words_that_share_their_first_letters_spread_over_a_tables_buckets() {
        // A table picks the bucket by the low bits: 2,000 five-letter words that all
        // start with "ab" must not crowd into a few of 1,024 buckets.
        let mut buckets = std::collections::BTreeSet::new();
        for i in 0..2_000u32 {
            let word = format!("ab{:03}", i % 1_000) + if i < 1_000 { "x" } else { "y" };
            let mut h = FastHasher::default();
            std::hash::Hash::hash(word.as_str(), &mut h);
            buckets.insert(h.finish() & 1_023);
        }
        assert!(buckets.len() > 700, "{} buckets", buckets.len());
    }
}
