//! The canned decoder's fast loop: decodes tokens straight into the
//! caller's buffer while at least 15 input bytes are left to load (two
//! 8-byte refills per iteration, no end checks between) and the output has
//! room for the literals an iteration writes.
//!
//! It handles only the common case: literals (one or two per table entry,
//! up to three entries per iteration), and matches whose distance is within
//! the output and the window and whose copy, with its overshoot, fits the
//! buffer; a match whose length and distance codes fit the root index
//! together takes one lookup and one shift ([`FastRoot`]'s match entries).
//! At anything else (end of block, an invalid code, a bad distance, a match
//! near the end of the buffer, the last bytes of input) it stops at the
//! first bit of that token and returns; the reference loop
//! ([`super::decode_tokens`]) goes on from there, so every error and every
//! final check is the reference's.
//!
//! Time goes mostly to the chain of dependent steps from one token's entry
//! to the next (load, shift, mask, load), so each next entry is looked up
//! as soon as the current token's bits are known: before the refill and
//! the match copy, which run beside it. Beside that chain the loop runs
//! close to six instructions a cycle (on pages decoded a few times in a row,
//! as the bench does), so instructions count too: the literal entries are
//! nested tests with a refill on each way out (no count, no flag tested
//! again), and a match entry's own bits come from the shift that consumes
//! them (measured with callgrind on the bench's held-out pages: 28,930 to
//! 27,380 instructions per page, about 5% less time).
//!
//! Input loads and output stores go through raw pointers without bounds
//! checks (measured with callgrind on the shipped corpus: the same loop with
//! checked slices runs 52k instructions per page where this one runs 37k,
//! and takes a few per cent more time); each `unsafe` block states the
//! bound it relies on.

use super::table::{
    entry_bits, entry_kind, entry_len, entry_value, DecodeTable, Kind, CANNED_DIST_ROOT_BITS,
    CANNED_LITLEN_ROOT_BITS, LITERAL_BIT, PAIR_BIT, RARE_BITS,
};
use super::ByteSink;
use crate::bitio::BitReader;
use crate::constants::{NUM_DIST_4K, WINDOW_SIZE};
use crate::token::{dist_symbol, DIST_BASE};

const LL_SIZE: usize = 1 << CANNED_LITLEN_ROOT_BITS;
const D_SIZE: usize = 1 << CANNED_DIST_ROOT_BITS;

/// Input bytes an iteration may load: two refills of 8 bytes, the first
/// advancing at most 7.
const INPUT_ROOM: usize = 15;
/// Output room an iteration's literals need: three root entries of up to
/// two literals, each stored as two bytes, then one literal from a subtable.
const LITERAL_ROOM: usize = 7;
/// A match copy writes whole 8-byte words, two at a time for distances of 1
/// and 8 or more: less than this many bytes past the match's end.
const COPY_SLACK: usize = 16;

// A refill gives 56 bits. Three root literal entries and a lookup (≤ 13
// bits, root entries only) fit; after one or two, a refill comes before a
// match. A match entry (≤ 13 + 10 bits) leaves ≥ 33 bits, enough for the
// next lookup before the refill; any other match (≤ 15 + 5 + 15 + 13 = 48
// bits) leaves ≥ 8, and the refill after it precedes the next lookup.
const _: () = assert!(4 * CANNED_LITLEN_ROOT_BITS <= 56);
const _: () = assert!(2 * CANNED_LITLEN_ROOT_BITS + 10 <= 56);
const _: () = assert!(CANNED_DIST_ROOT_BITS <= 15 && CANNED_LITLEN_ROOT_BITS <= 15);

/// Set in the match entries of a [`FastRoot`] (outside the kind field, so
/// they are neither literals nor rare entries).
const MATCH_BIT: u32 = 1 << 15;

/// Base distance of each distance symbol a match entry holds (0..=23),
/// padded to a power of two so that the entry's top five bits index it
/// with no check.
const MATCH_DIST_BASE: [u16; 32] = {
    let mut t = [0u16; 32];
    let mut i = 0;
    while i < NUM_DIST_4K {
        t[i] = DIST_BASE[i];
        i += 1;
    }
    t
};

// Match entries hold distance symbols 0..=23: distances within the window.
const _: () = assert!(DIST_BASE[NUM_DIST_4K] as usize == WINDOW_SIZE + 1);

/// The fast loop's literal/length root table: the canned table's root
/// entries, except where a length code, its extra bits and a distance code
/// (of symbols 0..=23) fit the root bits together: there one match entry
/// gives the length and the distance symbol in one lookup. A match entry
/// has in bits 0..=7 the bits of the whole match (codes and extra bits,
/// at most 13 + 10), in bits 8..=11 where the distance's extra bits start,
/// [`MATCH_BIT`], in bits 16..=24 the length and in bits 27..=31 the
/// distance symbol. Subtable pointers are the canned table's:
/// they index its entries.
#[derive(Clone, Debug)]
pub(crate) struct FastRoot(Box<[u32; LL_SIZE]>);

impl FastRoot {
    /// The fast root table for a canned decoder's tables.
    pub(crate) fn new(litlen: &DecodeTable, dist: &DecodeTable) -> FastRoot {
        assert_eq!(litlen.root_bits(), CANNED_LITLEN_ROOT_BITS);
        assert_eq!(dist.root_bits(), CANNED_DIST_ROOT_BITS);
        let ll = &litlen.entries()[..LL_SIZE];
        let d = &dist.entries()[..D_SIZE];
        let mut root = Box::new([0u32; LL_SIZE]);
        for (i, (slot, &e)) in root.iter_mut().zip(ll).enumerate() {
            *slot = e;
            // A length whose code and extra bits leave index bits over.
            let lbits = entry_bits(e);
            if entry_kind(e) != Kind::Base as u32 || lbits >= CANNED_LITLEN_ROOT_BITS {
                continue;
            }
            // The index holds the length code and its extra bits, then
            // `avail` bits that start the distance code.
            let avail = CANNED_LITLEN_ROOT_BITS - lbits;
            let length = entry_value(e) + ((i as u32 & ((1 << lbits) - 1)) >> entry_len(e));
            // Bits above `avail` are zero in `rest`; a distance code of at
            // most `avail` bits has the same entry for all of them.
            let rest = i >> lbits;
            let de = d[rest & (D_SIZE - 1)];
            if entry_kind(de) != Kind::Base as u32 || entry_len(de) > avail {
                continue;
            }
            // A base distance beyond the window (symbols 24 to 29): the
            // reference loop reports it.
            let base = entry_value(de) as usize;
            if base > WINDOW_SIZE {
                continue;
            }
            let sym = dist_symbol(base as u16);
            debug_assert_eq!(usize::from(DIST_BASE[usize::from(sym)]), base);
            *slot = (lbits + entry_bits(de))
                | ((lbits + entry_len(de)) << 8)
                | MATCH_BIT
                | (length << 16)
                | (u32::from(sym) << 27);
        }
        FastRoot(root)
    }
}

/// Loads 8 input bytes at `ip` into the buffer above its valid bits (the
/// low 8 bits of `nbits`, see [`decode_loop`]) and advances past the whole
/// bytes that fit (as `BitReader::refill`).
///
/// # Safety
/// `ip + 8 <= data.len()`.
#[inline(always)]
unsafe fn refill(data: &[u8], ip: &mut usize, acc: &mut u64, nbits: &mut u32) {
    debug_assert!(*ip + 8 <= data.len());
    // SAFETY: the caller guarantees the 8 bytes at `ip` are inside `data`.
    let word = unsafe { data.as_ptr().add(*ip).cast::<u64>().read_unaligned() };
    *acc |= u64::from_le(word).wrapping_shl(*nbits);
    *ip += 7 - ((*nbits >> 3) & 7) as usize;
    *nbits |= 56;
}

/// Decodes from `r` into `sink` with canned tables (root bits
/// [`CANNED_LITLEN_ROOT_BITS`] and [`CANNED_DIST_ROOT_BITS`]) until the
/// common case ends; `r` and `sink` are left at a token boundary.
pub(crate) fn decode(
    r: &mut BitReader<'_>,
    root: &FastRoot,
    litlen: &DecodeTable,
    dist: &DecodeTable,
    sink: &mut ByteSink<'_>,
) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if std::is_x86_feature_detected!("bmi2") {
        // SAFETY: the CPU has BMI2, the one feature `decode_bmi2` adds.
        unsafe { decode_bmi2(r, root, litlen, dist, sink) };
        return;
    }
    decode_loop(r, root, litlen, dist, sink);
}

/// [`decode_loop`] compiled with BMI2 (shifts by a register and bit
/// extraction in one instruction each; measured: a tenth fewer instructions
/// and about 5% less time per page).
///
/// # Safety
/// The CPU supports BMI2.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "bmi2")]
unsafe fn decode_bmi2(
    r: &mut BitReader<'_>,
    root: &FastRoot,
    litlen: &DecodeTable,
    dist: &DecodeTable,
    sink: &mut ByteSink<'_>,
) {
    decode_loop(r, root, litlen, dist, sink);
}

/// The loop itself; see [`decode`].
#[inline(always)]
fn decode_loop(
    r: &mut BitReader<'_>,
    root: &FastRoot,
    litlen: &DecodeTable,
    dist: &DecodeTable,
    sink: &mut ByteSink<'_>,
) {
    assert_eq!(litlen.root_bits(), CANNED_LITLEN_ROOT_BITS);
    assert_eq!(dist.root_bits(), CANNED_DIST_ROOT_BITS);
    let data = r.data();
    // Only the low 8 bits of `nbits` count the valid bits of `acc` (≤ 63):
    // root entries are subtracted whole (their low 8 bits are the bits they
    // take, which no borrow crosses), so the shift and the subtraction take
    // the entry as loaded.
    let (mut ip, mut acc, mut nbits) = r.state();
    debug_assert!(nbits <= 63);
    let out_len = sink.out.len();
    let out = sink.out.as_mut_ptr();
    let mut op = sink.pos;
    let window = sink.window;
    let ll = litlen.entries();
    let ll_root: &[u32; LL_SIZE] = &root.0;
    let d = dist.entries();
    let d_root: &[u32; D_SIZE] = d[..D_SIZE].try_into().expect("canned root table");
    // Last input and output positions an iteration may start at, and the
    // last end of a match copy (with its overshoot).
    let (Some(ip_end), Some(op_end)) = (
        data.len().checked_sub(INPUT_ROOM),
        out_len.checked_sub(LITERAL_ROOM),
    ) else {
        return;
    };
    let copy_end = out_len.saturating_sub(COPY_SLACK);
    let room = |ip: usize, op: usize| ip <= ip_end && op <= op_end;

    // Match entries' distances (≤ 4096) skip the window check.
    if !room(ip, op) || window < WINDOW_SIZE {
        return;
    }
    // SAFETY: `room` holds: ip + 8 <= data.len().
    unsafe { refill(data, &mut ip, &mut acc, &mut nbits) };
    // The next token's entry, looked up ahead (its root bits are valid).
    let mut e = ll_root[acc as usize & (LL_SIZE - 1)];
    // Each iteration starts with `room(ip, op)` true (checked just before
    // it), at least 56 valid bits and `e` looked up.
    while room(ip, op) {
        // Where this token starts, to hand it to the reference loop.
        let (mut start_acc, mut start_nbits) = (acc, nbits);
        if e & LITERAL_BIT != 0 {
            // Up to three root literal entries (≤ 13 bits each), then the
            // refill: after three when a fourth follows (then on to the next
            // iteration), else before the match (no flag to test again). Each
            // entry is stored as two bytes, of which the second counts only for
            // a pair: at most 6 bytes, within LITERAL_ROOM.
            let literal = |e: u32, acc: &mut u64, nbits: &mut u32, op: &mut usize| {
                *acc = acc.wrapping_shr(e);
                *nbits = nbits.wrapping_sub(e);
                // SAFETY: called at most three times an iteration, so
                // op + 2 <= (op at the iteration's start) + 6 <= out_len
                // (`room`: LITERAL_ROOM).
                unsafe {
                    out.add(*op)
                        .cast::<u16>()
                        .write_unaligned((entry_value(e) as u16).to_le());
                }
                *op += 1 + ((e & PAIR_BIT) != 0) as usize;
                ll_root[*acc as usize & (LL_SIZE - 1)]
            };
            e = literal(e, &mut acc, &mut nbits, &mut op);
            if e & LITERAL_BIT != 0 {
                e = literal(e, &mut acc, &mut nbits, &mut op);
                if e & LITERAL_BIT != 0 {
                    e = literal(e, &mut acc, &mut nbits, &mut op);
                    if e & LITERAL_BIT != 0 {
                        // SAFETY: first refill of this iteration; `room` gave
                        // ip + 15 <= len.
                        unsafe { refill(data, &mut ip, &mut acc, &mut nbits) };
                        continue;
                    }
                }
            }
            // SAFETY: first refill of this iteration; `room` gave ip + 15 <= len.
            unsafe { refill(data, &mut ip, &mut acc, &mut nbits) };
            (start_acc, start_nbits) = (acc, nbits);
        }
        let (length, distance);
        if e & MATCH_BIT != 0 {
            // The whole match in one entry: one shift, and the distance's
            // extra bits from below it.
            let whole = acc;
            acc = acc.wrapping_shr(e);
            nbits = nbits.wrapping_sub(e);
            // The match's bits: those the shift took (by the low 6 bits of
            // `e`, its bit count: at most 23).
            let bits = whole ^ acc.wrapping_shl(e);
            // (Bits 12 and 13 of a match entry are clear.)
            distance =
                MATCH_DIST_BASE[(e >> 27) as usize] as usize + (bits >> ((e >> 8) & 63)) as usize;
            length = ((e >> 16) & 0x1ff) as usize;
            // The next entry, before the refill (off its latency): the match
            // took at most 23 of the ≥ 56 bits the last refill left.
            e = ll_root[acc as usize & (LL_SIZE - 1)];
            // (Its distance is within the window: at most 4096.)
            if (distance > op) | (op + length > copy_end) {
                (acc, nbits) = (start_acc, start_nbits);
                break;
            }
            // SAFETY: at most the second refill since `room` held.
            unsafe { refill(data, &mut ip, &mut acc, &mut nbits) };
        } else {
            if e & RARE_BITS != 0 {
                if entry_kind(e) != Kind::Subtable as u32 {
                    break; // end of block or an invalid code
                }
                let idx = (acc >> CANNED_LITLEN_ROOT_BITS) as usize & ((1 << entry_len(e)) - 1);
                e = ll[entry_value(e) as usize + idx];
                if e & LITERAL_BIT != 0 {
                    let b = entry_bits(e);
                    acc >>= b;
                    nbits = nbits.wrapping_sub(b);
                    // SAFETY: op <= (op at the iteration's start) + 6 < out_len.
                    unsafe { out.add(op).write(entry_value(e) as u8) };
                    op += 1;
                    e = ll_root[acc as usize & (LL_SIZE - 1)];
                    // SAFETY: at most the second refill since `room` held.
                    unsafe { refill(data, &mut ip, &mut acc, &mut nbits) };
                    continue;
                }
                if e & RARE_BITS != 0 {
                    break;
                }
            }
            // A length: base plus extra bits.
            let b = entry_bits(e);
            length = entry_value(e) as usize + ((acc & ((1u64 << b) - 1)) >> entry_len(e)) as usize;
            acc >>= b;
            nbits = nbits.wrapping_sub(b);

            let mut de = d_root[acc as usize & (D_SIZE - 1)];
            if de & RARE_BITS != 0 {
                if entry_kind(de) == Kind::Subtable as u32 {
                    let idx = (acc >> CANNED_DIST_ROOT_BITS) as usize & ((1 << entry_len(de)) - 1);
                    de = d[entry_value(de) as usize + idx];
                }
                if de & RARE_BITS != 0 {
                    (acc, nbits) = (start_acc, start_nbits);
                    break;
                }
            }
            let b = entry_bits(de);
            distance =
                entry_value(de) as usize + ((acc & ((1u64 << b) - 1)) >> entry_len(de)) as usize;
            acc >>= b;
            nbits = nbits.wrapping_sub(b);
            if (distance > op) | (distance > window) | (op + length > copy_end) {
                (acc, nbits) = (start_acc, start_nbits);
                break;
            }
            // SAFETY: at most the second refill since `room` held.
            unsafe { refill(data, &mut ip, &mut acc, &mut nbits) };
            e = ll_root[acc as usize & (LL_SIZE - 1)];
        }
        // SAFETY: checked just above: distance <= op, op + length + 16 <= out_len.
        unsafe { copy_match(out, op, length, distance) };
        op += length;
    }
    r.resume(ip, acc, nbits & 0xff);
    sink.pos = op;
}

/// Copies `length` (≥ 3) bytes from `distance` back to `op` in 8-byte
/// words, writing up to 15 bytes past the match.
///
/// # Safety
/// `out` is valid for reads and writes of `op + length + COPY_SLACK` bytes
/// and `1 <= distance <= op`.
#[inline(always)]
unsafe fn copy_match(out: *mut u8, op: usize, length: usize, distance: usize) {
    // SAFETY: a store starts before `end` = op + length and is at most 8
    // bytes long, or two of them 16 bytes: it ends before
    // op + length + COPY_SLACK. A load starts at or after op - distance >= 0
    // and ends before the end of the store it feeds.
    unsafe {
        let end = out.add(op + length);
        let mut dst = out.add(op);
        let mut src = out.add(op - distance);
        if distance >= 8 {
            // Each word's source lies at least 8 bytes back: complete before
            // it is read (the previous store has happened).
            loop {
                dst.cast::<u64>()
                    .write_unaligned(src.cast::<u64>().read_unaligned());
                dst = dst.add(8);
                src = src.add(8);
                dst.cast::<u64>()
                    .write_unaligned(src.cast::<u64>().read_unaligned());
                dst = dst.add(8);
                src = src.add(8);
                if dst >= end {
                    break;
                }
            }
        } else if distance == 1 {
            let splat = u64::from_ne_bytes([*src; 8]);
            loop {
                dst.cast::<u64>().write_unaligned(splat);
                dst.add(8).cast::<u64>().write_unaligned(splat);
                dst = dst.add(16);
                if dst >= end {
                    break;
                }
            }
        } else {
            // Period `distance` (2..=7): each word stored is right in its
            // first `distance` bytes, which the next word starts after.
            loop {
                dst.cast::<u64>()
                    .write_unaligned(src.cast::<u64>().read_unaligned());
                dst = dst.add(distance);
                src = src.add(distance);
                if dst >= end {
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::huffman::limited_code_lengths;
    use crate::{CannedDecoder, Encoder, Format, Level, Mode, Outcome, Table};
    use proptest::prelude::*;

    /// A valid table from symbol counts (0 = uncoded unless `coded`) with
    /// codes of at most `limit` bits.
    fn table(counts: &[u8], coded: bool, limit: u8) -> Table {
        let floor = u64::from(coded);
        let mut ll: Vec<u64> = counts[..286].iter().map(|&b| b as u64 + floor).collect();
        let mut d: Vec<u64> = counts[286..316].iter().map(|&b| b as u64 + floor).collect();
        ll[256] = ll[256].max(1);
        ll[0] = ll[0].max(1);
        d[0] = d[0].max(1);
        d[1] = d[1].max(1);
        Table::from_lengths(
            &limited_code_lengths(&ll, limit),
            &limited_code_lengths(&d, limit),
        )
        .expect("package-merge lengths are valid")
    }

    /// Both loops on `stream` with `limit` bytes of output: the same result,
    /// and the same bytes when it decodes.
    fn agree(d: &CannedDecoder, stream: &[u8], limit: usize) {
        let mut fast = vec![0xa5; limit];
        let mut reference = vec![0x5a; limit];
        let got = d.decompress(stream, &mut fast);
        assert_eq!(got, d.decompress_reference(stream, &mut reference));
        if let Ok(n) = got {
            assert_eq!(fast[..n], reference[..n]);
        }
    }

    fn page() -> impl Strategy<Value = Vec<u8>> {
        let max = if cfg!(miri) { 200 } else { 4096 };
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..max),
            prop::collection::vec(0u8..4, 0..max),
            (prop::collection::vec(any::<u8>(), 1..20), 1usize..400).prop_map(move |(p, n)| p
                .repeat(n)
                .into_iter()
                .take(max)
                .collect()),
        ]
    }

    /// Every short period (distances 1..=17) at many lengths, so every
    /// branch of the match copy runs, and pages cut at every few bytes, so
    /// the fast loop hands over to the reference loop at many points.
    #[test]
    fn short_distances_and_every_handover() {
        let mut rng = crate::rng::XorShift64::new(7);
        let mut page = Vec::new();
        let runs: &[usize] = if cfg!(miri) {
            &[5, 20]
        } else {
            &[4, 5, 9, 11, 17, 23, 40, 90]
        };
        for period in 1..=17 {
            for &run in runs {
                let unit: Vec<u8> = (0..period).map(|_| rng.next_u64() as u8).collect();
                page.extend(unit.iter().cycle().take(period + run));
                page.push(rng.next_u64() as u8);
            }
        }
        page.truncate(4096);
        let counts: Vec<u8> = (0..316).map(|i| (i * 7 % 13) as u8).collect();
        let t = table(&counts, true, 15);
        let d = CannedDecoder::new(&t);
        let step = if cfg!(miri) { 97 } else { 13 };
        for len in (0..=page.len()).step_by(step) {
            let mut e = Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(&t))
                .expect("every symbol coded")
                .with_limit(usize::MAX);
            let mut stream = Vec::new();
            e.compress(&page[..len], &mut stream).expect("a page");
            let mut out = vec![0; 4096];
            assert_eq!(d.decompress(&stream, &mut out), Ok(len));
            assert_eq!(out[..len], page[..len]);
            agree(&d, &stream, 4096);
            agree(&d, &stream, len.saturating_sub(1));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 3 } else { 256 }))]

        /// The fast loop and the reference loop agree on the encoder's
        /// streams, on the same streams mutated (bits flipped, bytes
        /// replaced, cut, extended), on arbitrary bytes, and at every output
        /// limit.
        #[test]
        fn fast_loop_equals_reference(
            counts in prop::collection::vec(any::<u8>(), 316),
            coded in any::<bool>(),
            limit_bits in 9u8..=15,
            page in page(),
            edits in prop::collection::vec((0u8..4, any::<u32>(), any::<u8>()), 0..4),
            noise in prop::collection::vec(any::<u8>(), 0..64),
            out_limit in prop_oneof![Just(4096usize), 1usize..4096, 4097usize..6000],
        ) {
            let t = table(&counts, coded, limit_bits);
            let d = CannedDecoder::new(&t);
            agree(&d, &noise, out_limit);
            let mut stream = Vec::new();
            if coded {
                let mut e = Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(&t))
                    .expect("every symbol coded")
                    .with_limit(usize::MAX);
                prop_assert!(matches!(e.compress(&page, &mut stream), Ok(Outcome::Compressed(_))));
                agree(&d, &stream, 4096);
            } else {
                stream = noise.repeat(8);
            }
            agree(&d, &stream, out_limit);
            for &(kind, at, byte) in &edits {
                if stream.is_empty() {
                    break;
                }
                let at = at as usize % stream.len();
                match kind {
                    0 => stream[at] ^= 1 << (byte % 8),
                    1 => stream[at] = byte,
                    2 => stream.truncate(at),
                    _ => stream.extend_from_slice(&noise),
                }
                agree(&d, &stream, out_limit);
            }
        }
    }
}
