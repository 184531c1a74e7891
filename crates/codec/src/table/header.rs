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
}

/// One run-length coded item: a code-length symbol 0..=18 and its extra bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ClItem {
    symbol: u8,
    extra: u8,
}

impl ClItem {
    /// Lengths the item stands for.
    fn run(self) -> usize {
        match self.symbol {
            16 | 17 => 3 + self.extra as usize,
            18 => 11 + self.extra as usize,
            _ => 1,
        }
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

fn body_bits(cl: &[u8; NUM_CODE_LEN_SYMBOLS], items: &[ClItem]) -> usize {
    items
        .iter()
        .map(|it| cl[it.symbol as usize] as usize + extra_bits(it.symbol as usize) as usize)
        .sum()
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
    let mut counts = [0u64; NUM_CODE_LEN_SYMBOLS];
    for it in items {
        counts[it.symbol as usize] += 1;
    }
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

/// A lower bound on the header bits with `items` and any code-length code:
/// their length-limited Huffman code (optimal) and the HCLEN that just
/// reaches the last symbol they use.
fn greedy_bits(items: &[ClItem]) -> usize {
    let cl = cl_tree(items);
    let hclen = CODE_LEN_ORDER
        .iter()
        .rposition(|&s| items.iter().any(|it| it.symbol as usize == s))
        .map_or(0, |p| p + 1)
        .max(4);
    17 + 3 * hclen + body_bits(&cl, items)
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

const INF: u32 = u32::MAX;

/// For one code-length code: the fewest body bits (the run-length coded
/// lengths, without BFINAL..the code-length code) in each residue mod 8, and
/// how to get there. Segments are `[0, hlit)` and `[hlit, len)`: no item
/// crosses `hlit`, and a repeat (16) never starts a segment.
struct Dp {
    /// `cost[i * 8 + r]`: fewest bits coding `seq[..i]` with bits ≡ r (mod 8).
    cost: Vec<u32>,
    /// The last item on that best path and the residue before it.
    back: Vec<(ClItem, u8)>,
    n: usize,
}

impl Dp {
    fn run(seq: &[u8], hlit: usize, cl: &[u8; NUM_CODE_LEN_SYMBOLS]) -> Dp {
        let n = seq.len();
        // Runs within the segment: equal lengths from i on, and lengths equal
        // to seq[i - 1] from i on (0 at a segment start).
        let mut same = vec![0usize; n + 1];
        let mut prev_run = vec![0usize; n + 1];
        for i in (0..n).rev() {
            let seg_end = if i < hlit { hlit } else { n };
            same[i] = if i + 1 < seg_end && seq[i + 1] == seq[i] {
                same[i + 1] + 1
            } else {
                1
            };
            prev_run[i] = if i == 0 || i == hlit {
                0
            } else if seq[i] == seq[i - 1] {
                same[i]
            } else {
                0
            };
        }
        let mut cost = vec![INF; (n + 1) * 8];
        let mut back = vec![
            (
                ClItem {
                    symbol: 0,
                    extra: 0
                },
                0u8
            );
            (n + 1) * 8
        ];
        cost[0] = 0;
        let relax = |cost: &mut Vec<u32>,
                     back: &mut Vec<(ClItem, u8)>,
                     from: usize,
                     r: usize,
                     c: u32,
                     item: ClItem| {
            let bits = cl[item.symbol as usize] as u32 + extra_bits(item.symbol as usize);
            let to = from + item.run();
            let nr = (r + bits as usize) % 8;
            let k = to * 8 + nr;
            if c + bits < cost[k] {
                cost[k] = c + bits;
                back[k] = (item, r as u8);
            }
        };
        for i in 0..n {
            let v = seq[i];
            for r in 0..8 {
                let c = cost[i * 8 + r];
                if c == INF {
                    continue;
                }
                if cl[v as usize] != 0 {
                    relax(
                        &mut cost,
                        &mut back,
                        i,
                        r,
                        c,
                        ClItem {
                            symbol: v,
                            extra: 0,
                        },
                    );
                }
                // Repeat codes: (symbol, shortest run, longest run here).
                let zeros = if v == 0 { same[i] } else { 0 };
                for (symbol, min, max) in [
                    (16u8, 3, prev_run[i].min(6)),
                    (17, 3, zeros.min(10)),
                    (18, 11, zeros.min(138)),
                ] {
                    if cl[symbol as usize] == 0 {
                        continue;
                    }
                    for run in min..=max {
                        let item = ClItem {
                            symbol,
                            extra: (run - min) as u8,
                        };
                        relax(&mut cost, &mut back, i, r, c, item);
                    }
                }
            }
        }
        Dp { cost, back, n }
    }

    /// Fewest body bits ending in residue `r`, if reachable.
    fn best(&self, r: usize) -> Option<u32> {
        let c = self.cost[self.n * 8 + r];
        (c != INF).then_some(c)
    }

    /// The items of the best path ending in residue `r` (reachable).
    fn items(&self, mut r: usize) -> Vec<ClItem> {
        let mut items = Vec::new();
        let mut i = self.n;
        while i > 0 {
            let (item, pr) = self.back[i * 8 + r];
            items.push(item);
            i -= item.run();
            r = pr as usize;
        }
        items.reverse();
        items
    }
}

/// Rounds of alternating between the two searches below.
const ROUNDS: usize = 4;

/// Kraft sum of a complete code-length code in units of 2^-7.
const CL_KRAFT: usize = 1 << MAX_CODE_LEN_CODE_LEN;

/// How far from its Huffman length [`aligned_tree`] moves a used symbol.
const TREE_WINDOW: u8 = 1;

/// For fixed `items`: the complete code-length code (lengths ≤ 7, every
/// symbol `items` uses coded) and HCLEN that make the header shortest among
/// those a whole number of bytes long, if any.
///
/// A DP over the used symbols × Kraft sum so far × body bits mod 8, each
/// used symbol within [`TREE_WINDOW`] of its Huffman length. Unused symbols
/// cost nothing but can fill the rest of the Kraft sum: a remainder of `f`
/// units of 2^-7 needs `popcount(f)` of them among the first HCLEN entries.
fn aligned_tree(items: &[ClItem]) -> Option<Encoding> {
    let mut used = [0u64; NUM_CODE_LEN_SYMBOLS];
    let mut extra = 0usize;
    for it in items {
        used[it.symbol as usize] += 1;
        extra += extra_bits(it.symbol as usize) as usize;
    }
    let huffman = limited_code_lengths(&used, MAX_CODE_LEN_CODE_LEN);
    // Used symbols in CODE_LEN_ORDER, with their order positions.
    let syms: Vec<(usize, usize)> = CODE_LEN_ORDER
        .iter()
        .enumerate()
        .filter(|&(_, &s)| used[s] > 0)
        .map(|(p, &s)| (p, s))
        .collect();
    let last_pos = syms.last()?.0;
    const W: usize = (CL_KRAFT + 1) * 8;
    let idx = |kraft: usize, r: usize| kraft * 8 + r;
    // cost[j]: after the first j used symbols; choice[j]: the length given
    // to used symbol j - 1 on the best path into each state.
    let mut cost = vec![[INF; W]; syms.len() + 1];
    let mut choice = vec![[0u8; W]; syms.len() + 1];
    cost[0][idx(0, 0)] = 0;
    for (j, &(_, s)) in syms.iter().enumerate() {
        let n = used[s] as u32;
        let h = huffman[s];
        let lo = h.saturating_sub(TREE_WINDOW).max(1);
        let hi = (h + TREE_WINDOW).min(MAX_CODE_LEN_CODE_LEN);
        let (done, rest) = cost.split_at_mut(j + 1);
        let (from, to) = (&done[j], &mut rest[0]);
        let ch = &mut choice[j + 1];
        for kraft in 0..CL_KRAFT {
            for r in 0..8 {
                let c = from[idx(kraft, r)];
                if c == INF {
                    continue;
                }
                for len in lo..=hi {
                    let nk = kraft + (CL_KRAFT >> len);
                    if nk > CL_KRAFT {
                        continue;
                    }
                    let add = n * len as u32;
                    let k = idx(nk, (r + add as usize) % 8);
                    if c + add < to[k] {
                        to[k] = c + add;
                        ch[k] = len;
                    }
                }
            }
        }
    }
    let fin = &cost[syms.len()];
    // (total bits, hclen, Kraft sum of the used symbols, residue)
    let mut best: Option<(usize, usize, usize, usize)> = None;
    for hclen in (last_pos + 1).max(4)..=NUM_CODE_LEN_SYMBOLS {
        let spare = CODE_LEN_ORDER[..hclen]
            .iter()
            .filter(|&&s| used[s] == 0)
            .count() as u32;
        let r = (8 - (17 + 3 * hclen + extra) % 8) % 8;
        for kraft in 1..=CL_KRAFT {
            let c = fin[idx(kraft, r)];
            if c == INF || ((CL_KRAFT - kraft) as u32).count_ones() > spare {
                continue;
            }
            let total = 17 + 3 * hclen + extra + c as usize;
            if best.is_none_or(|b| total < b.0) {
                best = Some((total, hclen, kraft, r));
            }
        }
    }
    let (_, hclen, mut kraft, mut r) = best?;
    let mut cl_lengths = [0u8; NUM_CODE_LEN_SYMBOLS];
    // Unused symbols among the first HCLEN entries fill the Kraft sum.
    let mut fill = CL_KRAFT - kraft;
    for &s in CODE_LEN_ORDER[..hclen].iter().filter(|&&s| used[s] == 0) {
        if fill == 0 {
            break;
        }
        let unit: usize = 1 << fill.trailing_zeros();
        cl_lengths[s] = MAX_CODE_LEN_CODE_LEN - unit.trailing_zeros() as u8;
        fill -= unit;
    }
    debug_assert_eq!(fill, 0);
    for j in (1..=syms.len()).rev() {
        let s = syms[j - 1].1;
        let len = choice[j][idx(kraft, r)];
        cl_lengths[s] = len;
        kraft -= CL_KRAFT >> len;
        r = (r + 8 - (used[s] as usize * len as usize) % 8) % 8;
    }
    debug_assert_eq!((kraft, r), (0, 0));
    Some(Encoding {
        hclen,
        cl_lengths,
        items: items.to_vec(),
    })
}

/// The shortest byte-aligned encoding found, if any, by alternating two
/// exact searches: for a code-length code, the best run-length coding in
/// every residue mod 8 ([`Dp`], combined with every HCLEN allowed); for the
/// items of each such coding, the best aligned code-length code and HCLEN
/// ([`aligned_tree`]). Starts from the greedy coding; each round can only
/// shorten the best header, and stops when the code repeats.
fn aligned(seq: &[u8], hlit: usize, start: &Encoding) -> Option<Encoding> {
    let mut best = aligned_tree(&start.items);
    let mut tried: Vec<[u8; NUM_CODE_LEN_SYMBOLS]> = Vec::new();
    let mut cl = best.as_ref().map_or(start.cl_lengths, |e| e.cl_lengths);
    let keep = |best: &mut Option<Encoding>, e: Encoding| {
        if best.as_ref().is_none_or(|b| e.bits() < b.bits()) {
            *best = Some(e);
        }
    };
    for _ in 0..ROUNDS {
        if tried.contains(&cl) {
            break;
        }
        tried.push(cl);
        debug_assert_eq!(kraft_sum(&cl), KRAFT_COMPLETE);
        let dp = Dp::run(seq, hlit, &cl);
        for hclen in min_hclen(&cl)..=NUM_CODE_LEN_SYMBOLS {
            let r = (8 - (17 + 3 * hclen) % 8) % 8;
            if dp.best(r).is_some() {
                let e = Encoding {
                    hclen,
                    cl_lengths: cl,
                    items: dp.items(r),
                };
                keep(&mut best, e);
            }
        }
        for r in (0..8).filter(|&r| dp.best(r).is_some()) {
            let items = dp.items(r);
            // No code-length code does better than the Huffman code of the
            // items with the smallest HCLEN: skip items that cannot win.
            let bound = greedy_bits(&items);
            if best.as_ref().is_some_and(|b| bound >= b.bits()) {
                continue;
            }
            if let Some(e) = aligned_tree(&items) {
                keep(&mut best, e);
            }
        }
        match &best {
            Some(b) => cl = b.cl_lengths,
            None => break,
        }
    }
    best
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

    /// Complete codes from random counts (some zero, so runs of zeros and
    /// trimmed HLIT/HDIST occur), plus the built-in tables.
    fn sample_lengths() -> Vec<CodeLengths> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
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
            let Some(e) = aligned_tree(&g.items) else {
                continue;
            };
            assert_eq!(e.bits() % 8, 0);
            assert!(e.bits() >= greedy_bits(&g.items));
            assert_eq!(kraft_sum(&e.cl_lengths), KRAFT_COMPLETE);
            assert!(e.cl_lengths.iter().all(|&c| c <= 7));
            assert!(e.hclen >= min_hclen(&e.cl_lengths) && e.hclen <= 19);
            for it in &e.items {
                assert_ne!(e.cl_lengths[it.symbol as usize], 0);
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
