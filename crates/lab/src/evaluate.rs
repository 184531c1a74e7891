//! Tables → held-out sizes: compresses pages with every codec of an
//! [`EvalSpec`] and tallies ratio, effective ratio and incompressible pages
//! per mode; also the drift of a table from a corpus' own optimal table.
//!
//! Ratio and effective ratio are defined in `crate::figures` (one
//! definition for every report); **incompressible pages** are pages whose
//! output would reach 4096 bytes.
//!
//! Canned sizes at the `fast` parse do not depend on the table's
//! costs, so for extra tables (fleet, kernel-2024, cross-workload, cluster
//! tables) they are computed exactly from one parse per page: ⌈(Σ count ×
//! length + extra bits) / 8⌉. The spec's main table is really encoded (at
//! each level), decoded and compared, and its fast size must equal that
//! formula. This module does not train; it measures.

use std::collections::BTreeMap;
use std::sync::Mutex;

use rayon::prelude::*;

use crate::figures::{self, SameFilledShare};
use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::{Decoder, Encoder, Format, Level, Mode, Outcome, Table};

use cannery_engines::peer::{Peer, PeerKind};
use cannery_trainer::error::TrainError;
use cannery_trainer::gather::Parser;
use cannery_trainer::histogram::{Histogram, ParseModel, Settings, SymbolCounts};
use cannery_trainer::pages::{for_each_chunk, same_filled, PageSource, Part, Split};

use crate::mode_key::ModeKey;

pub(crate) use cannery_trainer::bounds::round4;
pub use cannery_trainer::bounds::{
    drift, Ceiling, ConstraintCost, Drift, RETRAIN_THRESHOLD_PERCENT,
};

/// Raw sums for one mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Pages compressed.
    pub pages: u64,
    /// Compressed bytes (incompressible pages at 4096).
    pub bytes_out: u64,
    /// Pages whose output reached 4096 bytes.
    pub incompressible: u64,
}

impl Tally {
    fn add(&mut self, size: Option<usize>) {
        self.pages += 1;
        match size {
            Some(n) if n < PAGE_SIZE => self.bytes_out += n as u64,
            _ => {
                self.bytes_out += PAGE_SIZE as u64;
                self.incompressible += 1;
            }
        }
    }

    /// Sum of two tallies.
    pub fn plus(self, o: Tally) -> Tally {
        Tally {
            pages: self.pages + o.pages,
            bytes_out: self.bytes_out + o.bytes_out,
            incompressible: self.incompressible + o.incompressible,
        }
    }

    /// The reported figures, with `same_filled` zero/same-filled pages
    /// attributed to these pages (for the effective ratio).
    pub fn result(&self, same_filled: f64) -> ModeResult {
        let bytes_in = self.pages * PAGE_SIZE as u64;
        ModeResult {
            ratio: round4(figures::ratio(self.pages, self.bytes_out)),
            effective_ratio: round4(figures::effective_ratio(
                self.pages,
                same_filled,
                self.bytes_out,
            )),
            incompressible_pages: self.incompressible,
            pages: self.pages,
            bytes_in,
            bytes_out: self.bytes_out,
        }
    }
}

/// One mode's result, as reports show it.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ModeResult {
    /// Σ uncompressed / Σ compressed (incompressible pages at 4096).
    pub ratio: f64,
    /// Ratio with zero/same-filled pages stored at ~0 bytes (see the module doc).
    pub effective_ratio: f64,
    /// Pages whose output reached 4096 bytes.
    pub incompressible_pages: u64,
    /// Pages evaluated.
    pub pages: u64,
    /// Uncompressed bytes.
    pub bytes_in: u64,
    /// Compressed bytes.
    pub bytes_out: u64,
}

/// What to measure on which pages.
#[derive(Clone, Debug)]
pub struct EvalSpec<'a> {
    /// The split that tells pages apart.
    pub split: Split,
    /// Only pages of this part (`None`: every page).
    pub part: Option<Part>,
    /// Of those, only the pages this second split puts in its test part:
    /// a deterministic, hash-based sample independent of `split` (`None`:
    /// every page of the part).
    pub sample: Option<Split>,
    /// The main table: encoded at each of `levels` as `canned-<level>`,
    /// decoded and compared.
    pub table: Option<&'a Table>,
    /// Levels for the main table.
    pub levels: Vec<Level>,
    /// More tables, measured exactly at the fast parse as `canned:<name>`.
    pub fast_tables: Vec<(String, &'a Table)>,
    /// Best-of-K (`best-of-<K>`): indices into `fast_tables`; each page
    /// takes the smallest of those tables' outputs.
    pub best_of: Option<Vec<usize>>,
    /// Also measure `fixed`, `dynamic-fast` and `dynamic-best`.
    pub baselines: bool,
    /// Peer compressors.
    pub peers: Vec<PeerKind>,
    /// Dictionary for the peers that take one (`zstd-1-dict`, `lz4-dict`).
    pub dictionary: Option<&'a [u8]>,
    /// Decode every output of every codec and compare with the page.
    pub verify: bool,
}

impl<'a> EvalSpec<'a> {
    /// The spec `cannery train` uses for one workload's test pages.
    pub fn held_out(split: Split, table: Option<&'a Table>) -> EvalSpec<'a> {
        EvalSpec {
            split,
            part: Some(Part::Test),
            sample: None,
            table,
            levels: Level::ALL.to_vec(),
            fast_tables: Vec::new(),
            best_of: None,
            baselines: true,
            peers: default_peers(),
            dictionary: None,
            verify: true,
        }
    }

    /// The modes measured, in the order results are kept.
    pub fn mode_keys(&self) -> Vec<ModeKey> {
        let mut v = Vec::new();
        if self.table.is_some() {
            v.extend(self.levels.iter().map(|&l| ModeKey::Canned(l)));
        }
        for (n, _) in &self.fast_tables {
            v.push(ModeKey::table(n.clone()));
        }
        if let Some(idx) = &self.best_of {
            v.push(ModeKey::BestOf(idx.len()));
        }
        if self.baselines {
            v.extend([
                ModeKey::Fixed,
                ModeKey::Dynamic(Level::Fast),
                ModeKey::Dynamic(Level::Best),
            ]);
        }
        for p in &self.peers {
            if !p.needs_dictionary() || self.dictionary.is_some() {
                v.push(ModeKey::Peer(p.clone()));
            }
        }
        v
    }
}

/// The peers of every held-out report: zstd -1/-3, zstd -1 with a
/// dictionary, lz4, libdeflate -1/-6.
pub fn default_peers() -> Vec<PeerKind> {
    vec![
        PeerKind::Zstd(1),
        PeerKind::Zstd(3),
        PeerKind::ZstdDict(1),
        PeerKind::Lz4,
        PeerKind::Lz4Dict,
        PeerKind::Libdeflate(1),
        PeerKind::Libdeflate(6),
    ]
}

/// Results of one evaluation.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// Tallies by mode.
    pub tallies: BTreeMap<ModeKey, Tally>,
    /// Pages evaluated.
    pub pages: u64,
    /// Zero/same-filled pages among the selected part of the stream.
    pub same_filled_seen: u64,
    /// The whole stream's same-filled pages (seen in every part, plus those
    /// the source counted without yielding) beside its other pages.
    pub same_filled: SameFilledShare,
    /// Symbol statistics of the evaluated pages at the fast parse.
    pub counts: Histogram,
}

impl Evaluation {
    /// Same-filled pages attributed to the evaluated pages: their share of
    /// the stream's (`crate::figures`).
    pub fn same_filled_attributed(&self) -> f64 {
        self.same_filled.attributed(self.pages)
    }

    /// Results by mode, with [`Evaluation::same_filled_attributed`] pages
    /// in the effective ratio.
    pub fn results(&self) -> BTreeMap<ModeKey, ModeResult> {
        let same = self.same_filled_attributed();
        self.tallies
            .iter()
            .map(|(k, t)| (k.clone(), t.result(same)))
            .collect()
    }
}

struct Worker {
    parser: Parser,
    canned: Vec<Encoder>,
    canned_dec: Option<Decoder>,
    std_dec: Decoder,
    fixed: Encoder,
    dyn_fast: Encoder,
    dyn_best: Encoder,
    peers: Vec<Peer>,
    out: Vec<u8>,
    back: Vec<u8>,
}

/// Pages measured together in parallel (16 pages per core on a 4-core
/// machine; 256 KiB of page copies).
const EVAL_BATCH: usize = 64;

/// Canned bytes of a page at the fast parse from its counts (None: ≥ 4096).
pub fn fast_canned_size(bits: u64) -> Option<usize> {
    let n = bits.div_ceil(8) as usize;
    (n < PAGE_SIZE).then_some(n)
}

fn lengths316(t: &Table) -> [u8; 316] {
    t.lengths().to_bytes()
}

/// Evaluates the pages of `source` selected by `spec`, in parallel chunks.
pub fn evaluate<S: PageSource + ?Sized>(
    source: &S,
    spec: &EvalSpec<'_>,
) -> Result<Evaluation, TrainError> {
    let names = spec.mode_keys();
    let peers: Vec<PeerKind> = spec
        .peers
        .iter()
        .filter(|p| !p.needs_dictionary() || spec.dictionary.is_some())
        .cloned()
        .collect();
    // Build one worker up front so configuration errors surface typed.
    let make = || -> Result<Worker, TrainError> {
        let canned = match spec.table {
            Some(t) => spec
                .levels
                .iter()
                .map(|&l| Encoder::new(Mode::Canned, Format::Iaa, l, Some(t)))
                .collect::<Result<Vec<_>, _>>()?,
            None => Vec::new(),
        };
        Ok(Worker {
            parser: Parser::new(ParseModel::Fast, None),
            canned,
            canned_dec: spec
                .table
                .and_then(|t| Decoder::new(Mode::Canned, Format::Iaa, Some(t))),
            std_dec: Decoder::new(Mode::Fixed, Format::Deflate, None).expect("no table needed"),
            fixed: Encoder::new(Mode::Fixed, Format::Deflate, Level::Fast, None)?,
            dyn_fast: Encoder::new(Mode::Dynamic, Format::Deflate, Level::Fast, None)?,
            dyn_best: Encoder::new(Mode::Dynamic, Format::Deflate, Level::Best, None)?,
            peers: peers
                .iter()
                .map(|k| Peer::new(k.clone(), spec.dictionary))
                .collect::<Result<Vec<_>, _>>()?,
            out: Vec::with_capacity(2 * PAGE_SIZE),
            back: vec![0u8; PAGE_SIZE],
        })
    };
    let pool: Mutex<Vec<Worker>> = Mutex::new(vec![make()?]);
    let fast_lengths: Vec<[u8; 316]> = spec
        .fast_tables
        .iter()
        .map(|(_, t)| lengths316(t))
        .collect();
    let own_lengths = spec.table.map(lengths316);
    let fast_level_index = spec.levels.iter().position(|&l| l == Level::Fast);

    let mut tallies = vec![Tally::default(); names.len()];
    let mut counts = Histogram::zero(Settings::new(ParseModel::Fast));
    let mut pages = 0u64;
    let mut same_seen = 0u64;
    let mut index_base = 0u64;
    // Selected pages wait here (with their index in the stream) until a
    // batch is full: a sample picks few pages per chunk, and measuring a
    // handful of slow pages at a time leaves a core idle at every chunk's end.
    let mut batch: Vec<(u64, Vec<u8>)> = Vec::with_capacity(EVAL_BATCH);
    let mut measure = |batch: &mut Vec<(u64, Vec<u8>)>| -> Result<(), TrainError> {
        type PageOut = Result<(Vec<Option<usize>>, SymbolCounts), TrainError>;
        let results: Vec<PageOut> = batch
            .par_iter()
            .with_max_len(1)
            .map(|(index, p)| {
                let mut w = match pool.lock().expect("worker pool").pop() {
                    Some(w) => w,
                    None => make().map_err(|e| TrainError::Source(e.to_string().into()))?,
                };
                let out = measure_page(
                    &mut w,
                    p,
                    *index,
                    spec,
                    &fast_lengths,
                    own_lengths.as_ref(),
                    fast_level_index,
                );
                pool.lock().expect("worker pool").push(w);
                out
            })
            .collect();
        batch.clear();
        for r in results {
            let (sizes, c) = r?;
            pages += 1;
            counts.counts.add(&c)?;
            counts.pages += 1;
            for (t, s) in tallies.iter_mut().zip(sizes) {
                t.add(s);
            }
        }
        Ok(())
    };
    // Every page of the stream, selected or not, for the workload's
    // same-filled share (the effective ratio's attribution).
    let (mut all_same, mut all_other) = (0u64, 0u64);
    for_each_chunk(source, |chunk| {
        // (selected, same-filled) per page.
        let marks: Vec<(bool, bool)> = chunk
            .par_iter()
            .map(|p| {
                let selected = spec.part.is_none_or(|part| spec.split.part(p) == part)
                    && spec.sample.is_none_or(|s| s.part(p) == Part::Test);
                (selected, same_filled(p).is_some())
            })
            .collect();
        for (i, &(selected, same)) in marks.iter().enumerate() {
            if same {
                all_same += 1;
            } else {
                all_other += 1;
            }
            match (selected, same) {
                (false, _) => {}
                (true, true) => same_seen += 1,
                (true, false) => batch.push((index_base + i as u64, chunk[i].clone())),
            }
        }
        index_base += chunk.len() as u64;
        if batch.len() >= EVAL_BATCH {
            measure(&mut batch)?;
        }
        Ok(())
    })?;
    measure(&mut batch)?;
    counts.same_filled_pages = same_seen;
    let unstored = source.uncounted_same_filled();
    Ok(Evaluation {
        tallies: names.into_iter().zip(tallies).collect(),
        pages,
        same_filled_seen: same_seen,
        same_filled: SameFilledShare::new((all_same + unstored) as f64, all_other),
        counts,
    })
}

fn measure_page(
    w: &mut Worker,
    page: &[u8],
    index: u64,
    spec: &EvalSpec<'_>,
    fast_lengths: &[[u8; 316]],
    own_lengths: Option<&[u8; 316]>,
    fast_level_index: Option<usize>,
) -> Result<(Vec<Option<usize>>, SymbolCounts), TrainError> {
    let mut sizes = Vec::new();
    let mut c = SymbolCounts::default();
    w.parser.count(page, &mut c)?;
    let dense: [u64; 316] = std::array::from_fn(|s| {
        if s < 286 {
            c.litlen[s]
        } else {
            c.dist[s - 286]
        }
    });
    let bits = |l: &[u8; 316]| -> u64 {
        dense
            .iter()
            .zip(l)
            .map(|(&n, &len)| n * len as u64)
            .sum::<u64>()
            + c.extra_bits
    };
    let round_trip = |name: &str, data: &[u8], back: &mut Vec<u8>, dec: &Decoder| match dec
        .decompress(data, back)
    {
        Ok(n) if n == page.len() && back[..n] == *page => Ok(()),
        Ok(n) => Err(TrainError::RoundTrip {
            codec: name.into(),
            index,
            what: format!("decoded to {n} different bytes"),
        }),
        Err(e) => Err(TrainError::RoundTrip {
            codec: name.into(),
            index,
            what: format!("does not decode: {e}"),
        }),
    };
    if spec.table.is_some() {
        for (li, enc) in w.canned.iter_mut().enumerate() {
            let size = match enc.compress(page, &mut w.out)? {
                Outcome::Compressed(n) => {
                    if spec.verify {
                        let dec = w.canned_dec.as_ref().expect("canned decoder");
                        round_trip("canned", &w.out, &mut w.back, dec)?;
                    }
                    Some(n)
                }
                Outcome::Incompressible => None,
            };
            if Some(li) == fast_level_index {
                let predicted = fast_canned_size(bits(own_lengths.expect("own table")));
                if predicted != size {
                    return Err(TrainError::RoundTrip {
                        codec: "canned-fast".into(),
                        index,
                        what: format!("size {size:?} differs from the size model {predicted:?}"),
                    });
                }
            }
            sizes.push(size);
        }
    }
    let fast: Vec<Option<usize>> = fast_lengths
        .iter()
        .map(|l| fast_canned_size(bits(l)))
        .collect();
    sizes.extend(fast.iter().copied());
    if let Some(idx) = &spec.best_of {
        sizes.push(idx.iter().filter_map(|&i| fast[i]).min());
    }
    if spec.baselines {
        for (name, enc) in [
            ("fixed", &mut w.fixed),
            ("dynamic-fast", &mut w.dyn_fast),
            ("dynamic-best", &mut w.dyn_best),
        ] {
            let size = match enc.compress(page, &mut w.out)? {
                Outcome::Compressed(n) => {
                    if spec.verify {
                        round_trip(name, &w.out, &mut w.back, &w.std_dec)?;
                    }
                    Some(n)
                }
                Outcome::Incompressible => None,
            };
            sizes.push(size);
        }
    }
    for peer in &mut w.peers {
        let size = peer.compress(page, &mut w.out)?;
        if spec.verify && size.is_some() {
            let n = peer.decompress(&w.out, &mut w.back)?;
            if n != page.len() || w.back[..n] != *page {
                return Err(TrainError::RoundTrip {
                    codec: peer.kind().to_string(),
                    index,
                    what: "decoded to different bytes".into(),
                });
            }
        }
        sizes.push(size);
    }
    Ok((sizes, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mode_key::key;
    use cannery_trainer::refine::train_workload;
    use cannery_trainer::testutil::{synthetic_pages, workload_pages};
    use cannery_trainer::train::table_from_histogram;
    use cannery_trainer::TrainOptions;

    #[test]
    fn every_trained_table_round_trips_every_test_page() {
        let pages = synthetic_pages(300, 31);
        let tr = train_workload("w", &pages, &TrainOptions::default()).unwrap();
        let k = Table::kernel_2024();
        let mut spec = EvalSpec::held_out(Split::default(), Some(&tr.table));
        spec.fast_tables.push(("kernel-2024".into(), &k));
        let ev = evaluate(&pages, &spec).unwrap();
        assert!(ev.pages > 30);
        let r = ev.results();
        for l in ["canned-fast", "canned-default", "canned-best"] {
            assert_eq!(r[&key(l)].pages, ev.pages, "{l}");
        }
        // Random pages are in the mix: they must be incompressible for canned modes.
        assert!(r[&key("canned-fast")].incompressible_pages > 0);
        assert!(r[&key("canned-best")].ratio >= r[&key("canned-fast")].ratio * 0.99);
        assert!(["zstd-3", "libdeflate-6", "fixed"]
            .iter()
            .all(|m| r.contains_key(&key(m))));
        assert!(
            !r.contains_key(&key("zstd-1-dict")),
            "no dictionary was given"
        );
    }

    #[test]
    fn size_model_matches_the_encoder_for_any_table() {
        // The fast-parse size formula, used for extra tables, against real encodes.
        let pages = synthetic_pages(120, 32);
        let tables = [Table::kernel_2024(), Table::fixed()];
        for t in &tables {
            let mut e = Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(t)).unwrap();
            let mut p = Parser::new(ParseModel::Fast, None);
            let mut out = Vec::new();
            for page in &pages {
                let mut c = SymbolCounts::default();
                p.count(page, &mut c).unwrap();
                let model = fast_canned_size(c.bits(&t.lengths().litlen, &t.lengths().dist));
                let real = match e.compress(page, &mut out).unwrap() {
                    Outcome::Compressed(n) => Some(n),
                    Outcome::Incompressible => None,
                };
                assert_eq!(model, real);
            }
        }
    }

    #[test]
    fn effective_ratio_counts_same_filled_pages_as_free() {
        let t = Tally {
            pages: 10,
            bytes_out: 10 * 1024,
            incompressible: 0,
        };
        let r = t.result(10.0);
        assert_eq!(r.ratio, 4.0);
        assert_eq!(r.effective_ratio, 8.0);
        let mut t = Tally::default();
        t.add(None);
        t.add(Some(4096));
        t.add(Some(100));
        assert_eq!((t.incompressible, t.bytes_out), (2, 8192 + 100));
    }

    #[test]
    fn drift_is_zero_for_the_corpus_own_table_and_flags_a_foreign_one() {
        let pages = workload_pages(200, 1, 33);
        let h = cannery_trainer::scan::histogram_of(&pages, ParseModel::Fast).unwrap();
        let opts = TrainOptions::default();
        let own = table_from_histogram(&h, &opts, "own").unwrap();
        let d = drift(&own, &h, &opts).unwrap();
        assert_eq!(d.drift_bits_per_page, 0.0);
        assert!(!d.retrain);
        let other =
            cannery_trainer::scan::histogram_of(&workload_pages(200, 0, 34), ParseModel::Fast)
                .unwrap();
        let foreign = table_from_histogram(&other, &opts, "other").unwrap();
        let d = drift(&foreign, &h, &opts).unwrap();
        assert!(
            d.drift_percent > RETRAIN_THRESHOLD_PERCENT && d.retrain,
            "{d:?}"
        );
    }

    #[test]
    fn no_table_beats_the_ceiling_and_a_table_of_the_same_pages_reaches_it() {
        let pages = workload_pages(200, 2, 35);
        let h = cannery_trainer::scan::histogram_of(&pages, ParseModel::Fast).unwrap();
        let opts = TrainOptions::default();
        let own = table_from_histogram(&h, &opts, "own").unwrap();
        let others = [
            Table::kernel_2024(),
            table_from_histogram(
                &cannery_trainer::scan::histogram_of(&workload_pages(200, 0, 36), ParseModel::Fast)
                    .unwrap(),
                &opts,
                "other",
            )
            .unwrap(),
            own.clone(),
        ];
        for t in &others {
            let c = Ceiling::of(t, &h, &opts);
            assert_eq!(c.pages, 200);
            assert_eq!(
                c.table_bits,
                cannery_trainer::train::bits_under(&h.counts, t)
            );
            assert!(c.optimal_bits <= c.table_bits, "{c:?}");
            assert!(c.ceiling_gain_percent >= c.table_gain_percent, "{c:?}");
            // Fixed: the RFC code plus 3 header bits per page.
            assert_eq!(
                c.fixed_bits,
                cannery_trainer::train::bits_under(&h.counts, &Table::fixed()) + 3 * 200
            );
        }
        // The smoothed table trained on these very pages is within 0.05 %
        // of the ceiling; a table of other pages is well below it.
        let c = Ceiling::of(&own, &h, &opts);
        assert!(
            (c.table_bits - c.optimal_bits) * 2000 <= c.optimal_bits,
            "{c:?}"
        );
        let c = Ceiling::of(&others[1], &h, &opts);
        assert!(c.ceiling_gain_percent > c.table_gain_percent + 1.0, "{c:?}");
        // Summing keeps raw totals.
        let s = Ceiling::sum(&[c, c]);
        assert_eq!((s.pages, s.optimal_bits), (400, 2 * c.optimal_bits));
        assert_eq!(s.ceiling_gain_percent, c.ceiling_gain_percent);
    }
}
