//! A small seeded pseudo-random generator for the simulator and the bootstrap: SplitMix64
//! seeding into xoshiro256**, with named independent streams. Pure arithmetic: the same
//! seed gives the same numbers on every platform; nothing reads the clock or the
//! environment.

/// The largest accepted seed (an exact integer in every JSON reader).
pub const MAX_SEED: u64 = (1 << 53) - 1;

/// One independent stream of pseudo-random numbers.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a stream name, so that streams are named rather than numbered.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

impl Rng {
    /// The stream `name` of `seed`; `index` separates repeated streams of one name.
    pub fn stream(seed: u64, name: &str, index: u64) -> Rng {
        let mut state =
            seed ^ name_hash(name).rotate_left(17) ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let s = [
            splitmix(&mut state),
            splitmix(&mut state),
            splitmix(&mut state),
            splitmix(&mut state),
        ];
        Rng { s }
    }

    /// The next 64 random bits (xoshiro256**).
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p` (`p ≤ 0` never, `p ≥ 1` always, and no draw is skipped).
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Uniform in `[low, high)`.
    pub fn between(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.unit()
    }

    /// Uniform integer in `0..n` (`n > 0`), by rejection so that it is unbiased.
    pub fn below(&mut self, n: usize) -> usize {
        let n = n.max(1) as u64;
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let x = self.next_u64();
            if x < zone {
                return (x % n) as usize;
            }
        }
    }

    /// Approximately standard normal: the centred sum of four uniforms scaled to unit
    /// variance (Irwin–Hall). Bounded by ±2√3, arithmetic only.
    pub fn noise(&mut self) -> f64 {
        let sum = self.unit() + self.unit() + self.unit() + self.unit();
        (sum - 2.0) * 3.0_f64.sqrt()
    }

    /// `k` distinct indices of `0..n` in draw order (partial Fisher–Yates).
    pub fn sample(&mut self, n: usize, k: usize) -> Vec<usize> {
        let mut items: Vec<usize> = (0..n).collect();
        let k = k.min(n);
        for i in 0..k {
            let j = i + self.below(n - i);
            items.swap(i, j);
        }
        items.truncate(k);
        items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_and_stream_repeat_and_streams_differ() {
        let a: Vec<u64> = {
            let mut r = Rng::stream(7, "world", 0);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::stream(7, "world", 0);
            (0..4).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::stream(7, "world", 1);
            (0..4).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn unit_noise_and_below_stay_in_range() {
        let mut r = Rng::stream(1, "range", 0);
        let mut mean = 0.0;
        for _ in 0..20_000 {
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
            let z = r.noise();
            assert!(z.abs() <= 2.0 * 3.0_f64.sqrt() + 1e-12);
            mean += z;
            assert!(r.below(7) < 7);
        }
        assert!((mean / 20_000.0).abs() < 0.05);
        let s = r.sample(10, 4);
        assert_eq!(s.len(), 4);
        let mut sorted = s.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 4);
    }
}
