//! Huffman decode tables: a root table indexed by the next `root_bits` input
//! bits, with second-level subtables for longer codes (built once per code,
//! reused for every page).
//!
//! An entry is one `u32`: bits 0..=4 the total code length to consume,
//! bits 5..=7 the kind, bits 8..=12 extra bits (or a subtable's index bits),
//! bits 16..=31 the value (literal, base length/distance, subtable offset).

use crate::huffman::{canonical_codes, reverse_bits};

/// What a decoded symbol means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Kind {
    /// A literal byte (value = the byte).
    Literal = 0,
    /// A match length (value = base length, extra = extra bits) or a distance
    /// (value = base distance, extra = extra bits).
    Base = 1,
    /// End of block.
    EndOfBlock = 2,
    /// Pointer to a subtable (value = offset, extra = index bits).
    Subtable = 3,
    /// No code maps here (incomplete code) or the symbol does not exist.
    Invalid = 4,
    /// Two literals in one entry (value = first | second << 8), both codes
    /// within the root bits; only in tables built with [`DecodeTable::pack_literals`].
    LiteralPair = 5,
}

#[inline]
pub(crate) fn entry(len: u32, kind: Kind, extra: u32, value: u32) -> u32 {
    len | ((kind as u32) << 5) | (extra << 8) | (value << 16)
}

#[inline]
pub(crate) fn entry_len(e: u32) -> u32 {
    e & 0x1f
}

#[inline]
pub(crate) fn entry_kind(e: u32) -> u32 {
    (e >> 5) & 0x7
}

#[inline]
pub(crate) fn entry_extra(e: u32) -> u32 {
    (e >> 8) & 0x1f
}

#[inline]
pub(crate) fn entry_value(e: u32) -> u32 {
    e >> 16
}

const INVALID: u32 = (Kind::Invalid as u32) << 5;

/// Index bits of every root table: codes up to 10 bits resolve in one
/// lookup; longer ones go through a subtable.
pub(crate) const ROOT_BITS: u32 = 12;
const ROOT_SIZE: usize = 1 << ROOT_BITS;

/// A decode table for one alphabet.
#[derive(Clone, Debug)]
pub(crate) struct DecodeTable {
    /// Fixed size, so a masked index needs no bounds check.
    root: Box<[u32; ROOT_SIZE]>,
    /// Second-level tables, back to back.
    sub: Vec<u32>,
}

impl DecodeTable {
    /// Builds the table for `lengths` (any alphabet size, lengths ≤ 15, not
    /// over-subscribed: the caller checks). `meaning(symbol)` gives the kind,
    /// extra bits and value of each symbol.
    pub(crate) fn new(lengths: &[u8], meaning: impl Fn(usize) -> (Kind, u32, u32)) -> Self {
        let root_bits = ROOT_BITS;
        let codes = canonical_codes(lengths);
        let root_size = ROOT_SIZE;
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
        let root: Box<[u32; ROOT_SIZE]> = entries[..ROOT_SIZE]
            .to_vec()
            .into_boxed_slice()
            .try_into()
            .expect("root size");
        DecodeTable { root, sub: entries }
    }

    /// Turns root entries whose literal code is followed, within the root
    /// bits, by another complete literal code into [`Kind::LiteralPair`]
    /// entries. Worth it for tables built once and used for many pages.
    pub(crate) fn pack_literals(&mut self) {
        let plain = self.root.clone();
        for (i, e) in self.root.iter_mut().enumerate() {
            if entry_kind(*e) != Kind::Literal as u32 {
                continue;
            }
            let l0 = entry_len(*e);
            let rest = i >> l0;
            let e1 = plain[rest];
            let l1 = entry_len(e1);
            if entry_kind(e1) == Kind::Literal as u32 && l0 + l1 <= ROOT_BITS {
                *e = entry(
                    l0 + l1,
                    Kind::LiteralPair,
                    0,
                    entry_value(*e) | entry_value(e1) << 8,
                );
            }
        }
    }

    /// The entry for the code at the bottom of `bits` (at least 15 valid bits).
    /// Subtable pointers are followed; the returned entry's length is the
    /// whole code length.
    #[inline]
    pub(crate) fn lookup(&self, bits: u64) -> u32 {
        let e = self.root[(bits as usize) & (ROOT_SIZE - 1)];
        if entry_kind(e) != Kind::Subtable as u32 {
            return e;
        }
        // Subtable offsets count from the start of the combined table.
        let idx = (bits >> ROOT_BITS) as usize & ((1 << entry_extra(e)) - 1);
        self.sub[entry_value(e) as usize + idx]
    }
}
