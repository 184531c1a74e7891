//! Tokens: the one representation of an LZ77 parse shared by the encoder, the
//! decoder's inspection API and the trainer, and the RFC 1951 mapping from
//! match lengths and distances to symbols plus extra bits.
//!
//! This module does not find matches ([`crate::lz77`]) or code symbols
//! ([`crate::encode`]).

use crate::constants::{MAX_MATCH, MIN_MATCH, WINDOW_SIZE};

/// One LZ77 token of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Token {
    /// A literal byte.
    Literal(u8),
    /// A back-reference: copy `length` (3..=258) bytes from `distance` (1..=4096) back.
    Match {
        /// Bytes to copy, 3..=258.
        length: u16,
        /// How far back, 1..=4096 (the IAA window).
        distance: u16,
    },
}

impl Token {
    /// Number of uncompressed bytes the token stands for.
    #[inline]
    pub fn len(self) -> usize {
        match self {
            Token::Literal(_) => 1,
            Token::Match { length, .. } => length as usize,
        }
    }

    /// A token always stands for at least one byte.
    #[inline]
    pub fn is_empty(self) -> bool {
        false
    }
}

/// Base match length of each length symbol 257..=285.
pub const LENGTH_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];

/// Extra bits of each length symbol 257..=285.
pub const LENGTH_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];

/// Base distance of each distance symbol 0..=29.
pub const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];

/// Extra bits of each distance symbol 0..=29.
pub const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

const fn build_length_symbols() -> [u8; MAX_MATCH + 1] {
    let mut t = [0u8; MAX_MATCH + 1];
    let mut sym = 0;
    while sym < 29 {
        let base = LENGTH_BASE[sym] as usize;
        let n = 1usize << LENGTH_EXTRA[sym];
        let mut i = 0;
        while i < n && base + i <= MAX_MATCH {
            t[base + i] = sym as u8;
            i += 1;
        }
        sym += 1;
    }
    // 258 has its own symbol (285) although 284's range reaches it.
    t[258] = 28;
    t
}

const fn build_dist_symbols() -> [u8; WINDOW_SIZE + 1] {
    let mut t = [0u8; WINDOW_SIZE + 1];
    let mut sym = 0;
    while sym < 24 {
        let base = DIST_BASE[sym] as usize;
        let n = 1usize << DIST_EXTRA[sym];
        let mut i = 0;
        while i < n && base + i <= WINDOW_SIZE {
            t[base + i] = sym as u8;
            i += 1;
        }
        sym += 1;
    }
    t
}

/// `LENGTH_SYMBOL[len]` = length symbol − 257 for match length `len` (3..=258).
static LENGTH_SYMBOL: [u8; MAX_MATCH + 1] = build_length_symbols();
/// `DIST_SYMBOL[distance]` = distance symbol for `distance` (1..=4096).
static DIST_SYMBOL: [u8; WINDOW_SIZE + 1] = build_dist_symbols();

/// Literal/length symbol (257..=285) for a match length 3..=258.
#[inline]
pub fn length_symbol(length: u16) -> u16 {
    debug_assert!((MIN_MATCH..=MAX_MATCH).contains(&(length as usize)));
    257 + LENGTH_SYMBOL[length as usize] as u16
}

/// Distance symbol (0..=23) for a distance 1..=4096.
#[inline]
pub fn dist_symbol(distance: u16) -> u16 {
    debug_assert!((1..=WINDOW_SIZE).contains(&(distance as usize)));
    DIST_SYMBOL[distance as usize] as u16
}

/// Extra-bit count and value for a match length.
#[inline]
pub fn length_extra(length: u16) -> (u8, u16) {
    let i = LENGTH_SYMBOL[length as usize] as usize;
    (LENGTH_EXTRA[i], length - LENGTH_BASE[i])
}

/// Extra-bit count and value for a distance.
#[inline]
pub fn dist_extra(distance: u16) -> (u8, u16) {
    let i = DIST_SYMBOL[distance as usize] as usize;
    (DIST_EXTRA[i], distance - DIST_BASE[i])
}

/// Calls `f(litlen_symbol, dist_symbol_or_none)` for each token, then once for
/// the end-of-block symbol: the symbol stream a table codes.
pub fn for_each_symbol(tokens: &[Token], mut f: impl FnMut(u16, Option<u16>)) {
    for &t in tokens {
        match t {
            Token::Literal(b) => f(b as u16, None),
            Token::Match { length, distance } => {
                f(length_symbol(length), Some(dist_symbol(distance)))
            }
        }
    }
    f(crate::constants::END_OF_BLOCK, None);
}

/// Rebuilds the bytes a token sequence stands for, appending to `out`.
///
/// Returns `None` if a distance reaches before the start of `out`'s new
/// content (such tokens are not a valid parse of one page).
pub fn expand(tokens: &[Token], out: &mut Vec<u8>) -> Option<()> {
    let start = out.len();
    for &t in tokens {
        match t {
            Token::Literal(b) => out.push(b),
            Token::Match { length, distance } => {
                let distance = distance as usize;
                if distance == 0 || distance > out.len() - start {
                    return None;
                }
                let from = out.len() - distance;
                for i in 0..length as usize {
                    let b = out[from + i];
                    out.push(b);
                }
            }
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_symbols_cover_every_length_once() {
        for len in 3u16..=258 {
            let sym = length_symbol(len);
            let i = (sym - 257) as usize;
            let (nbits, extra) = length_extra(len);
            assert_eq!(nbits, LENGTH_EXTRA[i]);
            assert!(
                extra < (1 << nbits) || (nbits == 0 && extra == 0),
                "len {len}"
            );
            assert_eq!(LENGTH_BASE[i] + extra, len);
        }
        assert_eq!(length_symbol(3), 257);
        assert_eq!(length_symbol(10), 264);
        assert_eq!(length_symbol(11), 265);
        assert_eq!(length_symbol(257), 284);
        assert_eq!(length_symbol(258), 285);
    }

    #[test]
    fn dist_symbols_cover_the_4k_window() {
        for distance in 1u16..=4096 {
            let sym = dist_symbol(distance) as usize;
            let (nbits, extra) = dist_extra(distance);
            assert_eq!(nbits, DIST_EXTRA[sym]);
            assert!(extra < (1 << nbits) || nbits == 0);
            assert_eq!(DIST_BASE[sym] + extra, distance);
        }
        assert_eq!(dist_symbol(1), 0);
        assert_eq!(dist_symbol(5), 4);
        assert_eq!(dist_symbol(4096), 23);
        assert_eq!(dist_symbol(3073), 23);
    }

    #[test]
    fn expand_handles_overlapping_copies_and_rejects_bad_distances() {
        let mut out = Vec::new();
        let toks = [
            Token::Literal(b'a'),
            Token::Literal(b'b'),
            Token::Match {
                length: 5,
                distance: 2,
            },
        ];
        expand(&toks, &mut out).unwrap();
        assert_eq!(out, b"abababa");
        let mut out = Vec::new();
        assert!(expand(
            &[Token::Match {
                length: 3,
                distance: 1
            }],
            &mut out
        )
        .is_none());
    }
}
