//! The general raw deflate inflater: stored, fixed and dynamic blocks, any
//! number of them, up to the final block. Trailing bytes after the final
//! block are an error.
//!
//! [`inflate`] writes bytes; [`inflate_blocks`] returns each block's kind,
//! header and tokens instead, so a stream can be inspected and re-encoded.

use std::sync::OnceLock;

use super::header::{read_dynamic_header, ParsedHeader};
use super::table::{DecodeTable, BLOCK_ROOT_BITS};
use super::{
    decode_tokens, dist_meaning, litlen_meaning, ByteSink, DecodeError, Sink, TokenRecorder,
};
use crate::bitio::BitReader;

/// Deflate's largest distance (32 KiB window).
const DEFLATE_WINDOW: usize = 32768;

/// How a block was coded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// BTYPE=00.
    Stored,
    /// BTYPE=01.
    Fixed,
    /// BTYPE=10, with the header it carried.
    Dynamic(ParsedHeader),
}

/// One block of an inspected stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InflatedBlock {
    /// Its kind (and header).
    pub kind: BlockKind,
    /// BFINAL.
    pub is_final: bool,
    /// Its tokens (a stored block's bytes are literals).
    pub tokens: Vec<crate::token::Token>,
    /// Bit offset where the block starts.
    pub start_bit: usize,
    /// Bit offset just after its end-of-block code (or stored data).
    pub end_bit: usize,
}

fn fixed_tables() -> &'static (DecodeTable, DecodeTable) {
    static FIXED: OnceLock<(DecodeTable, DecodeTable)> = OnceLock::new();
    FIXED.get_or_init(|| {
        let mut ll = [8u8; 288];
        ll[144..256].fill(9);
        ll[256..280].fill(7);
        (
            DecodeTable::new(&ll, BLOCK_ROOT_BITS, litlen_meaning),
            DecodeTable::new(&[5u8; 32], BLOCK_ROOT_BITS, dist_meaning),
        )
    })
}

/// Decodes one block body into `sink`, returning the block's kind.
fn inflate_block<S: Sink>(
    r: &mut BitReader<'_>,
    start_bit: usize,
    btype: u32,
    sink: &mut S,
) -> Result<BlockKind, DecodeError> {
    match btype {
        0 => {
            r.align();
            let len = r.bits(16) as u16;
            let nlen = r.bits(16) as u16;
            if r.overrun() {
                return Err(DecodeError::Truncated);
            }
            if len != !nlen {
                return Err(DecodeError::StoredLength { len, nlen });
            }
            let data = r.take_bytes(len as usize).ok_or(DecodeError::Truncated)?;
            for &b in data {
                sink.literal(b)?;
            }
            Ok(BlockKind::Stored)
        }
        1 => {
            let (ll, d) = fixed_tables();
            decode_tokens(r, ll, d, sink)?;
            Ok(BlockKind::Fixed)
        }
        2 => {
            let h = read_dynamic_header(r, start_bit)?;
            let ll = DecodeTable::new(&h.litlen, BLOCK_ROOT_BITS, litlen_meaning);
            let d = DecodeTable::new(&h.dist, BLOCK_ROOT_BITS, dist_meaning);
            decode_tokens(r, &ll, &d, sink)?;
            Ok(BlockKind::Dynamic(h))
        }
        _ => Err(DecodeError::ReservedBlockType { bit: start_bit }),
    }
}

/// Walks the blocks of a raw deflate stream; `on_block` sees each block's
/// kind once it is decoded.
fn walk<S: Sink>(
    input: &[u8],
    sink: &mut S,
    mut on_block: impl FnMut(&mut S, BlockKind, bool, usize, usize),
) -> Result<(), DecodeError> {
    let mut r = BitReader::new(input);
    loop {
        let start_bit = r.bit_pos();
        let is_final = r.bits(1) == 1;
        let btype = r.bits(2);
        let result = inflate_block(&mut r, start_bit, btype, sink);
        if r.overrun() {
            return Err(DecodeError::Truncated);
        }
        on_block(sink, result?, is_final, start_bit, r.bit_pos());
        if is_final {
            break;
        }
    }
    let rest = r.remaining_bytes();
    if rest > 0 {
        return Err(DecodeError::TrailingData { bytes: rest });
    }
    Ok(())
}

/// Inflates a raw deflate stream into `out`; returns the bytes produced.
/// `out.len()` is the output limit.
pub fn inflate(input: &[u8], out: &mut [u8]) -> Result<usize, DecodeError> {
    let mut sink = ByteSink {
        out,
        pos: 0,
        window: DEFLATE_WINDOW,
    };
    walk(input, &mut sink, |_, _, _, _, _| {})?;
    Ok(sink.pos)
}

/// Decodes a raw deflate stream into its blocks and tokens, producing at most
/// `limit` bytes. Distances must fit the 4096-byte IAA window (tokens carry
/// at most 4096).
pub fn inflate_blocks(input: &[u8], limit: usize) -> Result<Vec<InflatedBlock>, DecodeError> {
    let mut sink = TokenRecorder {
        tokens: Vec::new(),
        produced: 0,
        limit,
        window: crate::constants::WINDOW_SIZE,
    };
    let mut blocks = Vec::new();
    walk(
        input,
        &mut sink,
        |sink, kind, is_final, start_bit, end_bit| {
            blocks.push(InflatedBlock {
                kind,
                is_final,
                tokens: std::mem::take(&mut sink.tokens),
                start_bit,
                end_bit,
            });
        },
    )?;
    Ok(blocks)
}
