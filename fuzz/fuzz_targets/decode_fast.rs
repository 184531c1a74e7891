//! Differential: the canned decoder's fast loop (`decompress`) against its
//! safe reference loop (`decompress_reference`), on arbitrary bytes and on
//! the encoder's own streams mutated (bits flipped, bytes replaced, cut,
//! extended), with output limits below, at and above a page. Both must give
//! the same result (bytes produced or the same error) and, when the stream
//! decodes, the same bytes.
//!
//! The table is one of 256 made once each from seeded counts (every code
//! length limit 9..=15, with and without uncoded symbols), chosen by the
//! first input byte: building a table per input costs milliseconds, and the
//! loops under test are in the decoding.
#![no_main]

use std::cell::RefCell;

use cannery_codec::rng::XorShift64;
use cannery_codec::{CannedDecoder, Encoder, Format, Level, Mode, Outcome};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

/// A decoder and, when every symbol is coded, an encoder of one table.
type Codec = (CannedDecoder, Option<Encoder>);

thread_local! {
    static CODECS: RefCell<Vec<Option<Codec>>> = RefCell::new((0..256).map(|_| None).collect());
}

/// Table `i`: seeded counts, skewed by a per-table shift; odd tables may
/// leave symbols uncoded; `common::table_from` picks the length limit.
fn codec(i: u8) -> Option<Codec> {
    let mut rng = XorShift64::new(0x9e37_79b9_7f4a_7c15 ^ u64::from(i) << 8 | 1);
    let shift = rng.next_u64() % 8;
    let mut bytes: Vec<u8> = (0..common::TABLE_BYTES)
        .map(|_| (rng.next_u64() >> (56 + shift)) as u8)
        .collect();
    bytes[0] = i;
    let table = common::table_from(&bytes, i & 1 == 1)?;
    let encoder = Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(&table))
        .ok()
        .map(|e| e.with_limit(usize::MAX));
    Some((CannedDecoder::new(&table), encoder))
}

/// Both loops on `stream` into `limit` bytes agree.
fn agree(d: &CannedDecoder, stream: &[u8], limit: usize) {
    let mut fast = vec![0xa5; limit];
    let mut reference = vec![0x5a; limit];
    let got = d.decompress(stream, &mut fast);
    assert_eq!(got, d.decompress_reference(stream, &mut reference));
    if let Ok(n) = got {
        assert_eq!(fast[..n], reference[..n]);
    }
}

fuzz_target!(|data: &[u8]| {
    let [which, ctl, lim, rest @ ..] = data else {
        return;
    };
    CODECS.with_borrow_mut(|codecs| {
        let slot = &mut codecs[*which as usize];
        if slot.is_none() {
            *slot = codec(*which);
        }
        let Some((d, encoder)) = slot else {
            return;
        };
        let limit = match ctl & 3 {
            0 | 1 => 4096,
            2 => 1 + (*lim as usize * 16) % 4096,
            _ => 4097 + *lim as usize * 8,
        };
        agree(d, rest, limit);

        // Up to 15 four-byte edits, then the page.
        let (edits, page) = rest.split_at(rest.len().min(4 * (ctl >> 4) as usize));
        let page = &page[..page.len().min(4096)];
        let Some(e) = encoder else {
            return; // a table with uncoded symbols
        };
        let mut stream = Vec::new();
        let Ok(Outcome::Compressed(_)) = e.compress(page, &mut stream) else {
            return;
        };
        agree(d, &stream, 4096);
        agree(d, &stream, limit);
        for edit in edits.chunks_exact(4) {
            if stream.is_empty() {
                break;
            }
            let at = u16::from_le_bytes([edit[1], edit[2]]) as usize % stream.len();
            match edit[0] % 4 {
                0 => stream[at] ^= 1 << (edit[3] % 8),
                1 => stream[at] = edit[3],
                2 => stream.truncate(at),
                _ => stream.extend_from_slice(&edits[..edits.len().min(edit[3] as usize % 16)]),
            }
            agree(d, &stream, limit);
        }
    });
});
