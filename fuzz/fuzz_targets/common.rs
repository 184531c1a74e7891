//! Shared by the fuzz targets: turning fuzzer bytes into a valid table, a
//! cache of the tables (with their decoder and encoders) already built, and
//! a scratch directory in a tmpfs.
//!
//! Building a table, its decode tables and an encoder costs far more than
//! decoding one page: under callgrind, `Table::from_lengths` (its
//! byte-aligned header search), package-merge and `CannedDecoder::new` were
//! 99 % of `decode_canned`'s instructions, even with a cache, because the
//! fuzzer's mutations keep changing the 316 table bytes. So [`with_table`]
//! lets the first input byte choose: one of [`FIXED_TABLES`] tables built
//! once (the kernel's 2024 table and seeded counts of every length limit),
//! or, from [`ARBITRARY`] up, an arbitrary table from the next 316 bytes as
//! [`table_from`] builds it, cached by those bytes ([`with_codec`]). Every
//! table the targets could check before is still reachable.
#![allow(dead_code)] // each target uses part of this module

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::OnceLock;

use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::rng::XorShift64;
use cannery_codec::table::rules::qpl_loadable_variant;
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
    /// `CannedDecoder::new(&table)`, made on first use ([`Codec::decoder`]):
    /// `kernel_header` and `qpl_counts` never decode, and building it was a
    /// quarter of `qpl_counts`'s time.
    decoder: Option<CannedDecoder>,
    /// `Encoder::new(Canned, Iaa, level, table)` by `Level::ALL` index;
    /// `Some(None)`: the table cannot encode (an uncoded symbol).
    encoders: [Option<Option<Encoder>>; 3],
}

impl Codec {
    fn new(table: Table) -> Codec {
        Codec {
            decoder: None,
            table,
            encoders: [None, None, None],
        }
    }

    /// The table's canned decoder.
    pub fn decoder(&mut self) -> &CannedDecoder {
        self.table_and_decoder().1
    }

    /// The table and its canned decoder, borrowed together.
    pub fn table_and_decoder(&mut self) -> (&Table, &CannedDecoder) {
        let table = &self.table;
        (
            table,
            self.decoder
                .get_or_insert_with(|| CannedDecoder::new(table)),
        )
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

/// Entries a cache keeps; past this, the oldest goes. A grown corpus holds
/// 500 to 700 arbitrary tables, and a cache that forgets them rebuilds
/// one on most first runs of such an input: `decode_canned` from its
/// grown corpus ran 6,456 inputs per CPU-second with 256 entries, 12,237
/// with 1024.
const CACHE_CAP: usize = 1024;
/// Arbitrary tables' codecs that keep their encoders (the last to build
/// them): with encoders in all 1024, `differential_miniz` passed
/// `-rss_limit_mb=512`; with 256, 476 MB, with 64, 430 MB and as many runs.
const ENCODERS_KEPT: usize = 64;

type Shared = Rc<RefCell<Codec>>;
/// Table bytes with the uncoded flag; code lengths (literal/length, distance).
type BytesKey = (Vec<u8>, bool);
type LengthsKey = (Vec<u8>, Vec<u8>);

/// A map that forgets its oldest entry beyond [`CACHE_CAP`].
struct Cache<K, V> {
    map: HashMap<K, V>,
    order: VecDeque<K>,
}

impl<K: std::hash::Hash + Eq + Clone, V: Clone> Cache<K, V> {
    fn new() -> Self {
        Cache {
            map: HashMap::new(),
            order: VecDeque::new(),
        }
    }

    fn get(&self, k: &K) -> Option<V> {
        self.map.get(k).cloned()
    }

    fn insert(&mut self, k: K, v: V) {
        if self.order.len() >= CACHE_CAP {
            let old = self.order.pop_front().expect("a full cache has an oldest");
            self.map.remove(&old);
        }
        self.order.push_back(k.clone());
        self.map.insert(k, v);
    }
}

thread_local! {
    /// By the 316 table bytes and the uncoded flag (`None`: no table).
    static BY_BYTES: RefCell<Cache<BytesKey, Option<Shared>>> = RefCell::new(Cache::new());
    /// The fixed set, by `2 * index + allow_uncoded` (`None`: not built yet).
    static FIXED: RefCell<Vec<Option<Shared>>> = RefCell::new(vec![None; 2 * FIXED_TABLES]);
    /// By code lengths, so counts giving the same lengths share one codec.
    static BY_LENGTHS: RefCell<Cache<LengthsKey, Shared>> = RefCell::new(Cache::new());
    /// The arbitrary tables' codecs that hold encoders, in the order they
    /// built them (at most [`ENCODERS_KEPT`]: past that, the first loses
    /// them).
    static WITH_ENCODERS: RefCell<VecDeque<Shared>> = const { RefCell::new(VecDeque::new()) };
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
    let cached = BY_BYTES.with_borrow(|m| m.get(&key));
    let codec = match cached {
        Some(c) => c,
        None => {
            let lengths = lengths_from(bytes, allow_uncoded);
            let c = BY_LENGTHS.with_borrow_mut(|m| {
                if let Some(c) = m.get(&lengths) {
                    return Some(c);
                }
                let table = Table::from_lengths(&lengths.0, &lengths.1).ok()?;
                let c = Rc::new(RefCell::new(Codec::new(table)));
                m.insert(lengths, c.clone());
                Some(c)
            });
            BY_BYTES.with_borrow_mut(|m| m.insert(key, c.clone()));
            c
        }
    }?;
    let r = f(&mut codec.borrow_mut());
    if codec
        .borrow()
        .encoders
        .iter()
        .any(|e| matches!(e, Some(Some(_))))
    {
        WITH_ENCODERS.with_borrow_mut(|q| {
            if !q.iter().any(|c| Rc::ptr_eq(c, &codec)) {
                q.push_back(codec);
                if q.len() > ENCODERS_KEPT {
                    let oldest = q.pop_front().expect("more than kept");
                    oldest.borrow_mut().encoders = [None, None, None];
                }
            }
        });
    }
    Some(r)
}

/// A fixed table with every symbol coded and lengths 4..=15 (for targets
/// that need one complete table, and the seeds written for them).
pub fn sample_table() -> Table {
    let counts: Vec<u8> = (0..TABLE_BYTES as u32)
        .map(|s| (s * 7919 % 251) as u8)
        .collect();
    table_from(&counts, false).expect("complete counts give a table")
}

/// Tables in the fixed set.
pub const FIXED_TABLES: usize = 64;
/// A first byte from this up selects an arbitrary table from the next 316
/// bytes; below it, fixed table `(byte / 2) % FIXED_TABLES`, its variant
/// with uncoded symbols when the byte is odd (where the target allows them).
pub const ARBITRARY: u8 = 0xc0;

/// Fixed table `i` (uncoded symbols allowed or not): 0 is the kernel's 2024
/// table (with `allow_uncoded`; else its complete variant, every symbol
/// coded), the others come from seeded counts, skewed per table, with each
/// length limit 9..=15 (`table_from`).
fn fixed_table(i: usize, allow_uncoded: bool) -> Table {
    if i == 0 {
        let k = Table::kernel_2024();
        return if allow_uncoded {
            k
        } else {
            qpl_loadable_variant(&k)
        };
    }
    let mut rng = XorShift64::new(0x2545_f491_4f6c_dd1d ^ (i as u64) << 8 | 1);
    let shift = rng.next_u64() % 8;
    let mut bytes: Vec<u8> = (0..TABLE_BYTES)
        .map(|_| (rng.next_u64() >> (56 + shift)) as u8)
        .collect();
    bytes[0] = i as u8;
    table_from(&bytes, allow_uncoded).expect("table_from gives a table for any 316 bytes")
}

/// What the first byte of a target's input selects.
enum Selection<'a> {
    /// Fixed table `index` (of [`FIXED_TABLES`]).
    Fixed(usize),
    /// The arbitrary table of these 316 bytes ([`table_from`]).
    Arbitrary(&'a [u8]),
}

/// The table the first byte of `data` selects (fixed, or from
/// [`ARBITRARY`] up arbitrary), whether it may leave symbols uncoded
/// (odd first bytes, with `allow_uncoded`), and the bytes after the
/// table's. `None` when `data` is too short for its table.
fn select(data: &[u8], allow_uncoded: bool) -> Option<(Selection<'_>, bool, &[u8])> {
    let (&sel, rest) = data.split_first()?;
    let uncoded = allow_uncoded && sel & 1 == 1;
    if sel >= ARBITRARY {
        if rest.len() < TABLE_BYTES {
            return None;
        }
        let (table, after) = rest.split_at(TABLE_BYTES);
        return Some((Selection::Arbitrary(table), uncoded, after));
    }
    Some((
        Selection::Fixed((sel >> 1) as usize % FIXED_TABLES),
        uncoded,
        rest,
    ))
}

/// Runs `f` on the codec the first byte of `data` selects ([`select`])
/// and the bytes after the table's; the kernel's 2024 table is first
/// byte 1 where uncoded symbols are allowed. `None` when `data` is too
/// short for its table.
pub fn with_table<R>(
    data: &[u8],
    allow_uncoded: bool,
    f: impl FnOnce(&mut Codec, &[u8]) -> R,
) -> Option<R> {
    let (selection, uncoded, rest) = select(data, allow_uncoded)?;
    let i = match selection {
        Selection::Arbitrary(bytes) => return with_codec(bytes, uncoded, |c| f(c, rest)),
        Selection::Fixed(i) => i,
    };
    let codec = FIXED.with_borrow_mut(|v| {
        v[2 * i + usize::from(uncoded)]
            .get_or_insert_with(|| Rc::new(RefCell::new(Codec::new(fixed_table(i, uncoded)))))
            .clone()
    });
    let mut c = codec.borrow_mut();
    Some(f(&mut c, rest))
}

/// Keys a target has met, up to a cap; past it, the set starts over
/// (what it has already checked, where a check gives the same answer
/// every time). A key is kept as a 64-bit fingerprint, not a copy: a
/// copy outlives the run that made it, and libFuzzer runs an input again
/// when its run allocated more than it freed (its leak check, on by
/// default), so each new key cost a second run that returned at once
/// and counted in exec/s like any other (FUZZING.md, eighth pass). A new
/// key shares the fingerprint of one in the set with a chance of at most
/// 2^-48, and is then not checked.
pub struct Seen {
    set: HashSet<u64>,
    cap: usize,
}

impl Seen {
    pub fn new(cap: usize) -> Self {
        Seen {
            set: HashSet::with_capacity(cap),
            cap,
        }
    }

    /// True the first time `k` is met since the set last started over.
    pub fn first_time<K: std::hash::Hash + ?Sized>(&mut self, k: &K) -> bool {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        if self.set.len() >= self.cap {
            self.set.clear();
        }
        // SipHash with fixed keys: the same fingerprint in every process.
        let fingerprint = BuildHasherDefault::<DefaultHasher>::default().hash_one(k);
        self.set.insert(fingerprint)
    }
}

/// Tables [`once_per_table`] remembers; past this, it starts over.
const ONCE_CAP: usize = 1 << 16;

/// A table as [`select`] selects it: fixed `index`, or the arbitrary
/// table of these bytes.
#[derive(Hash)]
enum TableKey<'a> {
    Fixed(usize),
    Arbitrary(&'a [u8]),
}

thread_local! {
    /// The tables [`once_per_table`] has run on, with the uncoded flag and
    /// the variant.
    static ONCE: RefCell<Seen> = RefCell::new(Seen::new(ONCE_CAP));
}

/// Runs `f` on the table the first byte of `data` selects (as
/// [`with_table`]) the first time that table is met with this `variant`
/// (a choice the target takes from the input, such as which API form
/// `kernel_header` writes), for checks of the table alone, which give the
/// same answer every time (`kernel_header`'s and `qpl_counts`'
/// write-then-read). It remembers up to [`ONCE_CAP`]
/// tables by their selector, not in the codec cache: a grown
/// `kernel_header` corpus held 4,155 inputs with arbitrary tables, and
/// with the cache's 1024 it rebuilt and checked again most of the
/// tables it met (5,042 runs per CPU-second over 60 s from that corpus,
/// 11,816 without the check at all).
pub fn once_per_table(data: &[u8], allow_uncoded: bool, variant: u8, f: impl FnOnce(&Table)) {
    let Some((selection, uncoded, _)) = select(data, allow_uncoded) else {
        return;
    };
    let key = match selection {
        Selection::Fixed(i) => TableKey::Fixed(i),
        Selection::Arbitrary(bytes) => TableKey::Arbitrary(bytes),
    };
    if ONCE.with_borrow_mut(|seen| seen.first_time(&(key, uncoded, variant))) {
        with_table(data, allow_uncoded, |c, _| f(&c.table));
    }
}

/// One mutation in this many of an input with an arbitrary table may
/// change the table's bytes; the others change only what follows them.
pub const TABLE_MUTATE_EVERY: u32 = 32;

/// The mutator of the targets that take their table from [`with_table`]:
/// libFuzzer's own, but an input with an arbitrary table keeps its 316
/// table bytes on all but one mutation in [`TABLE_MUTATE_EVERY`] (by the
/// mutation's seed). Most of such an input's bytes are its table, so
/// with libFuzzer's mutations alone a fifth of `decode_canned`'s runs
/// built a new table (14,567 in 77,337 runs), and building one costs as
/// much as a dozen decodes. `kernel_header` and `qpl_counts` use it too:
/// their check of an arbitrary table (written, then read back) ran for
/// almost every such input, and took most of their time (`qpl_counts`:
/// 2,599 runs per CPU-second in 30 s from the seeds with libFuzzer's
/// mutator, 45,966 with this one; `kernel_header`: 1,265 and 5,780).
/// `canned_roundtrip` keeps libFuzzer's mutator:
/// its time is the encoder's, and it reached fewer edges with this one.
pub fn mutate(data: &mut [u8], size: usize, max_size: usize, seed: u32) -> usize {
    let head = 1 + TABLE_BYTES;
    if size > head
        && max_size > head
        && data[0] >= ARBITRARY
        && !seed.is_multiple_of(TABLE_MUTATE_EVERY)
    {
        head + libfuzzer_sys::fuzzer_mutate(&mut data[head..], size - head, max_size - head)
    } else {
        libfuzzer_sys::fuzzer_mutate(data, size, max_size)
    }
}

/// FNV-1a of `data`: picks the deterministic subset of inputs that a
/// costly check runs on (one in N by this hash, so the fuzzer's mutations
/// of such an input are again one in N).
pub fn hash(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// This process's scratch directory, in a tmpfs (`/dev/shm`, else the
/// temporary directory), for targets that read files: `cannery-fuzz-PID`,
/// removed when the process exits (libFuzzer ends a run with `exit`, so an
/// `atexit` hook runs). A crash, a timeout or Ctrl-C ends it with `_exit`,
/// which runs no hook: so the first call also removes the scratch
/// directories of processes that no longer exist.
pub fn scratch_dir() -> &'static Path {
    DIR.get_or_init(|| {
        let shm = PathBuf::from("/dev/shm");
        let base = if shm.is_dir() {
            shm
        } else {
            std::env::temp_dir()
        };
        remove_orphans(&base);
        let d = base.join(format!("{SCRATCH_PREFIX}{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("scratch directory");
        // SAFETY: `remove_scratch` is an `extern "C" fn()` that does not
        // unwind (it ignores errors) and only reads `DIR`, which is set
        // before it is registered and never changes after.
        let r = unsafe { libc::atexit(remove_scratch) };
        assert_eq!(r, 0, "atexit registers the scratch clean-up");
        d
    })
}

static DIR: OnceLock<PathBuf> = OnceLock::new();
const SCRATCH_PREFIX: &str = "cannery-fuzz-";

extern "C" fn remove_scratch() {
    if let Some(d) = DIR.get() {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Removes `base/cannery-fuzz-PID` of every PID with no `/proc/PID`
/// (left by a fuzzer that crashed or was interrupted); nothing without
/// `/proc`, where liveness cannot be told.
fn remove_orphans(base: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let pid = name.to_str().and_then(|n| n.strip_prefix(SCRATCH_PREFIX));
        if let Some(pid) = pid.filter(|p| p.parse::<u32>().is_ok()) {
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
}
