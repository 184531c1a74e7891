//! Writes a table's implied dynamic block header: BFINAL=1, BTYPE=2, HLIT,
//! HDIST, HCLEN, the code-length code, then the literal/length and distance
//! lengths run-length coded *separately*, so no repeat code (16/17/18)
//! crosses from one to the other (IAA rejects such headers; docs/canned-format.md
//! §3.5, §4.3).
//!
//! Two forms ([`HeaderForm`]): the greedy run-length coding, exact to the
//! bit ([`write_header_shortest`]), and the default byte-aligned form
//! ([`write_header`]), which picks among equivalent encodings of the same
//! lengths one whose bit count is a multiple of 8, so that header bytes ‖
//! canned page bytes is a raw deflate stream without shifting bits (Intel's
//! kernel-2024 header is 656 bits = 82 bytes for the same reason).
//!
//! The header is what a canned page lacks: header ‖ canned body is a standard
//! raw deflate stream. Reading headers back is the decoder's job
//! ([`crate::decode::read_block_header`]).

use super::CodeLengths;
use crate::bitio::BitWriter;
use crate::constants::{CODE_LEN_ORDER, MAX_CODE_LEN_CODE_LEN, NUM_CODE_LEN_SYMBOLS};
use crate::huffman::{canonical_codes, kraft_sum, limited_code_lengths, reverse_bits};
use crate::table::KRAFT_COMPLETE;

mod align;
mod dp;
mod fewest;
use align::aligned;

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

    /// True if the header ends on a byte boundary (no pad bits), so its bytes
    /// can be put in front of a canned page's bytes as they are.
    pub fn is_byte_aligned(&self) -> bool {
        self.bits % 8 == 0
    }

    /// `gen_decomp_table_flags` as the 2024 iaa_crypto canned patch computes
    /// it: decompress enable (bit 0), suppress output (bit 9), and the number
    /// of bits to ignore at the end of the header in bits 8:6.
    pub fn gen_decomp_table_flags(&self) -> u16 {
        0x1 | (1 << 9) | ((self.pad_bits() as u16) << 6)
    }
}

/// Which of the equivalent encodings of a table's lengths to write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HeaderForm {
    /// A whole number of bytes if any encoding this writer knows gets there
    /// (the shortest such one it finds); else the same as `Shortest`.
    #[default]
    Aligned,
    /// The greedy run-length coding with a Huffman code-length code and the
    /// smallest HCLEN: few bits, exact to the bit, computed in one pass (what
    /// the dynamic-block encoder sends with every page, and what tables
    /// carried before alignment). Not always the fewest bits: the aligned
    /// search, which optimises the run splits and code together, often ends
    /// shorter (over thousands of random complete codes it was between 95
    /// bits shorter and 15 bits longer).
    Shortest,
    /// The fewest bits this writer finds, aligned or not: for headers sent
    /// with every stream by a consumer that carries the bit count (ISA-L).
    /// Never longer than `Shortest` or a whole-byte `Aligned`; slower than
    /// both (a few searches over run splits and code-length codes).
    Fewest,
}

impl HeaderForm {
    /// Its name in reports: `aligned`, `greedy` or `fewest`.
    pub fn name(self) -> &'static str {
        match self {
            HeaderForm::Aligned => "aligned",
            HeaderForm::Shortest => "greedy",
            HeaderForm::Fewest => "fewest",
        }
    }
}

/// One run-length coded item: a code-length symbol 0..=18 and its extra bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ClItem {
    symbol: u8,
    extra: u8,
}

/// Lengths a code-length symbol stands for before its extra value, by
/// any byte: the header search calls [`ClItem::run`] in its inner loops,
/// and a lookup with no bounds check and no branch leaves a fuzzer build
/// no comparison to trace.
const RUN_BASE: [u8; 256] = {
    let mut t = [1u8; 256];
    t[16] = 3;
    t[17] = 3;
    t[18] = 11;
    t
};

impl ClItem {
    /// Lengths the item stands for (a length item's extra value is 0).
    fn run(self) -> usize {
        RUN_BASE[self.symbol as usize] as usize + self.extra as usize
    }
}

/// Extra bits after code-length symbol `s`.
fn extra_bits(s: usize) -> u32 {
    match s {
        16 => 2,
        17 => 3,
        18 => 7,
        _ => 0,
    }
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

/// Everything a header carries besides HLIT/HDIST.
#[derive(Clone, Debug)]
struct Encoding {
    hclen: usize,
    cl_lengths: [u8; NUM_CODE_LEN_SYMBOLS],
    items: Vec<ClItem>,
}

impl Encoding {
    /// Header bits, BFINAL to the last length.
    fn bits(&self) -> usize {
        17 + 3 * self.hclen + body_bits(&self.cl_lengths, &self.items)
    }
}

/// Body bits of `items` under the code-length code `cl`.
fn body_bits(cl: &[u8; NUM_CODE_LEN_SYMBOLS], items: &[ClItem]) -> usize {
    body_bits_of(cl, &align::symbol_counts(items))
}

/// HLIT and HDIST as this writer sends them: trailing zero lengths dropped
/// (at least 257 and 1 codes are sent).
fn counts(lengths: &CodeLengths) -> (usize, usize) {
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
    (hlit, hdist)
}

/// Smallest HCLEN that sends every non-zero code-length-code length.
fn min_hclen(cl: &[u8; NUM_CODE_LEN_SYMBOLS]) -> usize {
    CODE_LEN_ORDER
        .iter()
        .rposition(|&s| cl[s] != 0)
        .map_or(0, |p| p + 1)
        .max(4)
}

/// A complete code-length code (lengths ≤ 7) for the symbols `items` use.
fn cl_tree(items: &[ClItem]) -> [u8; NUM_CODE_LEN_SYMBOLS] {
    cl_tree_of(align::symbol_counts(items))
}

/// [`cl_tree`] from how often each code-length symbol is used.
fn cl_tree_of(mut counts: [u64; NUM_CODE_LEN_SYMBOLS]) -> [u8; NUM_CODE_LEN_SYMBOLS] {
    // zlib rejects an incomplete code-length code, and a code with one used
    // symbol is incomplete: give a second symbol a code in that case.
    if counts.iter().filter(|&&c| c > 0).count() < 2 {
        let spare = if counts[0] == 0 { 0 } else { 1 };
        counts[spare] = 1;
    }
    limited_code_lengths(&counts, MAX_CODE_LEN_CODE_LEN)
        .try_into()
        .expect("19 code-length symbols")
}

/// Body bits (the coded lengths) of items using each code-length symbol
/// `used[s]` times, under the code-length code `cl`: [`body_bits`] from
/// the counts (a symbol's extra bits are its own).
fn body_bits_of(cl: &[u8; NUM_CODE_LEN_SYMBOLS], used: &[u64; NUM_CODE_LEN_SYMBOLS]) -> usize {
    (0..NUM_CODE_LEN_SYMBOLS)
        .map(|s| used[s] as usize * (cl[s] as usize + extra_bits(s) as usize))
        .sum()
}

/// The greedy encoding: [`rle`] on each alphabet, the Huffman code of its
/// symbols, the smallest HCLEN.
fn greedy(seq: &[u8], hlit: usize) -> Encoding {
    let mut items = Vec::with_capacity(seq.len());
    rle(&seq[..hlit], &mut items);
    rle(&seq[hlit..], &mut items);
    let cl_lengths = cl_tree(&items);
    Encoding {
        hclen: min_hclen(&cl_lengths),
        cl_lengths,
        items,
    }
}

/// Writes the header bits for `enc`.
fn emit(hlit: usize, hdist: usize, enc: &Encoding) -> BlockHeader {
    let cl_codes = canonical_codes(&enc.cl_lengths);
    let mut bytes = Vec::with_capacity(128);
    let mut w = BitWriter::new(&mut bytes);
    w.put(1, 1); // BFINAL
    w.put(2, 2); // BTYPE = 10 (dynamic)
    w.put((hlit - 257) as u32, 5);
    w.put((hdist - 1) as u32, 5);
    w.put((enc.hclen - 4) as u32, 4);
    for &s in &CODE_LEN_ORDER[..enc.hclen] {
        w.put(enc.cl_lengths[s] as u32, 3);
    }
    for it in &enc.items {
        let s = it.symbol as usize;
        let len = enc.cl_lengths[s];
        debug_assert!(len > 0, "code-length symbol {s} has no code");
        w.put(reverse_bits(cl_codes[s], len) as u32, len as u32);
        w.put(it.extra as u32, extra_bits(s));
    }
    let bits = w.bit_len();
    w.finish();
    debug_assert_eq!(bits, enc.bits());
    BlockHeader { bytes, bits }
}

/// The encoding [`write_header_as`] writes, with HLIT and HDIST.
fn plan(lengths: &CodeLengths, form: HeaderForm) -> (usize, usize, Encoding) {
    let (hlit, hdist) = counts(lengths);
    let mut seq = Vec::with_capacity(hlit + hdist);
    seq.extend_from_slice(&lengths.litlen[..hlit]);
    seq.extend_from_slice(&lengths.dist[..hdist]);
    let g = greedy(&seq, hlit);
    let enc = match form {
        HeaderForm::Shortest => g,
        HeaderForm::Aligned if g.bits() % 8 == 0 => g,
        HeaderForm::Aligned => aligned(&seq, hlit, &g).unwrap_or(g),
        HeaderForm::Fewest => fewest::fewest(&seq, hlit, &g),
    };
    (hlit, hdist, enc)
}

/// Builds the header for `lengths` in `form`. HLIT and HDIST drop trailing
/// zero lengths (at least 257 and 1 codes are sent).
pub fn write_header_as(lengths: &CodeLengths, form: HeaderForm) -> BlockHeader {
    let (hlit, hdist, enc) = plan(lengths, form);
    emit(hlit, hdist, &enc)
}

/// The byte-aligned header ([`HeaderForm::Aligned`]): what tables carry.
pub fn write_header(lengths: &CodeLengths) -> BlockHeader {
    write_header_as(lengths, HeaderForm::Aligned)
}

/// The greedy, exact-bit header ([`HeaderForm::Shortest`]).
pub fn write_header_shortest(lengths: &CodeLengths) -> BlockHeader {
    write_header_as(lengths, HeaderForm::Shortest)
}

/// Bits of the greedy header ([`HeaderForm::Shortest`]) for `lengths`,
/// without writing it: cheap enough for a search over code lengths to
/// call for every candidate (the trainer's header-aware tables).
pub fn greedy_header_bits(lengths: &CodeLengths) -> usize {
    plan(lengths, HeaderForm::Shortest).2.bits()
}

#[cfg(test)]
mod tests {
    use super::align::{aligned_code, aligned_tree, greedy_bits, symbol_counts};
    use super::dp::Dp;
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

    /// Complete codes from random counts (some zero, so runs of zeros and
    /// trimmed HLIT/HDIST occur), plus the built-in tables.
    fn sample_lengths() -> Vec<CodeLengths> {
        let mut rng = crate::rng::XorShift64::new(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next_u64();
        let mut v = vec![
            *crate::Table::kernel_2024().lengths(),
            *crate::Table::fixed().lengths(),
        ];
        for k in 0..60u64 {
            let zeros = k % 4 * 30; // percent of symbols left uncoded
            let mut count = |n: usize| -> Vec<u64> {
                (0..n)
                    .map(|_| {
                        let c = next() % 2000;
                        if c % 100 < zeros {
                            0
                        } else {
                            c * c * c % 1_000_000_007 + 1
                        }
                    })
                    .collect()
            };
            let mut ll = count(286);
            ll[256] = ll[256].max(1);
            let mut d = count(30);
            d[0] = d[0].max(1);
            d[1] = d[1].max(1);
            v.push(CodeLengths {
                litlen: limited_code_lengths(&ll, 15).try_into().unwrap(),
                dist: limited_code_lengths(&d, 15).try_into().unwrap(),
            });
        }
        v
    }

    #[test]
    fn aligned_headers_are_whole_bytes_and_decode_to_the_same_lengths() {
        for (i, l) in sample_lengths().iter().enumerate() {
            let a = write_header(l);
            let s = write_header_shortest(l);
            assert!(a.is_byte_aligned(), "table {i}: {} bits", a.bits);
            assert_eq!(a.pad_bits(), 0);
            assert_eq!(a.gen_decomp_table_flags(), 0x201);
            assert!(a.bits <= s.bits + 16, "table {i}: {} vs {}", a.bits, s.bits);
            for h in [&a, &s] {
                let p = crate::decode::read_block_header(&h.bytes).unwrap();
                assert_eq!(p.bits, h.bits, "table {i}");
                assert_eq!(p.litlen, l.litlen, "table {i}");
                assert_eq!(p.dist, l.dist, "table {i}");
                assert!(!p.crosses_boundary, "table {i}");
            }
            let p = crate::decode::read_block_header(&s.bytes).unwrap();
            let q = crate::decode::read_block_header(&a.bytes).unwrap();
            assert_eq!((p.hlit, p.hdist), (q.hlit, q.hdist), "table {i}");
        }
    }

    #[test]
    fn fewest_headers_are_never_longer_and_decode_to_the_same_lengths() {
        let mut shorter = 0;
        for (i, l) in sample_lengths().iter().enumerate() {
            let f = write_header_as(l, HeaderForm::Fewest);
            let s = write_header_shortest(l);
            let a = write_header(l);
            assert_eq!(greedy_header_bits(l), s.bits, "table {i}");
            assert!(f.bits <= s.bits && f.bits <= a.bits, "table {i}");
            shorter += usize::from(f.bits < s.bits.min(a.bits));
            let p = crate::decode::read_block_header(&f.bytes).unwrap();
            assert_eq!(
                (p.bits, &p.litlen[..], &p.dist[..]),
                (f.bits, &l.litlen[..], &l.dist[..])
            );
            assert!(!p.crosses_boundary, "table {i}");
        }
        // The alternation finds headers neither other form reaches.
        assert!(shorter > 0);
    }

    #[test]
    fn kernel_2024_needs_another_encoding_to_align() {
        let l = crate::Table::kernel_2024().lengths().to_owned();
        // The greedy coding is 613 bits; 616 = 77 bytes is aligned (Intel's
        // own header for these lengths is 656 bits = 82 bytes).
        assert_eq!(write_header_shortest(&l).bits, 613);
        assert_eq!(write_header(&l).bits, 616);
        assert_eq!(write_header(&l).bytes.len(), 77);
        assert_eq!(write_header_as(&l, HeaderForm::Shortest).bits, 613);
    }

    #[test]
    fn aligned_tree_gives_complete_codes_for_every_symbol_used() {
        for l in sample_lengths() {
            let (hlit, hdist, g) = plan(&l, HeaderForm::Shortest);
            assert_eq!(
                g.items.iter().map(|it| it.run()).sum::<usize>(),
                hlit + hdist
            );
            let Some(e) = aligned_tree(&g.items, usize::MAX) else {
                continue;
            };
            assert_eq!(e.bits() % 8, 0);
            assert!(e.bits() >= greedy_bits(&symbol_counts(&g.items)));
            assert_eq!(kraft_sum(&e.cl_lengths), KRAFT_COMPLETE);
            assert!(e.cl_lengths.iter().all(|&c| c <= 7));
            assert!(e.hclen >= min_hclen(&e.cl_lengths) && e.hclen <= 19);
            for it in &e.items {
                assert_ne!(e.cl_lengths[it.symbol as usize], 0);
            }
        }
    }

    #[test]
    fn the_greedy_coding_with_more_hclen_entries_bounds_the_first_search() {
        // `aligned` searches first under the bits of the greedy coding with
        // HCLEN raised to a byte boundary: that coding must be a header of
        // the same lengths, and the first search's answer no longer.
        let mut padded_ones = 0;
        for l in sample_lengths() {
            let (hlit, hdist, g) = plan(&l, HeaderForm::Shortest);
            let pad = (8 - g.bits() % 8) % 8 * 3 % 8;
            if g.hclen + pad > NUM_CODE_LEN_SYMBOLS {
                continue;
            }
            let padded = Encoding {
                hclen: g.hclen + pad,
                ..g.clone()
            };
            assert_eq!(padded.bits() % 8, 0);
            let h = emit(hlit, hdist, &padded);
            let back = crate::decode::read_block_header(&h.bytes).expect("a header");
            assert_eq!(
                (&back.litlen[..], &back.dist[..]),
                (&l.litlen[..], &l.dist[..])
            );
            assert_eq!(back.bits, padded.bits());
            let e = aligned_tree(&g.items, usize::MAX).expect("the padded coding is one");
            assert!(e.bits() <= padded.bits());
            padded_ones += 1;
        }
        assert!(padded_ones >= 5, "{padded_ones} tables could be padded");
    }

    #[test]
    fn a_bounded_tree_search_finds_what_the_full_one_finds_below_the_bound() {
        for l in sample_lengths() {
            let (_, _, g) = plan(&l, HeaderForm::Shortest);
            let used = symbol_counts(&g.items);
            let full = aligned_code(&used, usize::MAX);
            let Some(e) = aligned_tree(&g.items, usize::MAX) else {
                assert_eq!(full, None);
                continue;
            };
            assert_eq!(full, Some((e.hclen, e.cl_lengths)));
            for bound in [e.bits() + 1, e.bits() + 8, e.bits() + 200] {
                assert_eq!(aligned_code(&used, bound), full, "bound {bound}");
            }
            // At or under the optimum the bound may cut everything, but
            // never yields a shorter header than the optimum.
            for bound in [e.bits(), e.bits() - 8] {
                if let Some((hclen, cl)) = aligned_code(&used, bound) {
                    assert!(17 + 3 * hclen + body_bits(&cl, &g.items) >= e.bits());
                }
            }
        }
    }

    #[test]
    fn dp_paths_decode_to_the_sequence_in_every_residue() {
        let l = crate::Table::kernel_2024().lengths().to_owned();
        let (hlit, hdist) = counts(&l);
        let mut seq = l.litlen[..hlit].to_vec();
        seq.extend_from_slice(&l.dist[..hdist]);
        let g = greedy(&seq, hlit);
        let dp = Dp::run(&seq, hlit, &g.cl_lengths);
        assert_eq!(
            dp.best((g.bits() - 17 - 3 * g.hclen) % 8),
            Some(body_bits(&g.cl_lengths, &g.items) as u32),
            "the greedy coding is optimal for its own code here"
        );
        for r in (0..8).filter(|&r| dp.best(r).is_some()) {
            let items = dp.items(r);
            assert_eq!(body_bits(&g.cl_lengths, &items) % 8, r);
            assert_eq!(Some(body_bits(&g.cl_lengths, &items) as u32), dp.best(r));
            // No item runs across the literal/length–distance boundary.
            let mut pos = 0;
            for it in &items {
                assert!(pos >= hlit || pos + it.run() <= hlit);
                assert!(!(it.symbol == 16 && (pos == 0 || pos == hlit)));
                pos += it.run();
            }
            assert_eq!(expand(&items), seq);
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
