//! The "56-bit rule" of igzip (ISA-L) and QPL: both write one literal/length
//! code, one length's extra bits and one distance code with its extra bits in
//! a single unchecked 56-bit write (`MAX_BITBUF_BIT_WRITE`), so
//! `are_hufftables_useable()` (ISA-L `igzip/huff_codes.c`) rejects tables where
//!
//! ```text
//! max length over literal/length symbols 0..=285
//!   + max (length + extra bits) over length symbols 257..=284
//!   + max (length + extra bits) over distance symbols 0..=29   >  56
//! ```
//!
//! ISA-L and QPL then rebuild the code with limits 13 (literal/length) and 12
//! (distance), i.e. a different table. The ranges are exactly ISA-L's (symbol
//! 285 counts only in the first term), and so is the treatment of uncoded
//! symbols: ISA-L takes every symbol's length plus extra bits, coded or not,
//! so an uncoded symbol counts its extra bits alone. This module only
//! measures; the exporters decide whether to warn or refuse.

use cannery_codec::token::{DIST_EXTRA, LENGTH_EXTRA};
use cannery_codec::Table;

/// igzip's `MAX_BITBUF_BIT_WRITE`.
pub const MAX_BITBUF_BIT_WRITE: u32 = 56;

/// The three terms of the 56-bit rule for one table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitBudget {
    /// Longest code among literal/length symbols 0..=285.
    pub lit: u32,
    /// Longest code plus extra bits among length symbols 257..=284 (an
    /// uncoded symbol counts its extra bits).
    pub len: u32,
    /// Longest code plus extra bits among distance symbols 0..=29 (an
    /// uncoded symbol counts its extra bits).
    pub dist: u32,
}

impl BitBudget {
    /// Measures `table`.
    pub fn of(table: &Table) -> BitBudget {
        let l = table.lengths();
        let lit = l.litlen.iter().map(|&x| x as u32).max().unwrap_or(0);
        let len = (257..=284)
            .map(|s| l.litlen[s] as u32 + LENGTH_EXTRA[s - 257] as u32)
            .max()
            .unwrap_or(0);
        let dist = (0..30)
            .map(|s| l.dist[s] as u32 + DIST_EXTRA[s] as u32)
            .max()
            .unwrap_or(0);
        BitBudget { lit, len, dist }
    }

    /// Sum of the three terms.
    pub fn total(&self) -> u32 {
        self.lit + self.len + self.dist
    }

    /// True if igzip/QPL would reject the table and rebuild it with 13/12.
    pub fn exceeds_limit(&self) -> bool {
        self.total() > MAX_BITBUF_BIT_WRITE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_2024_fits_with_two_bits_to_spare() {
        // litlen 273..=285 are 14/15 bits; symbol 284 (5 extra bits) is 15 bits;
        // distance 23 (10 extra bits) is 9 bits.
        let b = BitBudget::of(&Table::kernel_2024());
        assert_eq!(
            b,
            BitBudget {
                lit: 15,
                len: 20,
                dist: 19
            }
        );
        assert_eq!(b.total(), 54);
        assert!(!b.exceeds_limit());
    }

    #[test]
    fn fixed_code_budget() {
        // 9-bit literals; symbol 281..=284 are 8 bits + 5 extra; distances 5 + 13.
        let b = BitBudget::of(&Table::fixed());
        assert_eq!(
            b,
            BitBudget {
                lit: 9,
                len: 13,
                dist: 18
            }
        );
    }

    #[test]
    fn long_codes_break_the_rule() {
        // Distance 29 (13 extra bits) at 15 bits and litlen 284 at 15 bits.
        let mut ll = [9u8; 286];
        // 2^15 total: 286 symbols; make a complete code with many 15-bit codes.
        for (i, l) in ll.iter_mut().enumerate() {
            *l = if i < 254 { 8 } else { 15 };
        }
        // Kraft: 254 * 128 = 32512; remaining 256 over 32 symbols of 15 bits = 32 -> 32544, not
        // complete, but decodable: fine for measuring.
        let mut d = [5u8; 30];
        d[29] = 15;
        let t = Table::from_lengths(&ll, &d).unwrap();
        let b = BitBudget::of(&t);
        assert_eq!(
            b,
            BitBudget {
                lit: 15,
                len: 20,
                dist: 28
            }
        );
        assert!(b.exceeds_limit());
    }

    #[test]
    fn uncoded_symbols_count_their_extra_bits_as_isal_does() {
        // Only distance symbols 0 and 1 coded (1 bit each): ISA-L's loop still
        // takes symbol 29's 13 extra bits (length 0 + 13).
        let mut d = [0u8; 30];
        d[0] = 1;
        d[1] = 1;
        let t = Table::from_lengths(&Table::fixed().lengths().litlen, &d).unwrap();
        assert_eq!(BitBudget::of(&t).dist, 13);
    }
}
