//! Tables: 286 literal/length and 30 distance code lengths, the canonical
//! RFC 1951 codes derived from them, and the implied dynamic block header.
//!
//! Validation comes in two strengths. [`Table::from_lengths`] accepts any
//! table a decoder can use (lengths ≤ 15, no over-subscribed code, an
//! end-of-block code). [`Table::check_iaa`] adds the rules for a table IAA
//! hardware can compress with (every literal/length symbol coded, distance
//! symbols 0..=23 coded, complete codes). Serialization lives in [`serial`],
//! the header writer in [`header`], the built-in tables in [`builtin`].

pub mod builtin;
pub mod header;
pub mod rules;
pub mod serial;

use std::fmt;
use std::sync::OnceLock;

use crate::constants::{END_OF_BLOCK, MAX_CODE_LEN, NUM_DIST, NUM_DIST_4K, NUM_LITLEN};
use crate::huffman::{canonical_codes, kraft_sum, reverse_bits};

pub use header::{BlockHeader, HeaderForm};
pub use serial::{Provenance, SerialError};

/// Kraft sum of a complete code, scaled as [`crate::huffman::kraft_sum`] scales it.
pub const KRAFT_COMPLETE: u64 = 1 << 15;

/// Which of a table's two alphabets a problem is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Alphabet {
    /// Literals, end-of-block and match lengths: symbols 0..=285.
    LitLen,
    /// Match distances: symbols 0..=29.
    Dist,
}

impl fmt::Display for Alphabet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Alphabet::LitLen => "literal/length",
            Alphabet::Dist => "distance",
        })
    }
}

/// Why a set of code lengths is not a usable table.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// The length vector has the wrong size.
    #[error("{alphabet} table has {found} code lengths, expected {expected}")]
    WrongCount {
        /// The alphabet concerned.
        alphabet: Alphabet,
        /// Lengths required.
        expected: usize,
        /// Lengths given.
        found: usize,
    },
    /// A length above 15 (deflate and the kernel's 4-bit field cannot hold it).
    #[error("{alphabet} symbol {symbol} has code length {length}, above the maximum of 15")]
    LengthTooLong {
        /// The alphabet concerned.
        alphabet: Alphabet,
        /// The symbol.
        symbol: usize,
        /// Its length.
        length: u8,
    },
    /// More codes than the lengths can hold: no prefix code exists.
    #[error("{alphabet} code is over-subscribed (Kraft sum {kraft}/32768): no prefix code has these lengths")]
    OverSubscribed {
        /// The alphabet concerned.
        alphabet: Alphabet,
        /// Kraft sum scaled by 2^15.
        kraft: u64,
    },
    /// Symbol 256 has no code, so no stream could ever end.
    #[error("the end-of-block symbol (256) has no code")]
    NoEndOfBlock,
}

/// A rule of IAA canned compression that a (decodable) table breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IaaRule {
    /// IAA fails with "invalid huffman code" if it needs an uncoded symbol.
    #[error("literal/length symbol {symbol} has no code; IAA needs all of 0..=285 coded")]
    UncodedLitLen {
        /// The symbol.
        symbol: usize,
    },
    /// Distances up to 4096 use symbols 0..=23; each needs a code.
    #[error("distance symbol {symbol} has no code; IAA needs distance symbols 0..=23 coded")]
    UncodedDist {
        /// The symbol.
        symbol: usize,
    },
    /// An incomplete code (Kraft sum below 1): zlib and IAA headers reject it.
    #[error(
        "{alphabet} code is incomplete (Kraft sum {kraft}/32768); IAA tables must be complete"
    )]
    Incomplete {
        /// The alphabet concerned.
        alphabet: Alphabet,
        /// Kraft sum scaled by 2^15.
        kraft: u64,
    },
}

/// Code lengths of a table: the one thing a table is.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CodeLengths {
    /// Lengths of literal/length symbols 0..=285 (0 = no code).
    pub litlen: [u8; NUM_LITLEN],
    /// Lengths of distance symbols 0..=29 (0 = no code).
    pub dist: [u8; NUM_DIST],
}

impl fmt::Debug for CodeLengths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CodeLengths")
            .field("litlen", &&self.litlen[..])
            .field("dist", &self.dist)
            .finish()
    }
}

impl CodeLengths {
    /// The 316 lengths back to back: literal/length then distance.
    pub fn to_bytes(&self) -> [u8; NUM_LITLEN + NUM_DIST] {
        let mut b = [0u8; NUM_LITLEN + NUM_DIST];
        b[..NUM_LITLEN].copy_from_slice(&self.litlen);
        b[NUM_LITLEN..].copy_from_slice(&self.dist);
        b
    }
}

/// A validated table with its canonical codes and implied block header.
#[derive(Clone, Debug)]
pub struct Table {
    lengths: CodeLengths,
    litlen_codes: [u16; NUM_LITLEN],
    dist_codes: [u16; NUM_DIST],
    /// Codes bit-reversed for the LSB-first writer.
    litlen_rev: [u16; NUM_LITLEN],
    dist_rev: [u16; NUM_DIST],
    /// Which header [`Table::header`] writes, on first use: the aligned
    /// search costs 75 to 80 µs a table, against about 2 µs for the rest
    /// of building one, and decoding, encoding or importing a table never
    /// reads its header.
    form: HeaderForm,
    header: OnceLock<BlockHeader>,
    /// True for the RFC 1951 fixed code: literal/length symbols 286 and 287
    /// (length 8) and distance symbols 30 and 31 (length 5) exist beyond the
    /// 316 stored lengths and shape the canonical codes.
    fixed_code: bool,
    /// Human name, e.g. the workload it was trained on.
    pub name: Option<String>,
    /// Where the table came from.
    pub provenance: Provenance,
}

impl PartialEq for Table {
    /// Tables are equal when their code lengths are; names and provenance do not count.
    fn eq(&self, other: &Self) -> bool {
        self.lengths == other.lengths
    }
}
impl Eq for Table {}

impl Table {
    /// Builds a table from 286 literal/length and 30 distance code lengths,
    /// checking that a decoder can use it. Its header is byte-aligned where
    /// possible ([`HeaderForm::Aligned`]).
    pub fn from_lengths(litlen: &[u8], dist: &[u8]) -> Result<Table, TableError> {
        Table::from_lengths_with_header(litlen, dist, HeaderForm::Aligned)
    }

    /// [`Table::from_lengths`] with the header written in `form`
    /// ([`HeaderForm::Shortest`] suits a header sent with every page).
    pub fn from_lengths_with_header(
        litlen: &[u8],
        dist: &[u8],
        form: HeaderForm,
    ) -> Result<Table, TableError> {
        let litlen: [u8; NUM_LITLEN] = litlen.try_into().map_err(|_| TableError::WrongCount {
            alphabet: Alphabet::LitLen,
            expected: NUM_LITLEN,
            found: litlen.len(),
        })?;
        let dist: [u8; NUM_DIST] = dist.try_into().map_err(|_| TableError::WrongCount {
            alphabet: Alphabet::Dist,
            expected: NUM_DIST,
            found: dist.len(),
        })?;
        for (alphabet, lens) in [(Alphabet::LitLen, &litlen[..]), (Alphabet::Dist, &dist[..])] {
            if let Some((symbol, &length)) =
                lens.iter().enumerate().find(|(_, &l)| l > MAX_CODE_LEN)
            {
                return Err(TableError::LengthTooLong {
                    alphabet,
                    symbol,
                    length,
                });
            }
            let kraft = kraft_sum(lens);
            if kraft > KRAFT_COMPLETE {
                return Err(TableError::OverSubscribed { alphabet, kraft });
            }
        }
        if litlen[END_OF_BLOCK as usize] == 0 {
            return Err(TableError::NoEndOfBlock);
        }
        let lengths = CodeLengths { litlen, dist };
        // The fixed code is canonical over 288 + 32 symbols (RFC 1951 §3.2.6);
        // symbols 286/287 and 30/31 never occur but shift the 9-bit codes.
        let (fixed_ll, fixed_d) = builtin::fixed_lengths();
        let fixed_code = litlen == fixed_ll && dist == fixed_d;
        let ll_codes = if fixed_code {
            canonical_codes(&[&litlen[..], &[8, 8]].concat())
        } else {
            canonical_codes(&litlen)
        };
        let d_codes = if fixed_code {
            canonical_codes(&[&dist[..], &[5, 5]].concat())
        } else {
            canonical_codes(&dist)
        };
        let mut t = Table {
            lengths,
            litlen_codes: ll_codes[..NUM_LITLEN].try_into().expect("286 codes"),
            dist_codes: d_codes[..NUM_DIST].try_into().expect("30 codes"),
            litlen_rev: [0; NUM_LITLEN],
            dist_rev: [0; NUM_DIST],
            form,
            header: OnceLock::new(),
            fixed_code,
            name: None,
            provenance: Provenance::default(),
        };
        for s in 0..NUM_LITLEN {
            t.litlen_rev[s] = reverse_bits(ll_codes[s], litlen[s]);
        }
        for s in 0..NUM_DIST {
            t.dist_rev[s] = reverse_bits(d_codes[s], dist[s]);
        }
        Ok(t)
    }

    /// The RFC 1951 fixed code (BTYPE=01) as a table.
    pub fn fixed() -> Table {
        let (ll, d) = builtin::fixed_lengths();
        let mut t = Table::from_lengths(&ll, &d).expect("the fixed code is valid");
        t.name = Some("fixed".into());
        t.provenance.source = Some("RFC 1951 section 3.2.6 fixed Huffman codes".into());
        t
    }

    /// The canned table of the 2024 kernel patch series (iaa_crypto_comp_canned.c).
    pub fn kernel_2024() -> Table {
        let (ll, d) = builtin::kernel_2024_lengths();
        let mut t = Table::from_lengths(&ll, &d).expect("the kernel table is valid");
        t.name = Some("kernel-2024".into());
        t.provenance.source = Some(
            "Linux iaa_crypto canned mode, patch series 'crypto: Add new compression modes \
             for zlib and IAA' (March 2024)"
                .into(),
        );
        t
    }

    /// A built-in table by name: `fixed` or `kernel-2024`.
    pub fn builtin(name: &str) -> Option<Table> {
        match name {
            "fixed" => Some(Table::fixed()),
            "kernel-2024" => Some(Table::kernel_2024()),
            _ => None,
        }
    }

    /// Names accepted by [`Table::builtin`].
    pub const BUILTIN_NAMES: [&'static str; 2] = ["fixed", "kernel-2024"];

    /// The code lengths.
    pub fn lengths(&self) -> &CodeLengths {
        &self.lengths
    }

    /// Canonical literal/length codes (MSB-first integers, not reversed).
    pub fn litlen_codes(&self) -> &[u16; NUM_LITLEN] {
        &self.litlen_codes
    }

    /// Canonical distance codes (MSB-first integers, not reversed).
    pub fn dist_codes(&self) -> &[u16; NUM_DIST] {
        &self.dist_codes
    }

    /// Literal/length codes bit-reversed, as an LSB-first writer sends them.
    pub fn litlen_codes_reversed(&self) -> &[u16; NUM_LITLEN] {
        &self.litlen_rev
    }

    /// Distance codes bit-reversed, as an LSB-first writer sends them.
    pub fn dist_codes_reversed(&self) -> &[u16; NUM_DIST] {
        &self.dist_rev
    }

    /// The implied dynamic block header (BFINAL=1, BTYPE=2) for this table:
    /// a whole number of bytes unless no encoding of these lengths is (see
    /// [`BlockHeader::is_byte_aligned`]), or unless the table was built with
    /// [`HeaderForm::Shortest`]. Written on the first call.
    pub fn header(&self) -> &BlockHeader {
        self.header
            .get_or_init(|| header::write_header_as(&self.lengths, self.form))
    }

    /// Stable id: the first 8 bytes of SHA-256 over the 316 lengths, in hex.
    pub fn id(&self) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(self.lengths.to_bytes());
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// True if this is the RFC 1951 fixed code (its lengths are the fixed lengths).
    pub fn is_fixed_code(&self) -> bool {
        self.fixed_code
    }

    /// Kraft sums (scaled by 2^15) of the literal/length and distance codes,
    /// counting the fixed code's implied symbols 286/287 and 30/31.
    pub fn kraft(&self) -> (u64, u64) {
        let (ll, d) = (
            kraft_sum(&self.lengths.litlen),
            kraft_sum(&self.lengths.dist),
        );
        if self.fixed_code {
            (ll + 2 * (1 << 7), d + 2 * (1 << 10))
        } else {
            (ll, d)
        }
    }

    /// Every IAA canned-mode rule the table breaks (empty if none).
    pub fn iaa_violations(&self) -> Vec<IaaRule> {
        let mut v = Vec::new();
        for (symbol, &l) in self.lengths.litlen.iter().enumerate() {
            if l == 0 {
                v.push(IaaRule::UncodedLitLen { symbol });
            }
        }
        for (symbol, &l) in self.lengths.dist[..NUM_DIST_4K].iter().enumerate() {
            if l == 0 {
                v.push(IaaRule::UncodedDist { symbol });
            }
        }
        let (ll, d) = self.kraft();
        if ll != KRAFT_COMPLETE {
            v.push(IaaRule::Incomplete {
                alphabet: Alphabet::LitLen,
                kraft: ll,
            });
        }
        if d != KRAFT_COMPLETE {
            v.push(IaaRule::Incomplete {
                alphabet: Alphabet::Dist,
                kraft: d,
            });
        }
        v
    }

    /// `Ok` if IAA hardware can compress with this table; else the first broken rule.
    pub fn check_iaa(&self) -> Result<(), IaaRule> {
        match self.iaa_violations().into_iter().next() {
            None => Ok(()),
            Some(rule) => Err(rule),
        }
    }

    /// The first symbol a page's parse may need that has no code: every
    /// literal, end-of-block, every length symbol and distance symbols 0..=23.
    /// `None` means any page can be encoded with this table.
    pub fn first_uncoded_symbol(&self) -> Option<(Alphabet, usize)> {
        if let Some(s) = self.lengths.litlen.iter().position(|&l| l == 0) {
            return Some((Alphabet::LitLen, s));
        }
        self.lengths.dist[..NUM_DIST_4K]
            .iter()
            .position(|&l| l == 0)
            .map(|s| (Alphabet::Dist, s))
    }

    /// True if standard inflaters (zlib, libdeflate) accept this table's
    /// dynamic header: a complete literal/length code over the 286 symbols a
    /// header can carry, and a complete distance code or a single distance
    /// code. The fixed code is not (send it as a BTYPE=01 block instead).
    pub fn is_standard(&self) -> bool {
        let (ll, d) = (
            kraft_sum(&self.lengths.litlen),
            kraft_sum(&self.lengths.dist),
        );
        let used_d = self.lengths.dist.iter().filter(|&&l| l > 0).count();
        ll == KRAFT_COMPLETE && (d == KRAFT_COMPLETE || used_d <= 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_is_written_when_first_asked_for_and_in_the_form_built_with() {
        let k = Table::kernel_2024();
        let (ll, d) = (k.lengths().litlen, k.lengths().dist);
        for form in [
            HeaderForm::Aligned,
            HeaderForm::Shortest,
            HeaderForm::Fewest,
        ] {
            let t = Table::from_lengths_with_header(&ll, &d, form).unwrap();
            assert!(t.header.get().is_none(), "built without its header");
            let copy = t.clone();
            assert_eq!(*t.header(), header::write_header_as(t.lengths(), form));
            assert!(t.header.get().is_some() && copy.header.get().is_none());
            assert_eq!(copy.header(), t.header());
            if form == HeaderForm::Aligned {
                assert!(t.header().is_byte_aligned());
            }
        }
    }

    #[test]
    fn kernel_2024_codes_are_canonical_codes_of_its_lengths() {
        let t = Table::kernel_2024();
        for s in 0..NUM_LITLEN {
            let v = builtin::KERNEL_2024_LL[s];
            assert_eq!(v >> 19, 0);
            assert_eq!((v >> 15) as u8, t.lengths().litlen[s]);
            assert_eq!(
                (v & 0x7fff) as u16,
                t.litlen_codes()[s],
                "litlen symbol {s}"
            );
        }
        for s in 0..NUM_DIST {
            let v = builtin::KERNEL_2024_D[s];
            assert_eq!((v & 0x7fff) as u16, t.dist_codes()[s], "dist symbol {s}");
        }
        // Facts from docs/canned-format.md §2.2.
        assert_eq!(t.lengths().litlen[256], 10);
        assert_eq!(t.litlen_codes()[256], 0x3fe);
        assert_eq!((t.lengths().litlen[0], t.litlen_codes()[0]), (5, 0x2));
        assert_eq!((t.lengths().litlen[257], t.litlen_codes()[257]), (4, 0x0));
        assert_eq!(t.kraft(), (KRAFT_COMPLETE, KRAFT_COMPLETE));
        assert_eq!(t.check_iaa(), Ok(()));
        assert!(t.lengths().dist[24..].iter().all(|&l| l == 0));
    }

    #[test]
    fn fixed_table_matches_rfc1951() {
        let t = Table::fixed();
        // Literal 0 is 00110000 (0x30), literal 144 is 110010000, EOB is 0000000.
        assert_eq!((t.lengths().litlen[0], t.litlen_codes()[0]), (8, 0x30));
        assert_eq!((t.lengths().litlen[144], t.litlen_codes()[144]), (9, 0x190));
        assert_eq!((t.lengths().litlen[256], t.litlen_codes()[256]), (7, 0));
        assert_eq!((t.lengths().litlen[280], t.litlen_codes()[280]), (8, 0xc0));
        assert_eq!(t.dist_codes()[7], 7);
        assert!(t.is_fixed_code());
        // Complete once the implied symbols 286/287 and 30/31 are counted ...
        assert_eq!(t.kraft(), (KRAFT_COMPLETE, KRAFT_COMPLETE));
        assert_eq!(t.check_iaa(), Ok(()));
        // ... but a dynamic header can only carry 286 of them.
        assert!(!t.is_standard());
        // The same lengths from anywhere are the same code.
        let (ll, d) = builtin::fixed_lengths();
        let u = Table::from_lengths(&ll, &d).unwrap();
        assert_eq!(u.litlen_codes(), t.litlen_codes());
        assert!(!Table::kernel_2024().is_fixed_code());
    }

    #[test]
    fn validation_errors_are_typed() {
        let (mut ll, d) = builtin::kernel_2024_lengths();
        assert!(matches!(
            Table::from_lengths(&ll[..285], &d),
            Err(TableError::WrongCount {
                alphabet: Alphabet::LitLen,
                expected: 286,
                found: 285
            })
        ));
        ll[7] = 16;
        assert_eq!(
            Table::from_lengths(&ll, &d),
            Err(TableError::LengthTooLong {
                alphabet: Alphabet::LitLen,
                symbol: 7,
                length: 16
            })
        );
        ll[7] = 1;
        assert!(matches!(
            Table::from_lengths(&ll, &d),
            Err(TableError::OverSubscribed {
                alphabet: Alphabet::LitLen,
                ..
            })
        ));
        let (mut ll, d) = builtin::kernel_2024_lengths();
        ll[256] = 0;
        assert_eq!(Table::from_lengths(&ll, &d), Err(TableError::NoEndOfBlock));
    }

    #[test]
    fn iaa_rules_are_reported_apart_from_validity() {
        let (mut ll, mut d) = builtin::kernel_2024_lengths();
        ll[285] = 0; // decodable (incomplete) but not IAA-safe
        d[3] = 0;
        let t = Table::from_lengths(&ll, &d).expect("still decodable");
        let v = t.iaa_violations();
        assert!(v.contains(&IaaRule::UncodedLitLen { symbol: 285 }));
        assert!(v.contains(&IaaRule::UncodedDist { symbol: 3 }));
        assert!(v.iter().any(|r| matches!(
            r,
            IaaRule::Incomplete {
                alphabet: Alphabet::LitLen,
                ..
            }
        )));
        assert_eq!(t.check_iaa(), Err(IaaRule::UncodedLitLen { symbol: 285 }));
    }

    #[test]
    fn id_is_stable_and_depends_on_lengths_only() {
        let a = Table::kernel_2024();
        let mut b = Table::kernel_2024();
        b.name = Some("other".into());
        assert_eq!(a.id(), b.id());
        assert_eq!(a.id().len(), 16);
        assert_ne!(a.id(), Table::fixed().id());
        // Frozen: changing how ids are computed breaks every stored reference.
        assert_eq!(Table::fixed().id(), FIXED_ID);
    }

    const FIXED_ID: &str = "ac1914dee4c385cd";
}
