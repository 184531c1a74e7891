//! Shared by the fuzz targets: turning fuzzer bytes into a valid table, and
//! a cache of the tables (with their decoder and encoders) already built.
//!
//! Building a table, its decode tables and an encoder costs far more than
//! decoding one page (about 80 % of an execution in `decode_canned`,
//! `differential_miniz` and `canned_roundtrip` before the cache), and the
//! fuzzer keeps mutating the stream bytes of the same corpus entries, whose
//! table bytes stay the same. [`with_codec`] gives exactly the table
//! [`table_from`] builds from the same bytes, built once per distinct table
//! bytes (and once per distinct length set), so each target's property is
//! unchanged.
#![allow(dead_code)] // each target uses part of this module

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::{CannedDecoder, Encoder, Format, Level, Mode, Table};

/// Bytes a table consumes from the input.
pub const TABLE_BYTES: usize = 316;

/// Code lengths from 316 bytes: each byte is a symbol count (0 allowed
/// when `allow_uncoded`, else at least 1), lengths from package-merge with
/// the byte-chosen limit 9..=15.
fn lengths_from(bytes: &[u8], allow_uncoded: bool) -> (Vec<u8>, Vec<u8>) {
    let floor = u64::from(!allow_uncoded);
    let mut ll: Vec<u64> = bytes[..286].iter().map(|&b| b as u64 + floor).collect();
    let mut d: Vec<u64> = bytes[286..316].iter().map(|&b| b as u64 + floor).collect();
    // A table needs an end-of-block code; a code needs two symbols.
    ll[256] = ll[256].max(1);
    if ll.iter().filter(|&&c| c > 0).count() < 2 {
        ll[0] = ll[0].max(1);
    }
    if d.iter().filter(|&&c| c > 0).count() < 2 {
        d[0] = d[0].max(1);
        d[1] = d[1].max(1);
    }
    let limit = 9 + bytes[0] % 7; // 9..=15
    (
        limited_code_lengths(&ll, limit),
        limited_code_lengths(&d, limit),
    )
}

/// A valid table from the first 316 bytes (see [`lengths_from`]): every
/// table this returns passes `Table::from_lengths`; `None` when `bytes` is
/// shorter.
pub fn table_from(bytes: &[u8], allow_uncoded: bool) -> Option<Table> {
    if bytes.len() < TABLE_BYTES {
        return None;
    }
    let (ll, d) = lengths_from(bytes, allow_uncoded);
    Table::from_lengths(&ll, &d).ok()
}

/// A table with its decoder and, made on first use, its encoder per level.
pub struct Codec {
    /// The table.
    pub table: Table,
    /// `CannedDecoder::new(&table)`.
    pub decoder: CannedDecoder,
    /// `Encoder::new(Canned, Iaa, level, table)` by `Level::ALL` index;
    /// `Some(None)`: the table cannot encode (an uncoded symbol).
    encoders: [Option<Option<Encoder>>; 3],
}

impl Codec {
    fn new(table: Table) -> Codec {
        Codec {
            decoder: CannedDecoder::new(&table),
            table,
            encoders: [None, None, None],
        }
    }

    /// The canned IAA encoder of this table at `level`, or `None` when the
    /// table leaves a symbol uncoded. Encoders keep no state from one page
    /// to the next (each `compress` starts over), so reuse is safe.
    pub fn encoder(&mut self, level: Level) -> Option<&mut Encoder> {
        let i = Level::ALL
            .iter()
            .position(|&l| l == level)
            .expect("a level");
        let table = &self.table;
        self.encoders[i]
            .get_or_insert_with(|| Encoder::new(Mode::Canned, Format::Iaa, level, Some(table)).ok())
            .as_mut()
    }
}

/// Entries kept before a cache starts over (a decoder and three encoders
/// are about 0.5 MB, so the caches stay far below `-rss_limit_mb=512`).
const CACHE_CAP: usize = 256;

type Shared = Rc<RefCell<Codec>>;

thread_local! {
    /// By the 316 table bytes and the uncoded flag (`None`: no table).
    static BY_BYTES: RefCell<HashMap<(Vec<u8>, bool), Option<Shared>>> = RefCell::new(HashMap::new());
    /// By code lengths, so counts giving the same lengths share one codec.
    static BY_LENGTHS: RefCell<HashMap<(Vec<u8>, Vec<u8>), Shared>> = RefCell::new(HashMap::new());
}

/// Runs `f` on the codec of [`table_from`]`(bytes, allow_uncoded)`, built
/// once per distinct table bytes; `None` when that gives no table.
pub fn with_codec<R>(
    bytes: &[u8],
    allow_uncoded: bool,
    f: impl FnOnce(&mut Codec) -> R,
) -> Option<R> {
    if bytes.len() < TABLE_BYTES {
        return None;
    }
    let key = (bytes[..TABLE_BYTES].to_vec(), allow_uncoded);
    let cached = BY_BYTES.with_borrow(|m| m.get(&key).cloned());
    let codec = match cached {
        Some(c) => c,
        None => {
            let lengths = lengths_from(bytes, allow_uncoded);
            let c = BY_LENGTHS.with_borrow_mut(|m| {
                if let Some(c) = m.get(&lengths) {
                    return Some(c.clone());
                }
                let table = Table::from_lengths(&lengths.0, &lengths.1).ok()?;
                let c = Rc::new(RefCell::new(Codec::new(table)));
                if m.len() >= CACHE_CAP {
                    m.clear();
                }
                m.insert(lengths, c.clone());
                Some(c)
            });
            BY_BYTES.with_borrow_mut(|m| {
                if m.len() >= CACHE_CAP {
                    m.clear();
                }
                m.insert(key, c.clone());
            });
            c
        }
    }?;
    let mut c = codec.borrow_mut();
    Some(f(&mut c))
}

/// A fixed table with every symbol coded and lengths 4..=15 (for targets
/// that need one complete table, and the seeds written for them).
pub fn sample_table() -> Table {
    let counts: Vec<u8> = (0..TABLE_BYTES as u32)
        .map(|s| (s * 7919 % 251) as u8)
        .collect();
    table_from(&counts, false).expect("complete counts give a table")
}
