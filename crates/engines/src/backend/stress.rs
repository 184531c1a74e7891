//! Seeded stress pages for `cannery fuzz` and the backend tests: random
//! bytes, long runs, all 256 byte values, near-incompressible data,
//! patterns repeating at distances near 4096, and mutations of real pages.
//!
//! Deterministic: the same (kind, seed) gives the same page on every
//! machine. It does not compress anything.

use cannery_codec::rng::XorShift64Star;

/// The generator of stress pages: the workspace's xorshift64*
/// ([`cannery_codec::rng::XorShift64Star`]) seeded from any `u64`.
#[derive(Clone, Debug)]
pub struct Rng(XorShift64Star);

impl Rng {
    /// Seeds the generator (any seed, zero included).
    pub fn new(seed: u64) -> Rng {
        Rng(XorShift64Star::from_state(seed ^ 0x9e37_79b9_7f4a_7c15 | 1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0.below(n as u64) as usize
    }
}

/// Kinds of generated page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Uniformly random bytes (incompressible).
    Random,
    /// A few long runs of single bytes.
    LongRuns,
    /// Every byte value, in shuffled order, repeated.
    AllBytes,
    /// Random bytes with a few short repeats: just around the 4096 limit.
    NearIncompressible,
    /// A random block repeated at a distance near 4096 (4000..=4095).
    FarRepeat,
    /// Text-like data: words from a small vocabulary.
    Words,
    /// A corpus page with random byte flips, inserts and deletions.
    Mutated,
}

impl Kind {
    /// Every generated kind (`Mutated` needs a corpus page).
    pub const GENERATED: [Kind; 6] = [
        Kind::Random,
        Kind::LongRuns,
        Kind::AllBytes,
        Kind::NearIncompressible,
        Kind::FarRepeat,
        Kind::Words,
    ];

    /// Kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Random => "random",
            Kind::LongRuns => "long-runs",
            Kind::AllBytes => "all-bytes",
            Kind::NearIncompressible => "near-incompressible",
            Kind::FarRepeat => "far-repeat",
            Kind::Words => "words",
            Kind::Mutated => "mutated",
        }
    }
}

/// A 4096-byte page of `kind` from `rng`; `base` is the corpus page a
/// `Mutated` page starts from (zeros if none).
pub fn page(kind: Kind, rng: &mut Rng, base: Option<&[u8]>) -> Vec<u8> {
    const N: usize = 4096;
    let mut p = vec![0u8; N];
    match kind {
        Kind::Random => p.iter_mut().for_each(|b| *b = rng.next_u64() as u8),
        Kind::LongRuns => {
            let mut i = 0;
            while i < N {
                let cap = if rng.below(4) == 0 { 600 } else { 40 };
                let run = 1 + rng.below(cap);
                let v = rng.next_u64() as u8;
                for b in p.iter_mut().skip(i).take(run) {
                    *b = v;
                }
                i += run;
            }
        }
        Kind::AllBytes => {
            let mut perm: Vec<u8> = (0..=255).collect();
            for i in (1..256).rev() {
                perm.swap(i, rng.below(i + 1));
            }
            for (i, b) in p.iter_mut().enumerate() {
                *b = perm[i % 256];
            }
        }
        Kind::NearIncompressible => {
            p.iter_mut().for_each(|b| *b = rng.next_u64() as u8);
            for _ in 0..(4 + rng.below(40)) {
                let len = 3 + rng.below(12);
                let dst = rng.below(N - len);
                let src = rng.below(N - len);
                p.copy_within(src..src + len, dst);
            }
        }
        Kind::FarRepeat => {
            let distance = 4000 + rng.below(96);
            for b in p.iter_mut().take(distance) {
                *b = rng.next_u64() as u8;
            }
            for i in distance..N {
                p[i] = p[i - distance];
            }
        }
        Kind::Words => {
            const WORDS: [&[u8]; 12] = [
                b"page ",
                b"swap ",
                b"zswap ",
                b"canned ",
                b"huffman ",
                b"table ",
                b"\n",
                b"deflate ",
                b"0x0000 ",
                b"null ",
                b"{\"k\": ",
                b"iaa ",
            ];
            let mut v = Vec::with_capacity(N + 16);
            while v.len() < N {
                v.extend_from_slice(WORDS[rng.below(WORDS.len())]);
            }
            p.copy_from_slice(&v[..N]);
        }
        Kind::Mutated => {
            if let Some(b) = base {
                let n = b.len().min(N);
                p[..n].copy_from_slice(&b[..n]);
            }
            for _ in 0..(1 + rng.below(16)) {
                let at = rng.below(N);
                match rng.below(3) {
                    0 => p[at] = rng.next_u64() as u8,
                    1 => {
                        p.insert(at, rng.next_u64() as u8);
                        p.truncate(N);
                    }
                    _ => {
                        p.remove(at);
                        p.push(0);
                    }
                }
            }
        }
    }
    p
}

/// A page of words (seed 7): the page unit tests of a library's parse use.
#[cfg(all(test, any(feature = "isal", feature = "qpl")))]
pub(crate) fn words_page() -> Vec<u8> {
    page(Kind::Words, &mut Rng::new(7), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_deterministic_and_page_sized() {
        for k in Kind::GENERATED {
            let a = page(k, &mut Rng::new(7), None);
            let b = page(k, &mut Rng::new(7), None);
            assert_eq!(a, b, "{}", k.name());
            assert_eq!(a.len(), 4096);
        }
        let all = page(Kind::AllBytes, &mut Rng::new(1), None);
        let mut seen = [false; 256];
        all.iter().for_each(|&b| seen[b as usize] = true);
        assert!(seen.iter().all(|&s| s));
        let far = page(Kind::FarRepeat, &mut Rng::new(3), None);
        let distance = (4000..4096)
            .find(|&distance| far[distance..] == far[..4096 - distance])
            .unwrap();
        assert!((4000..4096).contains(&distance));
    }
}
