//! Writes a table's implied dynamic block header: BFINAL=1, BTYPE=2, HLIT,
//! HDIST, HCLEN, the code-length code, then the literal/length and distance
//! lengths run-length coded *separately*, so no repeat code (16/17/18)
//! crosses from one to the other (IAA rejects such headers; canned-format.md
//! §3.5, §4.3).
//!
//! The header is what a canned page lacks: header ‖ canned body is a standard
//! raw deflate stream. Reading headers back is the decoder's job
//! ([`crate::decode::read_dynamic_header`]).

use super::CodeLengths;
use crate::bitio::BitWriter;
use crate::constants::{CODE_LEN_ORDER, MAX_CODE_LEN_CODE_LEN, NUM_CODE_LEN_SYMBOLS};
use crate::huffman::{canonical_codes, limited_code_lengths, reverse_bits};

/// A dynamic block header as bytes plus its exact length in bits; the last
/// byte is zero-padded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockHeader {
    /// The header bits, LSB-first, zero-padded to a whole byte.
    pub bytes: Vec<u8>,
    /// Exact number of header bits.
    pub bits: usize,
}

impl BlockHeader {
    /// Zero bits at the end of the last byte: the kernel's "ignore end bits".
    pub fn pad_bits(&self) -> usize {
        self.bytes.len() * 8 - self.bits
    }

    /// `gen_decomp_table_flags` as the 2024 iaa_crypto canned patch computes
    /// it: decompress enable (bit 0), suppress output (bit 9), and the number
    /// of bits to ignore at the end of the header in bits 8:6.
    pub fn gen_decomp_table_flags(&self) -> u16 {
        0x1 | (1 << 9) | ((self.pad_bits() as u16) << 6)
    }
}

/// One run-length coded item: a code-length symbol 0..=18 and its extra bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ClItem {
    symbol: u8,
    extra: u8,
}

/// Run-length codes one sequence of code lengths (RFC 1951 §3.2.7).
fn rle(lengths: &[u8], out: &mut Vec<ClItem>) {
    let mut i = 0;
    while i < lengths.len() {
        let v = lengths[i];
        let mut run = 1;
        while i + run < lengths.len() && lengths[i + run] == v {
            run += 1;
        }
        i += run;
        if v == 0 {
            while run >= 11 {
                let n = run.min(138);
                out.push(ClItem {
                    symbol: 18,
                    extra: (n - 11) as u8,
                });
                run -= n;
            }
            if run >= 3 {
                out.push(ClItem {
                    symbol: 17,
                    extra: (run - 3) as u8,
                });
                run = 0;
            }
            for _ in 0..run {
                out.push(ClItem {
                    symbol: 0,
                    extra: 0,
                });
            }
        } else {
            out.push(ClItem {
                symbol: v,
                extra: 0,
            });
            run -= 1;
            while run >= 3 {
                let n = run.min(6);
                out.push(ClItem {
                    symbol: 16,
                    extra: (n - 3) as u8,
                });
                run -= n;
            }
            for _ in 0..run {
                out.push(ClItem {
                    symbol: v,
                    extra: 0,
                });
            }
        }
    }
}

/// Builds the header for `lengths`. HLIT and HDIST drop trailing zero lengths
/// (at least 257 and 1 codes are sent).
pub fn write_header(lengths: &CodeLengths) -> BlockHeader {
    let hlit = lengths
        .litlen
        .iter()
        .rposition(|&l| l != 0)
        .map_or(0, |p| p + 1)
        .max(257);
    let hdist = lengths
        .dist
        .iter()
        .rposition(|&l| l != 0)
        .map_or(0, |p| p + 1)
        .max(1);

    let mut items = Vec::with_capacity(hlit + hdist);
    rle(&lengths.litlen[..hlit], &mut items);
    rle(&lengths.dist[..hdist], &mut items);

    let mut counts = [0u64; NUM_CODE_LEN_SYMBOLS];
    for it in &items {
        counts[it.symbol as usize] += 1;
    }
    // zlib rejects an incomplete code-length code, and a code with one used
    // symbol is incomplete: give a second symbol a code in that case.
    if counts.iter().filter(|&&c| c > 0).count() < 2 {
        let spare = if counts[0] == 0 { 0 } else { 1 };
        counts[spare] = 1;
    }
    let cl_lengths = limited_code_lengths(&counts, MAX_CODE_LEN_CODE_LEN);
    let cl_codes = canonical_codes(&cl_lengths);
    let hclen = CODE_LEN_ORDER
        .iter()
        .rposition(|&s| cl_lengths[s] != 0)
        .map_or(0, |p| p + 1)
        .max(4);

    let mut bytes = Vec::with_capacity(128);
    let mut w = BitWriter::new(&mut bytes);
    w.put(1, 1); // BFINAL
    w.put(2, 2); // BTYPE = 10 (dynamic)
    w.put((hlit - 257) as u32, 5);
    w.put((hdist - 1) as u32, 5);
    w.put((hclen - 4) as u32, 4);
    for &s in &CODE_LEN_ORDER[..hclen] {
        w.put(cl_lengths[s] as u32, 3);
    }
    for it in &items {
        let s = it.symbol as usize;
        w.put(
            reverse_bits(cl_codes[s], cl_lengths[s]) as u32,
            cl_lengths[s] as u32,
        );
        match s {
            16 => w.put(it.extra as u32, 2),
            17 => w.put(it.extra as u32, 3),
            18 => w.put(it.extra as u32, 7),
            _ => {}
        }
    }
    let bits = w.bit_len();
    w.finish();
    BlockHeader { bytes, bits }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(items: &[ClItem]) -> Vec<u8> {
        let mut v = Vec::new();
        for it in items {
            match it.symbol {
                16 => {
                    let last = *v.last().unwrap();
                    v.extend(std::iter::repeat_n(last, 3 + it.extra as usize));
                }
                17 => v.extend(std::iter::repeat_n(0, 3 + it.extra as usize)),
                18 => v.extend(std::iter::repeat_n(0, 11 + it.extra as usize)),
                s => v.push(s),
            }
        }
        v
    }

    #[test]
    fn rle_round_trips_runs_of_every_size() {
        for v in [0u8, 5] {
            for n in 1..300 {
                let mut seq = vec![7u8; 2];
                seq.extend(std::iter::repeat_n(v, n));
                seq.push(9);
                let mut items = Vec::new();
                rle(&seq, &mut items);
                assert_eq!(expand(&items), seq, "value {v} run {n}");
                for it in &items {
                    match it.symbol {
                        16 => assert!(it.extra <= 3),
                        17 => assert!(it.extra <= 7),
                        18 => assert!(it.extra <= 127),
                        _ => assert_eq!(it.extra, 0),
                    }
                }
            }
        }
    }

    #[test]
    fn kernel_flags_formula() {
        let h = BlockHeader {
            bytes: vec![0; 82],
            bits: 656,
        };
        assert_eq!(h.gen_decomp_table_flags(), 0x201);
        let h = BlockHeader {
            bytes: vec![0; 71],
            bits: 565,
        };
        assert_eq!(h.gen_decomp_table_flags(), 0x201 | (3 << 6));
    }
}
