//! Decoders for untrusted input: a raw deflate inflater (stored, fixed and
//! dynamic blocks) and an IAA canned decoder whose decode tables are built
//! once per table.
//!
//! Every input gives `Ok` or a typed [`DecodeError`]; nothing panics, nothing
//! reads outside the input or writes outside the caller's output buffer, and
//! no more than the buffer's length is produced. The canned decoder runs a
//! fast loop (`fast.rs`) for the bulk of a page and the reference loop
//! (`decode_tokens`) for the rest; the reference alone gives the same
//! results ([`CannedDecoder::decompress_reference`]). Both decoders can also
//! return the [`Token`]s of a stream instead of bytes (for inspection and
//! bit-exact re-encoding). Encoding is in [`crate::encode`].

mod canned;
#[allow(unsafe_code)]
mod fast;
mod header;
mod inflate;
mod table;

pub use canned::CannedDecoder;
pub use header::{read_block_header, ParsedHeader};
pub use inflate::{inflate, inflate_blocks, BlockKind, InflatedBlock};

use crate::bitio::BitReader;
use crate::mode::{Format, Mode};
use crate::table::{Alphabet, Table};
use crate::token::Token;
use table::{entry_extra, entry_kind, entry_len, entry_value, DecodeTable, Kind};

/// Decompresses pages of one mode and format (for canned mode, one table).
#[derive(Clone, Debug)]
pub struct Decoder {
    canned: Option<CannedDecoder>,
}

impl Decoder {
    /// A decoder for `mode`/`format`. Canned IAA-format streams need the
    /// table they were made with; every other combination is standard raw
    /// deflate and needs none (`None` is returned for canned IAA without one).
    pub fn new(mode: Mode, format: Format, table: Option<&Table>) -> Option<Decoder> {
        match (mode, format) {
            (Mode::Canned, Format::Iaa) => Some(Decoder {
                canned: Some(CannedDecoder::new(table?)),
            }),
            _ => Some(Decoder { canned: None }),
        }
    }

    /// Decodes one stream into `out` (whose length is the output limit);
    /// returns the bytes produced.
    pub fn decompress(&self, data: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
        match &self.canned {
            Some(c) => c.decompress(data, out),
            None => inflate(data, out),
        }
    }
}

/// Why a stream could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended before the stream did.
    #[error("stream is truncated: input ends before the end of the final block")]
    Truncated,
    /// BTYPE = 3.
    #[error("reserved block type 3 at bit {bit}")]
    ReservedBlockType {
        /// Bit offset of the block.
        bit: usize,
    },
    /// A stored block whose LEN and NLEN disagree.
    #[error("stored block length {len} does not match its complement {nlen:#06x}")]
    StoredLength {
        /// LEN field.
        len: u16,
        /// NLEN field.
        nlen: u16,
    },
    /// Bits that are no code of the table, or a symbol that cannot occur (286/287, 30/31).
    #[error("invalid {alphabet} code at bit {bit}")]
    InvalidCode {
        /// The alphabet concerned.
        alphabet: Alphabet,
        /// Bit offset of the code.
        bit: usize,
    },
    /// A match reaching before the first byte of output.
    #[error(
        "distance {distance} reaches before the start of the output ({available} bytes produced)"
    )]
    DistanceTooFar {
        /// The distance.
        distance: usize,
        /// Bytes produced so far.
        available: usize,
    },
    /// A canned match beyond IAA's 4096-byte history.
    #[error("distance {distance} is beyond the 4096-byte IAA window")]
    DistanceBeyondWindow {
        /// The distance.
        distance: usize,
    },
    /// The stream decodes to more bytes than allowed.
    #[error("output would exceed the limit of {limit} bytes")]
    OutputLimit {
        /// The limit.
        limit: usize,
    },
    /// A malformed dynamic block header.
    #[error("invalid dynamic block header: {0}")]
    BadHeader(&'static str),
    /// Bytes after the end of the stream.
    #[error("{bytes} bytes of trailing data after the end of the stream")]
    TrailingData {
        /// How many.
        bytes: usize,
    },
    /// Padding bits after a canned stream's end-of-block code that are not zero.
    #[error("padding bits after the end-of-block code are not zero")]
    NonZeroPadding,
}

/// Where decoded tokens go: straight into bytes, or into a token list.
pub(crate) trait Sink {
    fn literal(&mut self, byte: u8) -> Result<(), DecodeError>;
    /// Two literals (`pair` = first | second << 8).
    fn literal_pair(&mut self, pair: u32) -> Result<(), DecodeError> {
        self.literal(pair as u8)?;
        self.literal((pair >> 8) as u8)
    }
    fn copy(&mut self, length: usize, distance: usize) -> Result<(), DecodeError>;
}

/// Writes decoded bytes into a caller's buffer; its length is the limit.
pub(crate) struct ByteSink<'a> {
    pub(crate) out: &'a mut [u8],
    pub(crate) pos: usize,
    /// Largest distance allowed (the window).
    pub(crate) window: usize,
}

impl Sink for ByteSink<'_> {
    #[inline]
    fn literal(&mut self, byte: u8) -> Result<(), DecodeError> {
        match self.out.get_mut(self.pos) {
            Some(slot) => {
                *slot = byte;
                self.pos += 1;
                Ok(())
            }
            None => Err(DecodeError::OutputLimit {
                limit: self.out.len(),
            }),
        }
    }

    #[inline]
    fn copy(&mut self, length: usize, distance: usize) -> Result<(), DecodeError> {
        if distance > self.pos {
            return Err(DecodeError::DistanceTooFar {
                distance,
                available: self.pos,
            });
        }
        if distance > self.window {
            return Err(DecodeError::DistanceBeyondWindow { distance });
        }
        if length > self.out.len() - self.pos {
            return Err(DecodeError::OutputLimit {
                limit: self.out.len(),
            });
        }
        let src = self.pos - distance;
        let dst = self.pos;
        if distance >= 8 && self.out.len() - dst >= length + 8 {
            // Whole 8-byte chunks: each chunk's source lies at least 8 bytes
            // back, so it is complete before it is read. The last chunk may
            // write up to 7 bytes past the match, inside the buffer; later
            // output overwrites them.
            let (mut s, mut d) = (src, dst);
            while d < dst + length {
                let chunk: [u8; 8] = self.out[s..s + 8].try_into().expect("8 bytes");
                self.out[d..d + 8].copy_from_slice(&chunk);
                s += 8;
                d += 8;
            }
        } else if distance == 1 {
            let b = self.out[src];
            self.out[dst..dst + length].fill(b);
        } else if distance >= length {
            self.out.copy_within(src..src + length, dst);
        } else {
            // Overlapping copy: the pattern of `distance` bytes repeats; copy
            // it in doubling chunks that never overlap their source.
            let mut done = 0;
            let mut chunk = distance;
            while done < length {
                let n = chunk.min(length - done);
                self.out.copy_within(src..src + n, dst + done);
                done += n;
                chunk = done + distance;
            }
        }
        self.pos += length;
        Ok(())
    }
}

/// Records decoded tokens, checking them as [`ByteSink`] would.
pub(crate) struct TokenRecorder {
    pub(crate) tokens: Vec<Token>,
    pub(crate) produced: usize,
    pub(crate) limit: usize,
    pub(crate) window: usize,
}

impl Sink for TokenRecorder {
    fn literal(&mut self, byte: u8) -> Result<(), DecodeError> {
        if self.produced >= self.limit {
            return Err(DecodeError::OutputLimit { limit: self.limit });
        }
        self.tokens.push(Token::Literal(byte));
        self.produced += 1;
        Ok(())
    }

    fn copy(&mut self, length: usize, distance: usize) -> Result<(), DecodeError> {
        if distance > self.produced {
            return Err(DecodeError::DistanceTooFar {
                distance,
                available: self.produced,
            });
        }
        if distance > self.window {
            return Err(DecodeError::DistanceBeyondWindow { distance });
        }
        if length > self.limit - self.produced {
            return Err(DecodeError::OutputLimit { limit: self.limit });
        }
        // Distances above 4096 are not tokens (the IAA window); the window
        // check above keeps `distance` within u16 for canned streams, and the
        // deflate inspector uses a 32 KiB window.
        self.tokens.push(Token::Match {
            length: length as u16,
            distance: distance as u16,
        });
        self.produced += length;
        Ok(())
    }
}

/// Decodes literal/length/distance codes until end-of-block: the reference
/// loop, safe and simple, which the canned fast loop is checked against and
/// hands its rare cases and the end of each stream to.
#[inline]
pub(crate) fn decode_tokens<S: Sink>(
    r: &mut BitReader<'_>,
    litlen: &DecodeTable,
    dist: &DecodeTable,
    sink: &mut S,
) -> Result<(), DecodeError> {
    loop {
        // One refill gives ≥ 56 bits: enough for a whole match
        // (15 + 5 + 15 + 13 = 48 bits) or for two literals. Past the end of
        // the input the result is `Truncated` whatever follows (the callers
        // test `overrun` first), so stop rather than decode zero bits.
        if !r.refill_in_data() {
            return Err(DecodeError::Truncated);
        }
        let mut e = litlen.lookup(r.peek_all());
        let k = entry_kind(e);
        if k == Kind::LiteralPair as u32 || k == Kind::Literal as u32 {
            r.consume(entry_len(e));
            if k == Kind::LiteralPair as u32 {
                sink.literal_pair(entry_value(e))?;
            } else {
                sink.literal(entry_value(e) as u8)?;
            }
            // ≥ 44 bits remain: room for one more literal (pair) code.
            e = litlen.lookup(r.peek_all());
            let k = entry_kind(e);
            if k == Kind::LiteralPair as u32 || k == Kind::Literal as u32 {
                r.consume(entry_len(e));
                if k == Kind::LiteralPair as u32 {
                    sink.literal_pair(entry_value(e))?;
                } else {
                    sink.literal(entry_value(e) as u8)?;
                }
                continue;
            }
            // A match needs up to 48 bits; top up (the code's bits stay put).
            r.refill();
        }
        let kind = entry_kind(e);
        if kind == Kind::EndOfBlock as u32 {
            r.consume(entry_len(e));
            return Ok(());
        }
        if kind != Kind::Base as u32 {
            return Err(DecodeError::InvalidCode {
                alphabet: Alphabet::LitLen,
                bit: r.bit_pos(),
            });
        }
        r.consume(entry_len(e));
        let extra = entry_extra(e);
        let length = entry_value(e) as usize + r.peek(extra) as usize;
        r.consume(extra);

        let d = dist.lookup(r.peek_all());
        if entry_kind(d) != Kind::Base as u32 {
            return Err(DecodeError::InvalidCode {
                alphabet: Alphabet::Dist,
                bit: r.bit_pos(),
            });
        }
        r.consume(entry_len(d));
        let dextra = entry_extra(d);
        let distance = entry_value(d) as usize + r.peek(dextra) as usize;
        r.consume(dextra);
        sink.copy(length, distance)?;
    }
}

/// Decode-table meaning of literal/length symbol `s` (0..=287).
pub(crate) fn litlen_meaning(s: usize) -> (Kind, u32, u32) {
    use crate::token::{LENGTH_BASE, LENGTH_EXTRA};
    match s {
        0..=255 => (Kind::Literal, 0, s as u32),
        256 => (Kind::EndOfBlock, 0, 0),
        257..=285 => (
            Kind::Base,
            LENGTH_EXTRA[s - 257] as u32,
            LENGTH_BASE[s - 257] as u32,
        ),
        _ => (Kind::Invalid, 0, 0),
    }
}

/// Decode-table meaning of distance symbol `s` (0..=31).
pub(crate) fn dist_meaning(s: usize) -> (Kind, u32, u32) {
    use crate::token::{DIST_BASE, DIST_EXTRA};
    match s {
        0..=29 => (Kind::Base, DIST_EXTRA[s] as u32, DIST_BASE[s] as u32),
        _ => (Kind::Invalid, 0, 0),
    }
}
