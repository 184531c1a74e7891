//! Synthetic pages for tests and benchmarks: deterministic, page-sized, and
//! shaped like memory (pointer-rich records, text, small integers, zero and
//! random pages) so that parses produce realistic symbol mixes. Not a
//! corpus: real measurements use captured pages.

use cannery_codec::rng::XorShift64Star;

/// The test generator: the workspace's xorshift64*
/// (`cannery_codec::rng::XorShift64Star`) seeded from any `u64`.
#[derive(Clone, Debug)]
pub struct Rng(XorShift64Star);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(XorShift64Star::from_state(
            seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
        ))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
}

const WORDS: &[&str] = &[
    "the", "memory", "page", "compress", "table", "python", "object", "value", "key", "index",
    "request", "response", "user", "session", "error", "status", "count", "name", "data", "list",
];

/// One synthetic page of a given style (0..5).
pub fn synthetic_page(style: u64, rng: &mut Rng) -> Vec<u8> {
    let mut p = Vec::with_capacity(4096);
    match style {
        // Heap of 32-byte records: pointers, small ints, tags.
        0 => {
            let base = 0x7f00_0000_0000u64 + (rng.below(1 << 20) << 12);
            while p.len() < 4096 {
                p.extend_from_slice(&(base + rng.below(4096) * 16).to_le_bytes());
                p.extend_from_slice(&(rng.below(100)).to_le_bytes());
                p.extend_from_slice(&[0x11, 0x22, 0, 0, 0, 0, 0, 0]);
                p.extend_from_slice(&rng.below(1 << 16).to_le_bytes());
            }
        }
        // Text.
        1 => {
            while p.len() < 4096 {
                let w = WORDS[rng.below(WORDS.len() as u64) as usize];
                p.extend_from_slice(w.as_bytes());
                p.push(if rng.below(8) == 0 { b'\n' } else { b' ' });
            }
        }
        // Arrays of small integers (u32).
        2 => {
            let mut v = rng.below(1000) as u32;
            while p.len() < 4096 {
                v = v.wrapping_add(rng.below(7) as u32);
                p.extend_from_slice(&v.to_le_bytes());
            }
        }
        // Zero page.
        3 => p.resize(4096, 0),
        // Random (incompressible).
        _ => {
            while p.len() < 4096 {
                p.extend_from_slice(&rng.next_u64().to_le_bytes());
            }
        }
    }
    p.truncate(4096);
    p
}

/// `n` pages mixing all styles (mostly records and text, a few zero and
/// random pages), from `seed`.
pub fn synthetic_pages(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let style = match rng.below(20) {
                0..=7 => 0,
                8..=13 => 1,
                14..=17 => 2,
                18 => 3,
                _ => 4,
            };
            synthetic_page(style, &mut rng)
        })
        .collect()
}

/// `n` pages of one style only (a "workload" with its own statistics).
pub fn workload_pages(n: usize, style: u64, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| synthetic_page(style, &mut rng)).collect()
}
