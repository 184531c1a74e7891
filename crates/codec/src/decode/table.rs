//! Huffman decode tables: a root table indexed by the next `root_bits` input
//! bits, with second-level subtables for longer codes (built once per code,
//! reused for every page).
//!
//! An entry is one `u32`: bits 0..=7 the bits of the whole symbol (code
//! plus extra bits), bits 8..=11 the code length (a subtable pointer: its
//! index bits), bits 12..=14 the kind, bits 16..=31 the value (literal or
//! literals, base length/distance, subtable offset). The kinds are numbered
//! so that one bit tells a literal entry (and then the low kind bit whether
//! it holds two) and two bits tell the rare kinds, for the fast loop.

use crate::huffman::{canonical_codes, reverse_bits};

/// What a decoded symbol means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Kind {
    /// A match length (value = base length, extra = extra bits) or a distance
    /// (value = base distance, extra = extra bits).
    Base = 0,
    /// Pointer to a subtable (value = offset, extra = index bits).
    Subtable = 1,
    /// End of block.
    EndOfBlock = 2,
    /// No code maps here (incomplete code) or the symbol does not exist.
    Invalid = 3,
    /// A literal byte (value = the byte).
    Literal = 4,
    /// Two literals in one entry (value = first | second << 8), both codes
    /// within the root bits; only in tables built with [`DecodeTable::pack_literals`].
    LiteralPair = 5,
}

/// Set in the entries of [`Kind::Literal`] and [`Kind::LiteralPair`].
pub(crate) const LITERAL_BIT: u32 = 4 << 12;
/// Set in a literal entry that holds two literals.
pub(crate) const PAIR_BIT: u32 = 1 << 12;
/// Set (one or both) in entries that are neither literals nor bases:
/// subtable pointers, end-of-block and invalid codes.
pub(crate) const RARE_BITS: u32 = 3 << 12;

const _: () = assert!(Kind::Literal as u32 & 4 != 0 && Kind::LiteralPair as u32 & 4 != 0);
const _: () = assert!(Kind::LiteralPair as u32 & 1 != 0 && Kind::Literal as u32 & 1 == 0);
const _: () = assert!(Kind::Base as u32 & 7 == 0);
const _: () = assert!(Kind::Subtable as u32 & 3 != 0 && Kind::Subtable as u32 & 4 == 0);
const _: () = assert!(Kind::EndOfBlock as u32 & 3 != 0 && Kind::EndOfBlock as u32 & 4 == 0);
const _: () = assert!(Kind::Invalid as u32 & 3 != 0 && Kind::Invalid as u32 & 4 == 0);

/// An entry: a code of `len` bits (a subtable pointer: `len` = 0) followed
/// by `extra` extra bits (a subtable pointer: its index bits).
#[inline]
pub(crate) fn entry(len: u32, kind: Kind, extra: u32, value: u32) -> u32 {
    let (bits, field) = match kind {
        Kind::Subtable => (0, extra),
        _ => (len + extra, len),
    };
    bits | (field << 8) | ((kind as u32) << 12) | (value << 16)
}

/// Bits of the whole symbol: code and extra bits (0 for a subtable pointer).
#[inline]
pub(crate) fn entry_bits(e: u32) -> u32 {
    e & 0xff
}

/// Length of the code (of both codes, for a literal pair); a subtable
/// pointer's index bits.
#[inline]
pub(crate) fn entry_len(e: u32) -> u32 {
    (e >> 8) & 0xf
}

#[inline]
pub(crate) fn entry_kind(e: u32) -> u32 {
    (e >> 12) & 0x7
}

/// Extra bits after the code (not for subtable pointers).
#[inline]
pub(crate) fn entry_extra(e: u32) -> u32 {
    entry_bits(e) - entry_len(e)
}

#[inline]
pub(crate) fn entry_value(e: u32) -> u32 {
    e >> 16
}

const INVALID: u32 = (Kind::Invalid as u32) << 12;

/// Root index bits of the literal/length table of a canned decoder (built
/// once, used for many pages): 8192 entries, 32 KiB. The fast loop's own
/// root table has as many; a page touches a few hundred of its lines.
/// Measured on the shipped corpus: 12 bits decode a few per cent faster
/// than 11 and 13 another 1-3% (more literal pairs and match entries).
pub(crate) const CANNED_LITLEN_ROOT_BITS: u32 = 13;
/// Root index bits of a canned decoder's distance table (1 KiB).
pub(crate) const CANNED_DIST_ROOT_BITS: u32 = 8;
/// Root index bits of tables built for one block (cheap to fill).
pub(crate) const BLOCK_ROOT_BITS: u32 = 9;

/// A decode table for one alphabet.
#[derive(Clone, Debug)]
pub(crate) struct DecodeTable {
    /// Root table (2^root_bits entries) followed by the subtables.
    entries: Vec<u32>,
    root_bits: u32,
}

impl DecodeTable {
    /// Builds the table for `lengths` (any alphabet size, lengths ≤ 15, not
    /// over-subscribed: the caller checks). `meaning(symbol)` gives the kind,
    /// extra bits and value of each symbol.
    pub(crate) fn new(
        lengths: &[u8],
        root_bits: u32,
        meaning: impl Fn(usize) -> (Kind, u32, u32),
    ) -> Self {
        let codes = canonical_codes(lengths);
        let root_size = 1usize << root_bits;
        let mut entries = vec![INVALID; root_size];
        let mut sub_max = vec![0u32; root_size];
        for (sym, &len) in lengths.iter().enumerate() {
            let len = len as u32;
            if len == 0 {
                continue;
            }
            let rev = reverse_bits(codes[sym], len as u8) as usize;
            if len <= root_bits {
                let (kind, extra, value) = meaning(sym);
                let e = entry(len, kind, extra, value);
                let mut i = rev;
                while i < root_size {
                    entries[i] = e;
                    i += 1 << len;
                }
            } else {
                let prefix = rev & (root_size - 1);
                sub_max[prefix] = sub_max[prefix].max(len - root_bits);
            }
        }
        let mut offsets = vec![0usize; root_size];
        for prefix in 0..root_size {
            let bits = sub_max[prefix];
            if bits > 0 {
                offsets[prefix] = entries.len();
                entries[prefix] = entry(root_bits, Kind::Subtable, bits, entries.len() as u32);
                entries.resize(entries.len() + (1 << bits), INVALID);
            }
        }
        for (sym, &len) in lengths.iter().enumerate() {
            let len = len as u32;
            if len <= root_bits {
                continue;
            }
            let rev = reverse_bits(codes[sym], len as u8) as usize;
            let prefix = rev & (root_size - 1);
            let sub_size = 1usize << sub_max[prefix];
            let (kind, extra, value) = meaning(sym);
            let e = entry(len, kind, extra, value);
            let mut i = rev >> root_bits;
            while i < sub_size {
                entries[offsets[prefix] + i] = e;
                i += 1 << (len - root_bits);
            }
        }
        assert!(entries.len() < 1 << 16, "subtable offsets fit in 16 bits");
        DecodeTable { entries, root_bits }
    }

    /// Turns root entries whose literal code is followed, within the root
    /// bits, by another complete literal code into [`Kind::LiteralPair`]
    /// entries. Worth it for tables built once and used for many pages.
    ///
    /// In place, from the top index down: the second code's entry is at
    /// `i >> l0`, below `i` (or `i` itself, at 0) for a code of `l0 >= 1`
    /// bits, so it is read before any change reaches it.
    pub(crate) fn pack_literals(&mut self) {
        let root_bits = self.root_bits;
        let root = &mut self.entries[..1 << root_bits];
        for i in (0..root.len()).rev() {
            let e = root[i];
            if entry_kind(e) != Kind::Literal as u32 {
                continue;
            }
            let l0 = entry_len(e);
            let e1 = root[i >> l0];
            let l1 = entry_len(e1);
            if entry_kind(e1) == Kind::Literal as u32 && l0 + l1 <= root_bits {
                root[i] = entry(
                    l0 + l1,
                    Kind::LiteralPair,
                    0,
                    entry_value(e) | entry_value(e1) << 8,
                );
            }
        }
    }

    /// Root table followed by the subtables.
    #[inline]
    pub(crate) fn entries(&self) -> &[u32] {
        &self.entries
    }

    /// Index bits of the root table.
    pub(crate) fn root_bits(&self) -> u32 {
        self.root_bits
    }

    /// The entry for the code at the bottom of `bits` (at least 15 valid bits).
    /// Subtable pointers are followed; the returned entry's length is the
    /// whole code length.
    #[inline]
    pub(crate) fn lookup(&self, bits: u64) -> u32 {
        let e = self.entries[(bits as usize) & ((1 << self.root_bits) - 1)];
        if entry_kind(e) != Kind::Subtable as u32 {
            return e;
        }
        // Subtable offsets count from the start of the combined table.
        let idx = (bits >> self.root_bits) as usize & ((1 << entry_len(e)) - 1);
        self.entries[entry_value(e) as usize + idx]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::litlen_meaning;
    use crate::huffman::limited_code_lengths;
    use crate::rng::XorShift64;

    /// `pack_literals` as first written: each entry's second code read from
    /// a copy of the unpacked root.
    fn pack_from_copy(t: &mut DecodeTable) {
        let root_bits = t.root_bits;
        let plain = t.entries[..1 << root_bits].to_vec();
        for (i, e) in t.entries[..1 << root_bits].iter_mut().enumerate() {
            let e1 = plain[i >> entry_len(*e)];
            if entry_kind(*e) == Kind::Literal as u32
                && entry_kind(e1) == Kind::Literal as u32
                && entry_len(*e) + entry_len(e1) <= root_bits
            {
                let value = entry_value(*e) | entry_value(e1) << 8;
                *e = entry(entry_len(*e) + entry_len(e1), Kind::LiteralPair, 0, value);
            }
        }
    }

    /// In place, the same entries as from a copy, on skewed random codes
    /// (short literal codes, so that most root entries pair).
    #[test]
    fn packing_in_place_matches_packing_from_a_copy() {
        let mut rng = XorShift64::new(3);
        let mut pairs = 0;
        for round in 0..40 {
            let counts: Vec<u64> = (0..286)
                .map(|s| {
                    let skew = if s < 256 && s % 7 == round % 7 {
                        1 << 20
                    } else {
                        1
                    };
                    skew * (1 + rng.next_u64() % 100)
                })
                .collect();
            let lengths = limited_code_lengths(&counts, 9 + (round % 7) as u8);
            let mut packed = DecodeTable::new(&lengths, CANNED_LITLEN_ROOT_BITS, litlen_meaning);
            let mut reference = packed.clone();
            packed.pack_literals();
            pack_from_copy(&mut reference);
            assert_eq!(packed.entries, reference.entries, "round {round}");
            pairs += packed.entries[..1 << CANNED_LITLEN_ROOT_BITS]
                .iter()
                .filter(|&&e| entry_kind(e) == Kind::LiteralPair as u32)
                .count();
        }
        assert!(pairs > 40 * 1000, "the codes pair: {pairs}");
    }
}
