//! One workload's pages → its statistics, in one pass ([`scan`]): pages
//! split by content hash into training, validation and held-out parts,
//! each part's histogram gathered with the training parse, zero and
//! same-filled pages counted, and bounded samples kept for the zstd
//! dictionary and for clustering. Also the histogram of in-memory pages
//! ([`histogram_of`]). Nothing here builds a table ([`crate::train`]) or
//! refines one ([`crate::refine`]).

use rayon::prelude::*;

use crate::error::TrainError;
use crate::gather::{gather_pages, settings_for, Parser};
use crate::histogram::{Histogram, ParseModel, SymbolCounts};
use crate::pages::{for_each_chunk, page_hash, same_filled, PageSource, Part, SmallestHashes};

use crate::options::TrainOptions;

/// A page's symbol counts, sparse: (symbol, count) with distance symbols
/// numbered 286..=315; plus extra bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanCounts {
    /// Non-zero counts, by symbol.
    pub symbols: Vec<(u16, u32)>,
    /// Extra bits of the page's matches.
    pub extra_bits: u32,
}

impl ScanCounts {
    /// The sparse form of one page's counts.
    pub fn from_counts(c: &SymbolCounts) -> ScanCounts {
        let symbols = c
            .litlen
            .iter()
            .chain(c.dist.iter())
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(s, &n)| (s as u16, n as u32))
            .collect();
        ScanCounts {
            symbols,
            extra_bits: c.extra_bits as u32,
        }
    }

    /// Adds these counts into dense counts.
    pub fn add_to(&self, c: &mut SymbolCounts) {
        for &(s, n) in &self.symbols {
            let s = s as usize;
            if s < c.litlen.len() {
                c.litlen[s] += n as u64;
            } else {
                c.dist[s - c.litlen.len()] += n as u64;
            }
        }
        c.extra_bits += self.extra_bits as u64;
    }

    /// Bits of the page under lengths given as 316 values (litlen then dist).
    pub fn bits(&self, lengths: &[u8; 316]) -> u64 {
        self.symbols
            .iter()
            .map(|&(s, n)| n as u64 * lengths[s as usize] as u64)
            .sum::<u64>()
            + self.extra_bits as u64
    }
}

/// One workload's pages after the scan: split, counted, sampled.
#[derive(Clone, Debug)]
pub struct Scan {
    /// Workload name.
    pub name: String,
    /// Pages read from the source (same-filled included).
    pub pages_read: u64,
    /// Same-filled pages read, plus those the source counted without yielding.
    pub same_filled: u64,
    /// Of those, the ones the source counted without yielding.
    pub uncounted_same_filled: u64,
    /// Training statistics (validation pages included).
    pub train: Histogram,
    /// Training statistics without validation pages (the `best` fit set).
    pub fit: Histogram,
    /// Held-out statistics (for the smoothing comparison only).
    pub test: Histogram,
    /// Zstd dictionary samples (training pages, bounded, deterministic).
    pub dictionary_samples: Vec<Vec<u8>>,
    /// Training pages' counts for clustering (bounded, deterministic).
    pub page_counts: Vec<ScanCounts>,
}

/// The scan: one pass over a workload's pages, splitting by content hash and
/// gathering training and held-out statistics with the parse of `opts`
/// (the lazy parse stands in for `best` until refinement).
pub fn scan<S: PageSource + ?Sized>(
    name: &str,
    source: &S,
    opts: &TrainOptions,
) -> Result<Scan, TrainError> {
    opts.parse.check_available()?;
    let model = if opts.parse == ParseModel::Best {
        ParseModel::Default
    } else {
        opts.parse
    };
    let settings = settings_for(model, None);
    let mut train = Histogram::zero(settings.clone());
    let mut fit = Histogram::zero(settings.clone());
    let mut test = Histogram::zero(settings);
    let mut dict = SmallestHashes::new(opts.dictionary_samples);
    let mut clus = SmallestHashes::new(opts.cluster_samples);
    let split = opts.split;
    let want_counts = opts.cluster_samples > 0;
    let pages_read = for_each_chunk(source, |chunk| {
        type PagePart = (u64, Part, Option<SymbolCounts>);
        let per_page: Vec<Result<Option<PagePart>, TrainError>> = chunk
            .par_chunks(16)
            .map_init(
                || Parser::new(model, None),
                |parser, task| {
                    task.iter()
                        .map(|p| {
                            if same_filled(p).is_some() {
                                return Ok(None);
                            }
                            let h = page_hash(split.seed, p);
                            let mut c = SymbolCounts::default();
                            parser.count(p, &mut c)?;
                            Ok(Some((h, split.part_of_hash(h), Some(c))))
                        })
                        .collect::<Vec<_>>()
                },
            )
            .flatten_iter()
            .collect();
        for (page, r) in chunk.iter().zip(per_page) {
            let r = r?;
            let Some((h, part, c)) = r else {
                train.same_filled_pages += 1;
                continue;
            };
            let c = c.expect("counts");
            let target = if part == Part::Test {
                &mut test
            } else {
                &mut train
            };
            target.counts.add(&c)?;
            target.pages += 1;
            if part == Part::Train {
                fit.counts.add(&c)?;
                fit.pages += 1;
            }
            if part != Part::Test {
                dict.offer(h, || page.clone());
                if want_counts {
                    clus.offer(h, || ScanCounts::from_counts(&c));
                }
            }
        }
        Ok(())
    })?;
    let uncounted = source.uncounted_same_filled();
    let same = train.same_filled_pages + uncounted;
    train.same_filled_pages = same;
    Ok(Scan {
        name: name.into(),
        pages_read,
        same_filled: same,
        uncounted_same_filled: uncounted,
        train,
        fit,
        test,
        dictionary_samples: dict.into_items(),
        page_counts: clus.into_items(),
    })
}

impl Scan {
    /// The "too few pages" error for this scan, if it has too few training pages.
    pub fn check_enough(&self, needed: u64) -> Result<(), TrainError> {
        let found = self.train.pages;
        if self.pages_read == 0 && self.same_filled == 0 {
            return Err(TrainError::Empty {
                what: self.name.clone(),
                needed,
            });
        }
        if found == 0 && self.test.pages == 0 {
            return Err(TrainError::AllSameFilled {
                what: self.name.clone(),
                same_filled: self.same_filled,
                needed,
            });
        }
        if found < needed {
            return Err(TrainError::TooFewPages {
                what: self.name.clone(),
                found,
                total: self.pages_read + self.uncounted_same_filled,
                same_filled: self.same_filled,
                held_out: self.test.pages,
                needed,
            });
        }
        Ok(())
    }
}

/// Histogram of a slice of in-memory pages (every page, no split).
pub fn histogram_of<P: AsRef<[u8]> + Sync>(
    pages: &[P],
    model: ParseModel,
) -> Result<Histogram, TrainError> {
    gather_pages(pages, model, None, &|_| true)
}
