//! Histograms → tables, and one workload's training: the scan that splits
//! pages and gathers statistics, table construction (smoothing → code
//! lengths → a validated IAA-safe [`Table`] with provenance), the `best`
//! refinement loop, and the held-out comparison of smoothings.
//!
//! Deterministic: a table depends only on the histogram and the options
//! (integer sums, a stable package-merge), so the same pages in any order on
//! any number of threads give identical table bytes. No creation time is
//! written (it would break that); callers may add one. Evaluation against
//! other codecs is [`crate::evaluate`]; clustering is [`crate::cluster`].

use rayon::prelude::*;

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::table::rules::Rule;
use cannery_codec::{Encoder, Format, Level, Mode, Outcome, Table};

use crate::code_lengths::{build_lengths, Constraints};
use crate::error::{TrainError, MIN_TRAINING_PAGES};
use crate::gather::{gather, gather_pages, settings_for, Parser};
use crate::histogram::{Histogram, ParseModel, SymbolCounts};
use crate::pages::{
    for_each_chunk, page_hash, same_filled, PageSource, Part, SmallestHashes, Split,
};

/// Name and version written into every table's provenance.
pub const GENERATOR: &str = concat!("cannery-trainer ", env!("CARGO_PKG_VERSION"));

/// How a histogram becomes a table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TableOptions {
    /// Smoothing of zero and rare counts.
    pub smoothing: crate::smoothing::Smoothing,
    /// Code all 30 distance symbols, not just 0..=23 (implied by
    /// `constraints.qpl_compatible`: see [`TableOptions::codes_all_distances`]).
    pub all_distances: bool,
    /// Length limit and the QPL rule.
    pub constraints: Constraints,
    /// Fewest pages a histogram must hold.
    pub min_pages: u64,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            smoothing: crate::smoothing::Smoothing::DEFAULT,
            all_distances: false,
            constraints: Constraints::default(),
            min_pages: MIN_TRAINING_PAGES,
        }
    }
}

impl TableOptions {
    /// The options `train`, `stats` and the Python package take: a
    /// smoothing, every distance coded or not, QPL-compatible or not (which
    /// codes every distance too); the rest as by default.
    pub fn new(
        smoothing: crate::smoothing::Smoothing,
        all_distances: bool,
        qpl_compatible: bool,
    ) -> TableOptions {
        let mut o = TableOptions {
            smoothing,
            all_distances,
            ..TableOptions::default()
        };
        o.constraints.qpl_compatible = qpl_compatible;
        o
    }

    /// True if every distance symbol gets a code: asked for, or needed for
    /// QPL to load the table unchanged.
    pub fn codes_all_distances(&self) -> bool {
        self.all_distances || self.constraints.qpl_compatible
    }

    /// The training parameters recorded in a table's provenance.
    pub fn provenance_map(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("smoothing".into(), self.smoothing.to_string().into());
        m.insert("all_distances".into(), self.codes_all_distances().into());
        m.insert("max_code_length".into(), self.constraints.max_len.into());
        m.insert(
            "qpl_compatible".into(),
            self.constraints.qpl_compatible.into(),
        );
        m
    }
}

/// Code lengths for symbol counts (no page-count check).
pub fn lengths_from_counts(
    counts: &SymbolCounts,
    opts: &TableOptions,
) -> cannery_codec::CodeLengths {
    let (ll, d) = opts.smoothing.weights(counts, opts.codes_all_distances());
    build_lengths(&ll, &d, &opts.constraints)
}

/// A table from a histogram: smoothing, optimal limited code lengths, IAA
/// checks, provenance (parse model, pages, options). `what` names the data
/// in errors.
pub fn table_from_histogram(
    h: &Histogram,
    opts: &TableOptions,
    what: &str,
) -> Result<Table, TrainError> {
    if h.pages == 0 {
        return Err(if h.same_filled_pages > 0 {
            TrainError::AllSameFilled {
                what: what.into(),
                same_filled: h.same_filled_pages,
                needed: opts.min_pages,
            }
        } else {
            TrainError::Empty {
                what: what.into(),
                needed: opts.min_pages,
            }
        });
    }
    if h.pages < opts.min_pages {
        return Err(TrainError::TooFewPages {
            what: what.into(),
            found: h.pages,
            total: h.pages + h.same_filled_pages,
            same_filled: h.same_filled_pages,
            held_out: 0,
            needed: opts.min_pages,
        });
    }
    let l = lengths_from_counts(&h.counts, opts);
    let mut t = Table::from_lengths(&l.litlen, &l.dist)?;
    // Smoothing codes every required symbol and package-merge makes
    // complete codes, so this only fails if those guarantees break.
    t.check_iaa().map_err(TrainError::NotIaaSafe)?;
    if opts.constraints.qpl_compatible {
        Rule::QplLoadable
            .check(&t)
            .map_err(TrainError::NotQplLoadable)?;
    }
    t.name = Some(what.into());
    t.provenance.source = Some("trained".into());
    t.provenance.generator = Some(GENERATOR.into());
    let mut m = opts.provenance_map();
    m.insert("parse".into(), h.settings().parse.name().into());
    m.insert("window".into(), h.settings().window.into());
    m.insert("pages".into(), h.pages.into());
    if let Some(id) = &h.settings().cost_table {
        m.insert("pricing_table".into(), id.clone().into());
    }
    t.provenance.training = m;
    Ok(t)
}

/// Bits the symbols take under a table's lengths (Fast parse: exact up to
/// per-page byte padding).
pub fn bits_under(counts: &SymbolCounts, t: &Table) -> u64 {
    counts.bits(&t.lengths().litlen, &t.lengths().dist)
}

/// Held-out bits per page of one smoothing.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SmoothingResult {
    /// The smoothing, by name.
    pub smoothing: String,
    /// Bits per held-out page of its table (extra bits included).
    pub bits_per_page: f64,
    /// Relative to the best candidate, in percent (0 for the best).
    pub excess_percent: f64,
}

/// Trains one table per smoothing candidate on `train` and measures the
/// held-out bits per page on `test` (both gathered with the same parse).
pub fn evaluate_smoothings(
    train: &Histogram,
    test: &Histogram,
    opts: &TableOptions,
) -> Vec<SmoothingResult> {
    if test.pages == 0 || train.pages == 0 {
        return Vec::new();
    }
    let mut out: Vec<SmoothingResult> = crate::smoothing::Smoothing::CANDIDATES
        .iter()
        .map(|&s| {
            let o = TableOptions {
                smoothing: s,
                ..*opts
            };
            let l = lengths_from_counts(&train.counts, &o);
            SmoothingResult {
                smoothing: s.to_string(),
                bits_per_page: test.counts.bits(&l.litlen, &l.dist) as f64 / test.pages as f64,
                excess_percent: 0.0,
            }
        })
        .collect();
    let best = out
        .iter()
        .map(|r| r.bits_per_page)
        .fold(f64::INFINITY, f64::min);
    for r in &mut out {
        r.excess_percent = 100.0 * (r.bits_per_page / best - 1.0);
    }
    out
}

/// What training needs to know about a workload's pages.
#[derive(Clone, Debug)]
pub struct TrainOptions {
    /// Parse model of the statistics (and refinement for `best`).
    pub parse: ParseModel,
    /// Table construction.
    pub table: TableOptions,
    /// Train/test split.
    pub split: Split,
    /// Most `best` refinement iterations.
    pub max_refinements: usize,
    /// Training pages kept as zstd dictionary samples (0: none). The
    /// default, 1024 pages (4 MiB), is over 100 times the 32 KiB dictionary,
    /// zstd's own sizing advice.
    pub dictionary_samples: usize,
    /// Training pages whose symbol counts are kept for clustering (0: none).
    pub cluster_samples: usize,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            parse: ParseModel::Fast,
            table: TableOptions::default(),
            split: Split::default(),
            max_refinements: 4,
            dictionary_samples: 1024,
            cluster_samples: 0,
        }
    }
}

/// A page's symbol counts, sparse: (symbol, count) with distance symbols
/// numbered 286..=315; plus extra bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageCounts {
    /// Non-zero counts, by symbol.
    pub symbols: Vec<(u16, u32)>,
    /// Extra bits of the page's matches.
    pub extra_bits: u32,
}

impl PageCounts {
    /// The sparse form of one page's counts.
    pub fn from_counts(c: &SymbolCounts) -> PageCounts {
        let symbols = c
            .litlen
            .iter()
            .chain(c.dist.iter())
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(s, &n)| (s as u16, n as u32))
            .collect();
        PageCounts {
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
    pub page_counts: Vec<PageCounts>,
}

/// The scan: one pass over a workload's pages, splitting by content hash and
/// gathering training and held-out statistics with the parse of `opts`
/// (the lazy parse stands in for `best` until refinement).
pub fn scan<S: PageSource + ?Sized>(
    name: &str,
    source: &S,
    opts: &TrainOptions,
) -> Result<Scan, TrainError> {
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
        let per_page: Vec<Option<PagePart>> = chunk
            .par_chunks(16)
            .flat_map_iter(|task| {
                let mut parser = Parser::new(model, None);
                task.iter()
                    .map(|p| {
                        if same_filled(p).is_some() {
                            return None;
                        }
                        let h = page_hash(split.seed, p);
                        let mut c = SymbolCounts::default();
                        parser.count(p, &mut c);
                        Some((h, split.part_of_hash(h), Some(c)))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        for (page, r) in chunk.iter().zip(per_page) {
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
                    clus.offer(h, || PageCounts::from_counts(&c));
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

/// One step of the `best` refinement loop.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RefineStep {
    /// 0 = the starting table (lazy parse statistics).
    pub iteration: usize,
    /// Id of the table of this step.
    pub table_id: String,
    /// Canned `best` bytes of the validation pages with this table.
    pub validation_bytes: u64,
    /// Whether the step's table was kept.
    pub accepted: bool,
}

/// Canned `best` size of the pages in `part` (same-filled skipped,
/// incompressible pages counted as 4096), in parallel.
pub fn canned_size<S: PageSource + ?Sized>(
    source: &S,
    split: &Split,
    part: Part,
    table: &Table,
    level: Level,
) -> Result<(u64, u64), TrainError> {
    // Fail early (and typed) if the table cannot be used.
    Encoder::new(Mode::Canned, Format::Iaa, level, Some(table))?;
    let mut total = (0u64, 0u64);
    for_each_chunk(source, |chunk| {
        let sizes: Vec<(u64, u64)> = chunk
            .par_chunks(16)
            .map(|task| {
                let mut e = Encoder::new(Mode::Canned, Format::Iaa, level, Some(table))
                    .expect("checked above");
                let mut out = Vec::with_capacity(PAGE_SIZE);
                let mut acc = (0u64, 0u64);
                for p in task {
                    if same_filled(p).is_some() || split.part(p) != part {
                        continue;
                    }
                    acc.0 += 1;
                    acc.1 += match e.compress(p, &mut out).expect("a page of 4096 bytes") {
                        Outcome::Compressed(n) => n as u64,
                        Outcome::Incompressible => PAGE_SIZE as u64,
                    };
                }
                acc
            })
            .collect();
        for s in sizes {
            total.0 += s.0;
            total.1 += s.1;
        }
        Ok(())
    })?;
    Ok(total)
}

/// The `best` refinement: parse the fit pages with the current table's
/// costs, rebuild the table from those statistics, and keep it while the
/// canned `best` size of the validation pages (training pages held back,
/// never the test pages) improves; at most `max_iterations` rounds. Without
/// validation pages the training pages' own size is the criterion.
pub fn refine_best<S: PageSource + ?Sized>(
    name: &str,
    source: &S,
    start: Table,
    opts: &TrainOptions,
) -> Result<(Table, Vec<RefineStep>), TrainError> {
    let (n_val, _) = canned_size(source, &opts.split, Part::Validation, &start, Level::Fast)?;
    let measure_on = if n_val > 0 {
        Part::Validation
    } else {
        Part::Train
    };
    let size = |t: &Table| -> Result<u64, TrainError> {
        Ok(canned_size(source, &opts.split, measure_on, t, Level::Best)?.1)
    };
    let mut best = start;
    let mut best_bytes = size(&best)?;
    let mut steps = vec![RefineStep {
        iteration: 0,
        table_id: best.id(),
        validation_bytes: best_bytes,
        accepted: true,
    }];
    let split = opts.split;
    for iteration in 1..=opts.max_refinements {
        let keep = move |p: &[u8]| split.part(p) == Part::Train;
        let h = gather(source, ParseModel::Best, Some(&best), &keep)?;
        let cand = table_from_histogram(&h, &opts.table, name)?;
        if cand == best {
            break;
        }
        let bytes = size(&cand)?;
        let accepted = bytes < best_bytes;
        steps.push(RefineStep {
            iteration,
            table_id: cand.id(),
            validation_bytes: bytes,
            accepted,
        });
        if !accepted {
            break;
        }
        let gain = (best_bytes - bytes) as f64 / best_bytes as f64;
        best = cand;
        best_bytes = bytes;
        if gain < 0.001 {
            break;
        }
    }
    Ok((best, steps))
}

/// A workload's trained table and how it was made.
#[derive(Clone, Debug)]
pub struct Trained {
    /// The table (provenance filled with training parameters).
    pub table: Table,
    /// The scan.
    pub scan: Scan,
    /// `best` refinement steps (empty for other parse models).
    pub refinement: Vec<RefineStep>,
}

/// Scans a workload and trains its table (with refinement for `best`).
pub fn train_workload<S: PageSource + ?Sized>(
    name: &str,
    source: &S,
    opts: &TrainOptions,
) -> Result<Trained, TrainError> {
    let scan = scan(name, source, opts)?;
    scan.check_enough(opts.table.min_pages)?;
    let (table, refinement) = train_from_scan(name, source, &scan, opts)?;
    Ok(Trained {
        table,
        scan,
        refinement,
    })
}

/// The table of a scanned workload (or several, with `source` chaining them).
pub fn train_from_scan<S: PageSource + ?Sized>(
    name: &str,
    source: &S,
    scan: &Scan,
    opts: &TrainOptions,
) -> Result<(Table, Vec<RefineStep>), TrainError> {
    let mut table_opts = opts.table;
    if opts.parse == ParseModel::Best {
        // The fit set may be a little under the minimum when training is just enough.
        table_opts.min_pages = table_opts.min_pages.min(scan.fit.pages.max(1));
        let start = table_from_histogram(&scan.fit, &table_opts, name)?;
        let o = TrainOptions {
            table: table_opts,
            ..opts.clone()
        };
        let (mut t, steps) = refine_best(name, source, start, &o)?;
        t.provenance
            .training
            .insert("parse".into(), ParseModel::Best.name().into());
        Ok((t, steps))
    } else {
        Ok((
            table_from_histogram(&scan.train, &table_opts, name)?,
            Vec::new(),
        ))
    }
}

/// The kernel's 2024 table standing in for one that could not be trained
/// (`--fallback`): its provenance says why and, if given, for which corpus.
pub fn fallback_table(reason: &str, corpus: Option<String>) -> Table {
    let mut k = Table::kernel_2024();
    k.provenance.corpus = corpus;
    k.provenance
        .training
        .insert("fallback".into(), reason.to_string().into());
    k
}

/// Histogram of a slice of in-memory pages (every page, no split).
pub fn histogram_of<P: AsRef<[u8]> + Sync>(pages: &[P], model: ParseModel) -> Histogram {
    gather_pages(pages, model, None, &|_| true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{synthetic_pages, workload_pages};

    #[test]
    fn tables_are_iaa_safe_and_carry_provenance() {
        let pages = synthetic_pages(200, 11);
        let t = train_workload("mixed", &pages, &TrainOptions::default())
            .unwrap()
            .table;
        assert_eq!(t.check_iaa(), Ok(()));
        assert_eq!(t.name.as_deref(), Some("mixed"));
        assert_eq!(t.provenance.training["parse"], "fast");
        assert_eq!(t.provenance.generator.as_deref(), Some(GENERATOR));
        assert!(t.provenance.created.is_none());
    }

    #[test]
    fn same_pages_any_order_any_threads_give_identical_table_bytes() {
        let pages = synthetic_pages(300, 12);
        let opts = TrainOptions::default();
        let a = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| train_workload("w", &pages, &opts).unwrap().table);
        let mut shuffled = pages.clone();
        shuffled.reverse();
        shuffled.rotate_left(77);
        let b = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap()
            .install(|| train_workload("w", &shuffled, &opts).unwrap().table);
        assert_eq!(a.to_json(), b.to_json());
        assert_eq!(a.to_binary(), b.to_binary());
    }

    #[test]
    fn merge_order_does_not_change_the_table() {
        let parts: Vec<Vec<Vec<u8>>> = (0..4).map(|i| synthetic_pages(60, 20 + i)).collect();
        let hists: Vec<Histogram> = parts
            .iter()
            .map(|p| histogram_of(p, ParseModel::Fast))
            .collect();
        let opts = TableOptions::default();
        let fwd = hists[1..]
            .iter()
            .fold(hists[0].clone(), |a, b| a.merged(b).unwrap());
        let pairs = hists[3]
            .clone()
            .merged(&hists[2])
            .unwrap()
            .merged(&hists[1].clone().merged(&hists[0]).unwrap())
            .unwrap();
        let all: Vec<Vec<u8>> = parts.concat();
        let whole = histogram_of(&all, ParseModel::Fast);
        let t1 = table_from_histogram(&fwd, &opts, "x").unwrap();
        let t2 = table_from_histogram(&pairs, &opts, "x").unwrap();
        let t3 = table_from_histogram(&whole, &opts, "x").unwrap();
        assert_eq!(t1.to_json(), t2.to_json());
        assert_eq!(t1.to_json(), t3.to_json());
    }

    #[test]
    fn too_few_empty_and_all_zero_inputs_say_what_was_found() {
        let opts = TrainOptions::default();
        let few = synthetic_pages(10, 13);
        let e = train_workload("tiny", &few, &opts).unwrap_err();
        let msg = e.to_string();
        assert!(
            matches!(e, TrainError::TooFewPages { needed: 32, .. }),
            "{msg}"
        );
        assert!(
            msg.contains("tiny") && msg.contains("need at least 32"),
            "{msg}"
        );
        let none: Vec<Vec<u8>> = Vec::new();
        let e = train_workload("void", &none, &opts).unwrap_err();
        assert!(matches!(e, TrainError::Empty { .. }), "{e}");
        assert!(e.to_string().contains("no pages found"));
        let zeros = vec![vec![0u8; 4096]; 100];
        let e = train_workload("zeros", &zeros, &opts).unwrap_err();
        assert!(
            matches!(
                e,
                TrainError::AllSameFilled {
                    same_filled: 100,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn a_workload_table_beats_the_kernel_table_on_its_own_held_out_pages() {
        let pages = workload_pages(400, 0, 14);
        let opts = TrainOptions::default();
        let tr = train_workload("records", &pages, &opts).unwrap();
        let own = bits_under(&tr.scan.test.counts, &tr.table);
        let kernel = bits_under(&tr.scan.test.counts, &Table::kernel_2024());
        assert!(tr.scan.test.pages > 40);
        assert!(own < kernel, "own {own} vs kernel {kernel}");
    }

    #[test]
    fn best_refinement_never_ends_worse_than_it_starts() {
        let pages = synthetic_pages(160, 15);
        let opts = TrainOptions {
            parse: ParseModel::Best,
            max_refinements: 2,
            ..TrainOptions::default()
        };
        let tr = train_workload("best", &pages, &opts).unwrap();
        let steps = &tr.refinement;
        assert!(!steps.is_empty());
        let kept: Vec<&RefineStep> = steps.iter().filter(|s| s.accepted).collect();
        let last = kept.last().unwrap();
        assert_eq!(last.table_id, tr.table.id());
        assert!(last.validation_bytes <= steps[0].validation_bytes);
        assert_eq!(tr.table.provenance.training["parse"], "best");
        assert_eq!(tr.table.check_iaa(), Ok(()));
    }

    proptest::proptest! {
        /// Any statistics (zeros, one symbol, huge skew) give an IAA-safe
        /// table with complete codes, within the QPL rule when asked.
        #[test]
        fn any_histogram_gives_an_iaa_safe_table(
            ll in proptest::collection::vec(proptest::prop_oneof![
                proptest::strategy::Just(0u64), 0u64..10, 0u64..1_000_000_000_000], 286),
            d in proptest::collection::vec(proptest::prop_oneof![
                proptest::strategy::Just(0u64), 0u64..1_000_000], 24),
            qpl in proptest::bool::ANY,
            all_d in proptest::bool::ANY,
            smoothing in proptest::sample::select(crate::smoothing::Smoothing::CANDIDATES.to_vec()),
        ) {
            let mut c = SymbolCounts::default();
            c.litlen.copy_from_slice(&ll);
            c.dist[..24].copy_from_slice(&d);
            let mut opts = TableOptions { smoothing, all_distances: all_d, ..TableOptions::default() };
            opts.constraints.qpl_compatible = qpl;
            let l = lengths_from_counts(&c, &opts);
            let t = Table::from_lengths(&l.litlen, &l.dist).unwrap();
            proptest::prop_assert_eq!(t.check_iaa(), Ok(()));
            proptest::prop_assert_eq!(t.kraft(), (32768, 32768));
            if all_d || qpl {
                proptest::prop_assert!(l.dist.iter().all(|&x| x > 0));
            }
            if qpl {
                proptest::prop_assert!(cannery_codec::table::rules::BitBudget::of(&l).fits());
                proptest::prop_assert_eq!(Rule::QplLoadable.check(&t), Ok(()));
            }
        }
    }

    #[test]
    fn smoothing_comparison_covers_every_candidate() {
        let pages = synthetic_pages(300, 16);
        let tr = train_workload("s", &pages, &TrainOptions::default()).unwrap();
        let r = evaluate_smoothings(&tr.scan.train, &tr.scan.test, &TableOptions::default());
        assert_eq!(r.len(), crate::smoothing::Smoothing::CANDIDATES.len());
        assert!(r.iter().any(|x| x.excess_percent == 0.0));
        assert!(r
            .iter()
            .all(|x| x.bits_per_page > 0.0 && x.excess_percent >= 0.0));
    }
}
