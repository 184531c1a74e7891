//! Reads a dynamic block header (RFC 1951 §3.2.7): HLIT, HDIST, HCLEN, the
//! code-length code and the run-length coded literal/length and distance
//! lengths. Checks every count and code it reads.
//!
//! It does not decide whether a header suits IAA beyond reporting whether a
//! repeat code crossed from the literal/length to the distance lengths.

use super::table::{entry_kind, entry_len, entry_value, DecodeTable, Kind};
use super::DecodeError;
use crate::bitio::BitReader;
use crate::constants::{CODE_LEN_ORDER, NUM_CODE_LEN_SYMBOLS, NUM_DIST, NUM_LITLEN};
use crate::huffman::kraft_sum;
use crate::table::KRAFT_COMPLETE;

/// The code lengths a dynamic header carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedHeader {
    /// HLIT literal/length lengths, padded with zeros to 286.
    pub litlen: Vec<u8>,
    /// HDIST distance lengths, padded with zeros to 30.
    pub dist: Vec<u8>,
    /// HLIT as sent (257..=286).
    pub hlit: usize,
    /// HDIST as sent (1..=30).
    pub hdist: usize,
    /// True if a repeat code ran from the literal/length lengths into the
    /// distance lengths (legal deflate, rejected by IAA).
    pub crosses_boundary: bool,
    /// Bits from the start of the block (BFINAL) to the end of the header.
    pub bits: usize,
}

/// Reads the header that follows BFINAL/BTYPE; `start_bit` is where the
/// block began (for [`ParsedHeader::bits`]).
pub(crate) fn read_dynamic_header(
    r: &mut BitReader<'_>,
    start_bit: usize,
) -> Result<ParsedHeader, DecodeError> {
    let hlit = r.bits(5) as usize + 257;
    let hdist = r.bits(5) as usize + 1;
    let hclen = r.bits(4) as usize + 4;
    if hlit > NUM_LITLEN {
        return Err(DecodeError::BadHeader("more than 286 literal/length codes"));
    }
    if hdist > NUM_DIST {
        return Err(DecodeError::BadHeader("more than 30 distance codes"));
    }
    let mut cl_lengths = [0u8; NUM_CODE_LEN_SYMBOLS];
    for &s in &CODE_LEN_ORDER[..hclen] {
        cl_lengths[s] = r.bits(3) as u8;
    }
    let kraft = kraft_sum(&cl_lengths);
    if kraft > KRAFT_COMPLETE {
        return Err(DecodeError::BadHeader("over-subscribed code-length code"));
    }
    if kraft < KRAFT_COMPLETE {
        return Err(DecodeError::BadHeader("incomplete code-length code"));
    }
    let cl_table = DecodeTable::new(&cl_lengths, |s| (Kind::Literal, 0, s as u32));

    let total = hlit + hdist;
    let mut lens = [0u8; NUM_LITLEN + NUM_DIST];
    let mut crosses_boundary = false;
    let mut i = 0;
    while i < total {
        r.refill();
        let e = cl_table.lookup(r.peek_all());
        if entry_kind(e) != Kind::Literal as u32 {
            return Err(DecodeError::BadHeader("invalid code-length code"));
        }
        r.consume(entry_len(e));
        let sym = entry_value(e) as u8;
        let (value, run) = match sym {
            0..=15 => (sym, 1),
            16 => {
                if i == 0 {
                    return Err(DecodeError::BadHeader(
                        "repeat code with no previous length",
                    ));
                }
                (lens[i - 1], 3 + r.bits(2) as usize)
            }
            17 => (0, 3 + r.bits(3) as usize),
            _ => (0, 11 + r.bits(7) as usize),
        };
        if i + run > total {
            return Err(DecodeError::BadHeader(
                "repeat code runs past the last length",
            ));
        }
        if i < hlit && i + run > hlit {
            crosses_boundary = true;
        }
        lens[i..i + run].fill(value);
        i += run;
    }
    if r.overrun() {
        return Err(DecodeError::Truncated);
    }
    let mut litlen = lens[..hlit].to_vec();
    litlen.resize(NUM_LITLEN, 0);
    let mut dist = lens[hlit..total].to_vec();
    dist.resize(NUM_DIST, 0);
    if litlen[256] == 0 {
        return Err(DecodeError::BadHeader("no code for end-of-block"));
    }
    if kraft_sum(&litlen) > KRAFT_COMPLETE {
        return Err(DecodeError::BadHeader(
            "over-subscribed literal/length code",
        ));
    }
    if kraft_sum(&dist) > KRAFT_COMPLETE {
        return Err(DecodeError::BadHeader("over-subscribed distance code"));
    }
    Ok(ParsedHeader {
        litlen,
        dist,
        hlit,
        hdist,
        crosses_boundary,
        bits: r.bit_pos() - start_bit,
    })
}

/// Parses a stand-alone block header such as a table's implied header or a
/// kernel `canned_header[]`: BFINAL, BTYPE (must be 2, dynamic), then the
/// dynamic header. Returns the lengths and the header's exact bit length.
pub fn read_block_header(bytes: &[u8]) -> Result<ParsedHeader, DecodeError> {
    let mut r = BitReader::new(bytes);
    let _bfinal = r.bits(1);
    if r.bits(2) != 2 {
        return Err(DecodeError::BadHeader(
            "block type is not dynamic (BTYPE=2)",
        ));
    }
    read_dynamic_header(&mut r, 0)
}
