//! Encoders for one page: fixed (BTYPE=01), dynamic (per-page optimal codes
//! plus header), canned in IAA wire format (body, end-of-block, zero padding;
//! no header) and canned as standard raw deflate (the table's implied header,
//! then the same body).
//!
//! An output that would reach the limit (4096 bytes for a page) is reported
//! as [`Outcome::Incompressible`]: zswap then stores the page raw. No stored
//! block is ever written. Decoding is in [`crate::decode`].
//!
//! Fixed and canned pages are coded as the parse finds their tokens (a
//! [`TokenSink`] that writes code words into a buffer with room for any
//! page); dynamic pages need their tokens first, for their table.

use crate::bitio::BitWriter;
use crate::constants::{
    END_OF_BLOCK, MAX_CODE_LEN, MAX_MATCH, MIN_MATCH, NUM_DIST, NUM_LITLEN, PAGE_SIZE, WINDOW_SIZE,
};
use crate::huffman::limited_code_lengths;
use crate::lz77::{Costs, Level, MatchFinder, TokenSink};
pub use crate::mode::{Format, Mode};
use crate::table::{Alphabet, HeaderForm, Table, TableError};
use crate::token::{dist_extra, dist_symbol, for_each_symbol, length_extra, length_symbol, Token};

/// What became of a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Compressed to this many bytes (always below the limit).
    Compressed(usize),
    /// The output would reach the limit: store the page raw.
    Incompressible,
}

/// Why a page could not be encoded at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// Pages are at most 4096 bytes.
    #[error("input is {len} bytes; a page is at most 4096")]
    InputTooLarge {
        /// Its length.
        len: usize,
    },
    /// Canned mode needs a table.
    #[error("canned mode needs a table")]
    TableRequired,
    /// The table cannot code a symbol some page may need.
    #[error("table has no code for {alphabet} symbol {symbol}, which pages may need")]
    TableNotEncodable {
        /// The alphabet concerned.
        alphabet: Alphabet,
        /// The symbol.
        symbol: usize,
    },
    /// The table's header would not be accepted by standard inflaters.
    #[error(
        "table's codes are incomplete, so its header is not standard deflate; use --format iaa"
    )]
    TableNotStandard,
    /// A table could not be built (internal: per-page dynamic codes).
    #[error(transparent)]
    Table(#[from] TableError),
}

/// Appends the codes of `tokens` and the end-of-block code to `w`. Stops
/// early (returning false) once the output reaches `limit` bytes.
pub fn write_tokens(w: &mut BitWriter<'_>, tokens: &[Token], table: &Table, limit: usize) -> bool {
    let l = table.lengths();
    let ll_code = table.litlen_codes_reversed();
    let d_code = table.dist_codes_reversed();
    for (n, &t) in tokens.iter().enumerate() {
        match t {
            Token::Literal(b) => {
                w.put(ll_code[b as usize] as u32, l.litlen[b as usize] as u32);
            }
            Token::Match { length, distance } => {
                let s = length_symbol(length) as usize;
                let (ebits, eval) = length_extra(length);
                let len = l.litlen[s] as u32;
                w.put(ll_code[s] as u32 | (eval as u32) << len, len + ebits as u32);
                let ds = dist_symbol(distance) as usize;
                let (dbits, dval) = dist_extra(distance);
                let dlen = l.dist[ds] as u32;
                w.put(
                    d_code[ds] as u32 | (dval as u32) << dlen,
                    dlen + dbits as u32,
                );
            }
        }
        if n % 16 == 0 && w.byte_len() >= limit {
            return false;
        }
    }
    let eob = END_OF_BLOCK as usize;
    w.put(ll_code[eob] as u32, l.litlen[eob] as u32);
    w.byte_len() < limit
}

/// A table's codes as [`Encoder`] writes them: every literal, match length
/// and distance as one word (its code, then its extra bits) and that word's
/// bit count, so writing a token looks up no symbol. Built once per encoder;
/// [`write_tokens`] writes the same bits from the table itself.
#[derive(Clone, Debug)]
struct CodeWords {
    /// Literals and end-of-block (0..=256): code << 5 | bits.
    lit: [u32; END_OF_BLOCK as usize + 1],
    /// Match lengths (3..=258): (code | extra << code length) << 5 | bits.
    len: [u32; MAX_MATCH + 1],
    /// Distances (1..=4096): (code | extra << code length) << 5 | bits (at
    /// most 15 + 10 bits, so a word fits 32 bits: a smaller table to cache).
    distance: Box<[u32; WINDOW_SIZE + 1]>,
}

impl CodeWords {
    fn new(table: &Table) -> CodeWords {
        let l = table.lengths();
        let ll_code = table.litlen_codes_reversed();
        let d_code = table.dist_codes_reversed();
        let mut lit = [0u32; END_OF_BLOCK as usize + 1];
        for (s, w) in lit.iter_mut().enumerate() {
            *w = (ll_code[s] as u32) << 5 | l.litlen[s] as u32;
        }
        let mut len = [0u32; MAX_MATCH + 1];
        for (length, w) in len.iter_mut().enumerate().skip(MIN_MATCH) {
            let s = length_symbol(length as u16) as usize;
            let (ebits, eval) = length_extra(length as u16);
            let n = l.litlen[s] as u32;
            *w = (ll_code[s] as u32 | (eval as u32) << n) << 5 | (n + ebits as u32);
        }
        let mut distance_words = Box::new([0u32; WINDOW_SIZE + 1]);
        for (distance, w) in distance_words.iter_mut().enumerate().skip(1) {
            let s = dist_symbol(distance as u16) as usize;
            let (ebits, eval) = dist_extra(distance as u16);
            let n = l.dist[s] as u32;
            debug_assert!(n + ebits as u32 <= 27, "a distance word fits 32 bits");
            *w = (d_code[s] as u32 | (eval as u32) << n) << 5 | (n + ebits as u32);
        }
        CodeWords {
            lit,
            len,
            distance: distance_words,
        }
    }
}

/// Room for any fixed or canned output: a deflate header (under 600 bytes)
/// and a page's body (at most 15 bits a byte, and end-of-block), with 8
/// bytes more for [`WordWriter`]'s whole-word stores. A power of two: the
/// writer masks its index with it instead of checking bounds.
const OUT_ROOM: usize = 16384;
const _: () = assert!(OUT_ROOM.is_power_of_two());
const _: () = assert!(600 + PAGE_SIZE * 15 / 8 + 2 < OUT_ROOM);

/// Writes code words (a [`TokenSink`]: tokens are coded as the parse finds
/// them) into a buffer with room for any page: each write stores the whole
/// bit buffer as 8 bytes and keeps only its last partial byte, so no write
/// checks room or branches on the bit count.
struct WordWriter<'a> {
    words: &'a CodeWords,
    out: &'a mut [u8; OUT_ROOM + 8],
    /// Bytes complete in `out`.
    pos: usize,
    /// Bits not yet complete (fewer than 8 between writes).
    acc: u64,
    nbits: u32,
}

impl<'a> WordWriter<'a> {
    fn new(words: &'a CodeWords, out: &'a mut [u8; OUT_ROOM + 8]) -> Self {
        WordWriter {
            words,
            out,
            pos: 0,
            acc: 0,
            nbits: 0,
        }
    }

    /// Appends the low `n` bits of `bits` (n ≤ 56; higher bits zero).
    #[inline(always)]
    fn put(&mut self, bits: u64, n: u32) {
        debug_assert!(n <= 56 && bits >> n == 0, "stray high bits");
        // nbits < 8 and n ≤ 56: nothing is shifted out.
        self.acc |= bits << self.nbits;
        self.nbits += n;
        // `pos` stays below OUT_ROOM (see there): the mask changes nothing.
        let at = self.pos & (OUT_ROOM - 1);
        self.out[at..at + 8].copy_from_slice(&self.acc.to_le_bytes());
        let whole = self.nbits / 8;
        self.pos += whole as usize;
        self.acc >>= whole * 8;
        self.nbits &= 7;
    }

    /// Appends `nbits` bits held in `bytes` (LSB-first): a header, at the
    /// start.
    fn put_bytes_bits(&mut self, bytes: &[u8], nbits: usize) {
        // A deflate header is at most 3 + 14 + 19 * 3 + 316 * (7 + 7) bits.
        assert!(self.pos == 0 && nbits <= 600 * 8, "a header comes first");
        let whole = nbits / 8;
        for &b in &bytes[..whole] {
            self.put(u64::from(b), 8);
        }
        let rest = (nbits % 8) as u32;
        if rest > 0 {
            self.put(u64::from(bytes[whole]) & ((1 << rest) - 1), rest);
        }
    }

    /// Writes end-of-block and pads to a byte; returns the output's length.
    fn finish(mut self) -> usize {
        let c = self.words.lit[END_OF_BLOCK as usize];
        self.put(u64::from(c >> 5), c & 31);
        // The partial byte is in `out` already (each write stores it).
        self.pos + usize::from(self.nbits > 0)
    }
}

impl TokenSink for WordWriter<'_> {
    #[inline(always)]
    fn literal(&mut self, byte: u8) {
        let c = self.words.lit[byte as usize];
        self.put(u64::from(c >> 5), c & 31);
    }

    /// The length's and the distance's words in one write (at most
    /// 15 + 5 + 15 + 10 bits).
    #[inline(always)]
    fn copy(&mut self, length: u16, distance: u16) {
        let c = self.words.len[length as usize];
        let d = self.words.distance[distance as usize];
        let n = c & 31;
        self.put(u64::from(c >> 5) | u64::from(d >> 5) << n, n + (d & 31));
    }
}

/// Symbol counts of a token sequence (one end-of-block included).
pub fn count_symbols(tokens: &[Token], litlen: &mut [u64; NUM_LITLEN], dist: &mut [u64; NUM_DIST]) {
    for_each_symbol(tokens, |ll, d| {
        litlen[ll as usize] += 1;
        if let Some(d) = d {
            dist[d as usize] += 1;
        }
    });
}

/// The optimal table for one page's tokens: package-merge lengths ≤ 15,
/// completed so standard inflaters accept its header.
pub fn dynamic_table(tokens: &[Token]) -> Result<Table, TableError> {
    let mut ll = [0u64; NUM_LITLEN];
    let mut d = [0u64; NUM_DIST];
    count_symbols(tokens, &mut ll, &mut d);
    // A code needs two symbols to be complete: add a spare where fewer are used.
    for counts in [&mut ll[..], &mut d[..]] {
        let mut spare = 0;
        while counts.iter().filter(|&&c| c > 0).count() < 2 {
            if counts[spare] == 0 {
                counts[spare] = 1;
            }
            spare += 1;
        }
    }
    // The header goes out with every page, where byte alignment buys nothing.
    Table::from_lengths_with_header(
        &limited_code_lengths(&ll, MAX_CODE_LEN),
        &limited_code_lengths(&d, MAX_CODE_LEN),
        HeaderForm::Shortest,
    )
}

/// Compresses pages in one mode, format and level, reusing its buffers
/// (and, for fixed and canned modes, its table's code words).
#[derive(Debug)]
pub struct Encoder {
    mode: Mode,
    format: Format,
    level: Level,
    table: Table,
    /// `table`'s codes as words (fixed and canned modes).
    words: CodeWords,
    costs: Costs,
    limit: usize,
    finder: MatchFinder,
    /// Dynamic mode: the page's tokens.
    tokens: Vec<Token>,
    /// Fixed and canned modes: the output, before it is copied out.
    room: Box<[u8; OUT_ROOM + 8]>,
}

impl Encoder {
    /// An encoder for `mode`; `table` is required for canned mode (and
    /// ignored otherwise). `format` matters for canned mode only.
    pub fn new(
        mode: Mode,
        format: Format,
        level: Level,
        table: Option<&Table>,
    ) -> Result<Encoder, EncodeError> {
        let table = match mode {
            Mode::Canned => {
                let t = table.ok_or(EncodeError::TableRequired)?;
                if let Some((alphabet, symbol)) = t.first_uncoded_symbol() {
                    return Err(EncodeError::TableNotEncodable { alphabet, symbol });
                }
                if format == Format::Deflate && !t.is_standard() && !t.is_fixed_code() {
                    return Err(EncodeError::TableNotStandard);
                }
                t.clone()
            }
            Mode::Fixed | Mode::Dynamic => Table::fixed(),
        };
        let costs = Costs::from_lengths(table.lengths());
        Ok(Encoder {
            mode,
            format,
            level,
            words: CodeWords::new(&table),
            table,
            costs,
            limit: PAGE_SIZE,
            finder: MatchFinder::new(),
            // (Full size at once: no page grows it later.)
            tokens: if mode == Mode::Dynamic {
                Vec::with_capacity(PAGE_SIZE)
            } else {
                Vec::new()
            },
            room: Box::new([0; OUT_ROOM + 8]),
        })
    }

    /// Sets the output limit: outputs of this many bytes or more are
    /// incompressible (default 4096, zswap's rule).
    pub fn with_limit(mut self, limit: usize) -> Encoder {
        self.limit = limit;
        self
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The table in use (the fixed code for fixed and dynamic modes).
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// Compresses one page (≤ 4096 bytes) into `out` (cleared first).
    /// On [`Outcome::Incompressible`] the contents of `out` are unspecified.
    pub fn compress(&mut self, page: &[u8], out: &mut Vec<u8>) -> Result<Outcome, EncodeError> {
        if page.len() > PAGE_SIZE {
            return Err(EncodeError::InputTooLarge { len: page.len() });
        }
        out.clear();
        match self.mode {
            Mode::Fixed | Mode::Canned => {
                let mut w = WordWriter::new(&self.words, &mut self.room);
                if self.mode == Mode::Fixed
                    || (self.format == Format::Deflate && self.table.is_fixed_code())
                {
                    w.put(1, 1);
                    w.put(1, 2);
                } else if self.format == Format::Deflate {
                    let h = self.table.header();
                    w.put_bytes_bits(&h.bytes, h.bits);
                }
                self.finder
                    .parse_into(page, self.level, Some(&self.costs), &mut w);
                let len = w.finish();
                if len >= self.limit {
                    return Ok(Outcome::Incompressible);
                }
                out.extend_from_slice(&self.room[..len]);
                Ok(Outcome::Compressed(len))
            }
            Mode::Dynamic => {
                let first = if self.level == Level::Best {
                    Level::Default
                } else {
                    self.level
                };
                self.finder.parse(page, first, None, &mut self.tokens);
                let mut table = dynamic_table(&self.tokens)?;
                if self.level == Level::Best {
                    // Re-parse with the page's own code lengths as costs.
                    let costs = Costs::from_lengths(table.lengths());
                    self.finder
                        .parse(page, Level::Best, Some(&costs), &mut self.tokens);
                    table = dynamic_table(&self.tokens)?;
                }
                let mut w = BitWriter::new(out);
                let h = table.header();
                w.put_bytes_bits(&h.bytes, h.bits);
                let fits = write_tokens(&mut w, &self.tokens, &table, self.limit);
                w.finish();
                Ok(self.outcome(fits, out))
            }
        }
    }

    fn outcome(&self, fits: bool, out: &[u8]) -> Outcome {
        if fits && out.len() < self.limit {
            Outcome::Compressed(out.len())
        } else {
            Outcome::Incompressible
        }
    }
}

/// Re-encodes tokens as a canned body with `table` (IAA wire format), with
/// no limit: the inverse of [`crate::decode::CannedDecoder::tokens`].
pub fn encode_canned_tokens(tokens: &[Token], table: &Table) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = BitWriter::new(&mut out);
    write_tokens(&mut w, tokens, table, usize::MAX);
    w.finish();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dynamic_tables_are_complete_even_for_tiny_pages() {
        for page in [&b""[..], b"a", b"aaaa", b"ab"] {
            let mut mf = MatchFinder::new();
            let mut toks = Vec::new();
            mf.parse(page, Level::Fast, None, &mut toks);
            let t = dynamic_table(&toks).unwrap();
            assert!(t.is_standard(), "{page:?}");
        }
    }

    #[test]
    fn canned_needs_an_encodable_table() {
        assert_eq!(
            Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, None).unwrap_err(),
            EncodeError::TableRequired
        );
        let mut l = *Table::kernel_2024().lengths();
        l.litlen[200] = 0;
        let t = Table::from_lengths(&l.litlen, &l.dist).unwrap();
        assert_eq!(
            Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(&t)).unwrap_err(),
            EncodeError::TableNotEncodable {
                alphabet: Alphabet::LitLen,
                symbol: 200
            }
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(if cfg!(miri) { 2 } else { 64 }))]

        /// The encoder's code words write exactly what `write_tokens`
        /// writes, and reach the same limit.
        #[test]
        #[cfg_attr(miri, ignore = "page parses are slow under Miri")]
        fn code_words_write_what_write_tokens_writes(
            counts in proptest::collection::vec(1u64..1000, 316),
            page in proptest::collection::vec(0u8..6, 0..4096),
            limit in proptest::prop_oneof![proptest::strategy::Just(usize::MAX), 1usize..4096],
        ) {
            let t = Table::from_lengths(
                &limited_code_lengths(&counts[..286], 15),
                &limited_code_lengths(&counts[286..], 15),
            )
            .unwrap();
            let mut toks = Vec::new();
            MatchFinder::new().parse(&page, Level::Fast, None, &mut toks);
            let words = CodeWords::new(&t);
            let mut room = Box::new([0; OUT_ROOM + 8]);
            let mut wa = WordWriter::new(&words, &mut room);
            crate::lz77::feed(&toks, &mut wa);
            let len = wa.finish();
            let mut b = Vec::new();
            let mut wb = BitWriter::new(&mut b);
            let fits_b = write_tokens(&mut wb, &toks, &t, limit);
            wb.finish();
            proptest::prop_assert_eq!(len < limit, fits_b);
            if fits_b {
                proptest::prop_assert_eq!(&room[..len], &b[..]);
            }
        }
    }

    #[test]
    fn oversized_input_is_an_error() {
        let mut e = Encoder::new(Mode::Fixed, Format::Deflate, Level::Fast, None).unwrap();
        let mut out = Vec::new();
        assert_eq!(
            e.compress(&[0; 4097], &mut out),
            Err(EncodeError::InputTooLarge { len: 4097 })
        );
    }
}
