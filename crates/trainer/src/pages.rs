//! Where pages come from, and how they are divided: the [`PageSource`] trait
//! (a stream of 4 KiB pages that can be replayed, one pass per call), the
//! deterministic train/test split by page content hash ([`Split`]), the
//! same-filled page rule (re-exported from the capture crate, its owner),
//! bounded deterministic samples ([`SmallestHashes`])
//! and the chunked pass every later stage runs over a source.
//!
//! This module opens no files: [`crate::corpus`] adapts corpora (snapshot
//! and raw `.pages` files) to [`PageSource`]; tests use in-memory pages.
//! Memory use of a pass is one chunk of pages, whatever the corpus size.

use std::collections::BTreeMap;

use cannery_codec::constants::PAGE_SIZE;

use crate::error::TrainError;

pub use crate::error::SourceError;

/// A stream of pages, each exactly 4096 bytes.
pub type PageStream<'a> = Box<dyn Iterator<Item = Result<Vec<u8>, SourceError>> + Send + 'a>;

/// Pages that can be streamed from the start any number of times.
pub trait PageSource: Sync {
    /// Streams every page from the start (one call per pass).
    fn stream(&self) -> Result<PageStream<'_>, SourceError>;

    /// Zero and same-filled pages the source knows of but does not yield
    /// (snapshots count them at capture instead of storing them).
    fn uncounted_same_filled(&self) -> u64 {
        0
    }
}

impl<T: AsRef<[u8]> + Sync> PageSource for [T] {
    fn stream(&self) -> Result<PageStream<'_>, SourceError> {
        Ok(Box::new(self.iter().map(|p| Ok(p.as_ref().to_vec()))))
    }
}

impl<T: AsRef<[u8]> + Sync> PageSource for Vec<T> {
    fn stream(&self) -> Result<PageStream<'_>, SourceError> {
        self[..].stream()
    }
}

/// Pages handled per chunk of a pass: 1 MiB of pages in memory at a time.
pub const CHUNK_PAGES: usize = 256;

/// `Some(word)` if the page is one 64-bit word repeated (zswap's
/// same-filled test; a zero page is `Some(0)`): zswap stores such pages as
/// that value and never compresses them. The capture crate owns the one
/// definition; re-exported here for the trainer's passes.
pub use cannery_capture::same_filled;

/// A stable 64-bit hash of a page's content and a seed.
///
/// Frozen: changing it changes every split, so it is specified here
/// exactly: start from `seed ^ 0x9E37_79B9_7F4A_7C15`; for each 8-byte
/// little-endian word `w`, `h = (h ^ w) * 0xBF58_476D_1CE4_E5B9`,
/// `h ^= h >> 31`; (a final partial word is zero-padded); then the
/// SplitMix64 finalizer.
pub fn page_hash(seed: u64, page: &[u8]) -> u64 {
    let mut h = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut chunks = page.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 31;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut b = [0u8; 8];
        b[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(b)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 31;
    }
    splitmix_finalize(h ^ page.len() as u64)
}

/// The SplitMix64 finalizer (a bijection that mixes all bits).
pub fn splitmix_finalize(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Which part of the data a page belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Part {
    /// Used to build tables.
    Train,
    /// Training pages held back to decide when `best` refinement stops
    /// (one in eight training pages; only the refinement treats them apart).
    Validation,
    /// Held out: only ever evaluated.
    Test,
}

impl Part {
    /// A part of pages to evaluate by name: `all` (none: every page),
    /// `test` (the held-out pages, what `train` reports on) or `train`.
    pub fn selection(name: &str) -> Result<Option<Part>, String> {
        match name {
            "all" => Ok(None),
            "test" => Ok(Some(Part::Test)),
            "train" => Ok(Some(Part::Train)),
            _ => Err(format!(
                "unknown part {name:?} (expected all, test or train)"
            )),
        }
    }
}

/// A deterministic split by page content hash: the same page always lands
/// in the same part, whatever the order or the machine, so duplicates never
/// straddle train and test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Split {
    /// Fraction of pages held out for testing, 0.0..1.0.
    pub test_fraction: f64,
    /// Seed of the hash.
    pub seed: u64,
}

impl Default for Split {
    fn default() -> Self {
        Split {
            test_fraction: 0.2,
            seed: 0,
        }
    }
}

impl Split {
    /// A split, checking the fraction.
    pub fn new(test_fraction: f64, seed: u64) -> Result<Split, TrainError> {
        if !(0.0..1.0).contains(&test_fraction) || test_fraction.is_nan() {
            return Err(TrainError::BadTestFraction(test_fraction));
        }
        Ok(Split {
            test_fraction,
            seed,
        })
    }

    /// The split whose test part is a uniform sample of about `want` of
    /// this split's `have` test pages (itself when `want >= have`): the
    /// pages whose hash falls lowest within the test range, so the sample
    /// is deterministic and contained in this split's test part.
    pub fn test_sample(&self, have: u64, want: u64) -> Split {
        if want >= have || have == 0 {
            return *self;
        }
        let share = want as f64 / have as f64;
        // At least one hash value stays in the test range.
        let floor = 1.0 / (1u64 << 24) as f64;
        Split {
            test_fraction: (self.test_fraction * share).max(floor),
            seed: self.seed,
        }
    }

    /// The part of a page with this hash ([`page_hash`] with the split's seed).
    pub fn part_of_hash(&self, h: u64) -> Part {
        // The low 24 bits decide test vs train, bits 24..27 validation.
        let threshold = (self.test_fraction * (1u64 << 24) as f64).round() as u64;
        if (h & 0xFF_FFFF) < threshold {
            Part::Test
        } else if (h >> 24) & 7 == 0 {
            Part::Validation
        } else {
            Part::Train
        }
    }

    /// The part `page` belongs to.
    pub fn part(&self, page: &[u8]) -> Part {
        self.part_of_hash(page_hash(self.seed, page))
    }
}

/// A bounded, order-independent sample: keeps the `cap` items with the
/// smallest hashes (ties broken by item order of the key), so the same set
/// of pages always yields the same sample, whatever order they arrive in.
#[derive(Clone, Debug)]
pub struct SmallestHashes<T> {
    cap: usize,
    items: BTreeMap<u64, T>,
}

impl<T> SmallestHashes<T> {
    /// An empty sample of at most `cap` items.
    pub fn new(cap: usize) -> Self {
        SmallestHashes {
            cap,
            items: BTreeMap::new(),
        }
    }

    /// Offers an item with hash `h`; equal hashes (identical pages) are kept once.
    pub fn offer(&mut self, h: u64, make: impl FnOnce() -> T) {
        if self.cap == 0 || self.items.contains_key(&h) {
            return;
        }
        if self.items.len() < self.cap {
            self.items.insert(h, make());
        } else if let Some((&max, _)) = self.items.last_key_value() {
            if h < max {
                self.items.pop_last();
                self.items.insert(h, make());
            }
        }
    }

    /// Merges another sample into this one.
    pub fn merge(&mut self, other: SmallestHashes<T>) {
        for (h, v) in other.items {
            self.offer(h, || v);
        }
    }

    /// The kept items, by increasing hash.
    pub fn into_items(self) -> Vec<T> {
        self.items.into_values().collect()
    }

    /// Number of kept items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True if nothing was kept.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// Streams `source` in chunks of [`CHUNK_PAGES`] pages and calls `f` on
/// each chunk (in order). Checks every page's size. Returns the number of
/// pages streamed.
///
/// Reading (file I/O, snapshot decompression) runs on its own thread, one
/// chunk ahead of `f`, so it overlaps the parsing; at most three chunks
/// are in memory at once.
pub fn for_each_chunk<S: PageSource + ?Sized>(
    source: &S,
    mut f: impl FnMut(&[Vec<u8>]) -> Result<(), TrainError>,
) -> Result<u64, TrainError> {
    let stream = source.stream().map_err(TrainError::Source)?;
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Vec<Vec<u8>>, TrainError>>(1);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut chunk: Vec<Vec<u8>> = Vec::with_capacity(CHUNK_PAGES);
            let mut index = 0u64;
            for page in stream {
                let item = match page {
                    Err(e) => Err(TrainError::Source(e)),
                    Ok(p) if p.len() != PAGE_SIZE => Err(TrainError::PageSize {
                        index,
                        len: p.len(),
                    }),
                    Ok(p) => Ok(p),
                };
                match item {
                    Ok(p) => {
                        index += 1;
                        chunk.push(p);
                        if chunk.len() == CHUNK_PAGES {
                            let full =
                                std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK_PAGES));
                            if tx.send(Ok(full)).is_err() {
                                return;
                            }
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
            if !chunk.is_empty() {
                let _ = tx.send(Ok(chunk));
            }
        });
        let mut n = 0u64;
        // Dropping `rx` on an early return stops the reader at its next send.
        for chunk in rx {
            let chunk = chunk?;
            n += chunk.len() as u64;
            f(&chunk)?;
        }
        Ok(n)
    })
}

/// The pages of one part of a source, as a device sees them
/// ([`select_part`]): the part's pages back to back, same-filled ones
/// included, and how many zero pages stand for the same-filled pages the
/// source counted without yielding, in these pages' share.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// The pages, back to back.
    pub pages: Vec<u8>,
    /// Zero pages to add for the source's uncounted same-filled pages.
    pub zero_pages: u64,
}

/// The pages of `part` (`None`: every page) of `source` under `split`, at
/// most `max_pages` of them, in stream order. A same-filled page falls in
/// a part by its hash like any other (the scan leaves such pages out of
/// both); the uncounted same-filled pages are attributed in the share of
/// the other pages taken, rounded.
pub fn select_part<S: PageSource + ?Sized>(
    source: &S,
    split: &Split,
    part: Option<Part>,
    max_pages: Option<usize>,
) -> Result<Selection, TrainError> {
    let mut out = Selection::default();
    let (mut others, mut others_taken) = (0u64, 0u64);
    for_each_chunk(source, |chunk| {
        for p in chunk {
            let same = same_filled(p).is_some();
            others += u64::from(!same);
            let full = max_pages.is_some_and(|m| out.pages.len() >= m * PAGE_SIZE);
            let wanted = part.is_none_or(|want| match split.part(p) {
                Part::Test => want == Part::Test,
                _ => want == Part::Train,
            });
            if wanted && !full {
                out.pages.extend_from_slice(p);
                others_taken += u64::from(!same);
            }
        }
        Ok(())
    })?;
    if others > 0 {
        let share = source.uncounted_same_filled() as f64 * others_taken as f64 / others as f64;
        out.zero_pages = share.round() as u64;
    }
    Ok(out)
}

/// One workload of a corpus.
pub struct Workload<'a> {
    /// Its name (file names and reports use it).
    pub name: String,
    /// Its pages.
    pub source: &'a dyn PageSource,
}

/// Several sources streamed one after the other.
pub struct Chain<'a>(pub Vec<&'a dyn PageSource>);

impl PageSource for Chain<'_> {
    fn stream(&self) -> Result<PageStream<'_>, SourceError> {
        let mut streams = Vec::new();
        for s in &self.0 {
            streams.push(s.stream()?);
        }
        Ok(Box::new(streams.into_iter().flatten()))
    }
    fn uncounted_same_filled(&self) -> u64 {
        self.0.iter().map(|s| s.uncounted_same_filled()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_sample_is_a_part_of_the_test_part_of_about_the_asked_size() {
        let split = Split::new(0.2, 7).unwrap();
        let hashes: Vec<u64> = (0..50_000u64)
            .map(|i| page_hash(7, &i.to_le_bytes().repeat(8)))
            .collect();
        let test = |s: &Split| -> Vec<usize> {
            (0..hashes.len())
                .filter(|&i| s.part_of_hash(hashes[i]) == Part::Test)
                .collect()
        };
        let all = test(&split);
        let have = all.len() as u64;
        assert_eq!(split.test_sample(have, have), split);
        assert_eq!(split.test_sample(have, have + 5), split);
        let sample = test(&split.test_sample(have, 1000));
        assert!(sample.iter().all(|i| all.binary_search(i).is_ok()));
        assert!(
            (800..1200).contains(&sample.len()),
            "{} pages sampled for 1000",
            sample.len()
        );
        // Even a sample of one keeps some hash range.
        assert!(split.test_sample(have, 1).test_fraction > 0.0);
    }

    #[test]
    fn page_hash_is_frozen_and_seeded() {
        // Frozen values: a change here re-splits every corpus.
        assert_eq!(page_hash(0, &[0u8; 4096]), page_hash(0, &[0u8; 4096]));
        assert_ne!(page_hash(0, &[0u8; 4096]), page_hash(1, &[0u8; 4096]));
        assert_ne!(page_hash(0, b"abc"), page_hash(0, b"abd"));
        assert_eq!(page_hash(7, b"cannery"), FROZEN_HASH);
    }
    const FROZEN_HASH: u64 = 0x8ba7_ebfb_4f40_8536;

    #[test]
    fn split_fraction_is_close_and_validation_is_an_eighth_of_training() {
        let split = Split::new(0.2, 42).unwrap();
        let mut counts = [0usize; 3];
        for i in 0..20_000u32 {
            let page = i.to_le_bytes().repeat(4);
            counts[match split.part(&page) {
                Part::Train => 0,
                Part::Validation => 1,
                Part::Test => 2,
            }] += 1;
        }
        let test = counts[2] as f64 / 20_000.0;
        assert!((test - 0.2).abs() < 0.015, "test fraction {test}");
        let val = counts[1] as f64 / (counts[0] + counts[1]) as f64;
        assert!((val - 0.125).abs() < 0.015, "validation share {val}");
        assert!(Split::new(1.0, 0).is_err());
        assert!(Split::new(-0.1, 0).is_err());
        assert!(Split::new(f64::NAN, 0).is_err());
        let none = Split::new(0.0, 0).unwrap();
        assert!((0..1000u32).all(|i| none.part(&i.to_le_bytes()) != Part::Test));
    }

    #[test]
    fn select_part_takes_what_the_scan_holds_out() {
        struct Counted(Vec<Vec<u8>>);
        impl PageSource for Counted {
            fn stream(&self) -> Result<PageStream<'_>, SourceError> {
                self.0.stream()
            }
            fn uncounted_same_filled(&self) -> u64 {
                100
            }
        }
        let mut pages: Vec<Vec<u8>> = (0..400u32)
            .map(|i| {
                let mut p = vec![0u8; PAGE_SIZE];
                p[..4].copy_from_slice(&(i + 1).to_le_bytes());
                p
            })
            .collect();
        pages.push(vec![0u8; PAGE_SIZE]);
        pages.push(vec![7u8; PAGE_SIZE]);
        let split = Split::default();
        let src = Counted(pages.clone());
        let test = select_part(&src, &split, Some(Part::Test), None).unwrap();
        let expect: Vec<u8> = pages
            .iter()
            .filter(|p| split.part(p) == Part::Test)
            .flatten()
            .copied()
            .collect();
        assert_eq!(test.pages, expect);
        let others = (expect.len() / PAGE_SIZE) as u64
            - [&pages[400], &pages[401]]
                .iter()
                .filter(|p| split.part(p) == Part::Test)
                .count() as u64;
        assert_eq!(
            test.zero_pages,
            (100.0 * others as f64 / 400.0).round() as u64
        );
        let train = select_part(&src, &split, Some(Part::Train), None).unwrap();
        assert_eq!(train.pages.len() + test.pages.len(), 402 * PAGE_SIZE);
        let all = select_part(&src, &split, None, Some(10)).unwrap();
        assert_eq!(all.pages, pages[..10].concat());
        assert_eq!(all.zero_pages, 3, "100 × 10 / 400, rounded");
    }

    #[test]
    fn smallest_hashes_ignores_order() {
        let mut a = SmallestHashes::new(5);
        let mut b = SmallestHashes::new(5);
        for h in [9u64, 3, 7, 1, 8, 2, 6, 3] {
            a.offer(h, || h);
        }
        for h in [6u64, 2, 8, 1, 7, 3, 9] {
            b.offer(h, || h);
        }
        assert_eq!(a.into_items(), vec![1, 2, 3, 6, 7]);
        assert_eq!(b.into_items(), vec![1, 2, 3, 6, 7]);
    }

    #[test]
    fn chunks_cover_every_page_and_reject_bad_sizes() {
        let pages: Vec<Vec<u8>> = (0..600u32).map(|i| vec![i as u8; 4096]).collect();
        let mut seen = 0;
        let n = for_each_chunk(&pages, |c| {
            assert!(c.len() <= CHUNK_PAGES);
            seen += c.len();
            Ok(())
        })
        .unwrap();
        assert_eq!((n, seen), (600, 600));
        let bad = vec![vec![0u8; 4096], vec![0u8; 100]];
        let err = for_each_chunk(&bad, |_| Ok(())).unwrap_err();
        assert!(matches!(err, TrainError::PageSize { index: 1, len: 100 }));
    }
}
