//! Differential: the canned decoder's fast loop (`decompress`) against its
//! safe reference loop (`decompress_reference`), on arbitrary bytes and on
//! the encoder's own streams mutated (bits flipped, bytes replaced, cut,
//! extended), with output limits below, at and above a page. Both must give
//! the same result (bytes produced or the same error) and, when the stream
//! decodes, the same bytes.
#![no_main]

use cannery_codec::{CannedDecoder, Encoder, Format, Level, Mode, Outcome};
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

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
    let Some(table) = common::table_from(data, data.first().is_some_and(|b| b & 1 == 1)) else {
        return;
    };
    let Some((&ctl, rest)) = data[common::TABLE_BYTES..].split_first() else {
        return;
    };
    let d = CannedDecoder::new(&table);
    let limit = match ctl & 3 {
        0 | 1 => 4096,
        2 => 1 + (data[1] as usize * 16) % 4096,
        _ => 4097 + data[2] as usize * 8,
    };
    agree(&d, rest, limit);

    // Up to 15 four-byte edits, then the page.
    let (edits, page) = rest.split_at(rest.len().min(4 * (ctl >> 4) as usize));
    let page = &page[..page.len().min(4096)];
    // Mostly the fast level (the streams zswap decodes most), some default.
    let level = [Level::Fast, Level::Fast, Level::Fast, Level::Default][(ctl >> 2) as usize & 3];
    let Ok(e) = Encoder::new(Mode::Canned, Format::Iaa, level, Some(&table)) else {
        return; // a table with uncoded symbols
    };
    let mut stream = Vec::new();
    let Ok(Outcome::Compressed(_)) = e.with_limit(usize::MAX).compress(page, &mut stream) else {
        return;
    };
    agree(&d, &stream, 4096);
    agree(&d, &stream, limit);
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
        agree(&d, &stream, limit);
    }
});
