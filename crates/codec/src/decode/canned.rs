//! The IAA canned decoder: one dynamic block body with no header, decoded
//! with a table given out of band; ends at the end-of-block code followed by
//! zero padding to a byte (or, as QPL's software path writes it, by an empty
//! final fixed block and zero padding).
//!
//! Decode tables are built once in [`CannedDecoder::new`] and reused for
//! every page. [`CannedDecoder::decompress`] runs the fast loop (`fast.rs`)
//! and finishes with the reference loop; [`CannedDecoder::decompress_reference`]
//! runs the reference loop alone.

use super::fast;
use super::table::{DecodeTable, CANNED_DIST_ROOT_BITS, CANNED_LITLEN_ROOT_BITS};
use super::{
    decode_tokens, dist_meaning, litlen_meaning, ByteSink, DecodeError, Sink, TokenRecorder,
};
use crate::bitio::BitReader;
use crate::constants::WINDOW_SIZE;
use crate::table::Table;
use crate::token::Token;

/// Decodes canned pages of one table.
#[derive(Clone, Debug)]
pub struct CannedDecoder {
    litlen: DecodeTable,
    dist: DecodeTable,
    /// The fast loop's root table (with match entries).
    fast_root: fast::FastRoot,
}

/// The 10 bits of an empty final fixed block, read LSB-first: BFINAL=1,
/// BTYPE=01, then the 7-bit fixed end-of-block code 0000000.
const EMPTY_FIXED_BLOCK: u64 = 0b00_0000_0011;

impl CannedDecoder {
    /// Builds the decode tables for `table`.
    pub fn new(table: &Table) -> Self {
        let l = table.lengths();
        // The fixed code's implied symbols 286/287 and 30/31 shape its codes.
        let (ll, d) = if table.is_fixed_code() {
            (
                [&l.litlen[..], &[8, 8]].concat(),
                [&l.dist[..], &[5, 5]].concat(),
            )
        } else {
            (l.litlen.to_vec(), l.dist.to_vec())
        };
        let mut litlen = DecodeTable::new(&ll, CANNED_LITLEN_ROOT_BITS, litlen_meaning);
        litlen.pack_literals();
        let dist = DecodeTable::new(&d, CANNED_DIST_ROOT_BITS, dist_meaning);
        CannedDecoder {
            fast_root: fast::FastRoot::new(&litlen, &dist),
            litlen,
            dist,
        }
    }

    /// Runs the reference loop from `r`'s position to the end of the stream;
    /// returns the bits up to and including the end-of-block code.
    fn run<S: Sink>(&self, mut r: BitReader<'_>, sink: &mut S) -> Result<usize, DecodeError> {
        let input = r.data();
        let result = decode_tokens(&mut r, &self.litlen, &self.dist, sink);
        if r.overrun() {
            // Whatever went wrong, it went wrong past the end of the input.
            return Err(DecodeError::Truncated);
        }
        result?;
        let body = r.bit_pos();
        check_end(&mut r, input.len())?;
        Ok(body)
    }

    /// Decodes one canned stream into `out` (whose length is the limit, 4096
    /// for a page); returns the bytes produced.
    pub fn decompress(&self, input: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
        let mut sink = ByteSink {
            out,
            pos: 0,
            window: WINDOW_SIZE,
        };
        let mut r = BitReader::new(input);
        fast::decode(&mut r, &self.fast_root, &self.litlen, &self.dist, &mut sink);
        self.run(r, &mut sink)?;
        Ok(sink.pos)
    }

    /// [`CannedDecoder::decompress`] by the reference loop alone: the same
    /// bytes and the same error, slower. For differential tests and fuzzing.
    pub fn decompress_reference(&self, input: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
        let mut sink = ByteSink {
            out,
            pos: 0,
            window: WINDOW_SIZE,
        };
        self.run(BitReader::new(input), &mut sink)?;
        Ok(sink.pos)
    }

    /// The length in bits of canned stream `input`'s body: its tokens and
    /// its end-of-block code, without what follows (zero padding, or QPL's
    /// empty final fixed block and zero padding). Checks the stream as
    /// [`CannedDecoder::decompress`] does, producing at most `limit` bytes.
    pub fn body_bits(&self, input: &[u8], limit: usize) -> Result<usize, DecodeError> {
        let mut sink = TokenRecorder {
            tokens: Vec::new(),
            produced: 0,
            limit,
            window: WINDOW_SIZE,
        };
        self.run(BitReader::new(input), &mut sink)
    }

    /// Decodes one canned stream into its tokens (producing at most `limit` bytes).
    pub fn tokens(&self, input: &[u8], limit: usize) -> Result<Vec<Token>, DecodeError> {
        let mut sink = TokenRecorder {
            tokens: Vec::new(),
            produced: 0,
            limit,
            window: WINDOW_SIZE,
        };
        self.run(BitReader::new(input), &mut sink)?;
        Ok(sink.tokens)
    }
}

/// After the end-of-block code: zero padding to the end of the byte and the
/// end of the input, optionally preceded by QPL's empty final fixed block.
fn check_end(r: &mut BitReader<'_>, len: usize) -> Result<(), DecodeError> {
    let pos = r.bit_pos();
    let to_end = len * 8 - pos;
    r.refill();
    if to_end >= 10 && r.peek(10) == EMPTY_FIXED_BLOCK && to_end - 10 < 8 {
        r.consume(10);
    }
    let pad = (len * 8 - r.bit_pos()) as u32;
    if pad >= 8 {
        return Err(DecodeError::TrailingData {
            bytes: (pad / 8) as usize,
        });
    }
    if r.peek(pad) != 0 {
        return Err(DecodeError::NonZeroPadding);
    }
    Ok(())
}
