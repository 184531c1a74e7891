//! Pages → histograms: parses every page on its own with the codec's one
//! match finder (history = the page, at most 4096 bytes) and counts its
//! symbols, in parallel over the pages of each chunk (rayon), streaming the
//! source so memory does not grow with the corpus.
//!
//! Zero and same-filled pages are counted, not parsed: zswap never hands
//! them to a compressor. [`gather_process`] takes the pages straight from a
//! live process (through `cannery_capture`'s capturer), chunk by chunk,
//! keeping nothing but the histogram. This module does not build tables
//! ([`crate::train`]) or split pages by itself: callers pass a filter.

use rayon::prelude::*;

use cannery_codec::lz77::{Costs, MatchFinder};
use cannery_codec::{Level, Table, Token};

use crate::error::TrainError;
use crate::histogram::{Histogram, ParseModel, Settings, SymbolCounts};
use crate::pages::{for_each_chunk, same_filled, PageSource};

/// Pages in one rayon task. Its parser (a match finder of about 137 KB)
/// is made once per rayon split (`map_init`) and serves all of the
/// split's tasks.
const TASK_PAGES: usize = 16;

/// A reusable parser for one thread: cannery's match finder with its token
/// buffer and pricing (for `best`), or another library's statistics
/// ([`crate::target`]) for a library parse.
pub struct Parser {
    model: ParseModel,
    own: Option<Own>,
    /// A library's compressor, made at the first page (making it can fail).
    library: Option<cannery_engines::library::Parser>,
}

/// cannery's own parse at one level.
struct Own {
    finder: MatchFinder,
    tokens: Vec<Token>,
    level: Level,
    costs: Option<Costs>,
}

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Parser({})", self.model)
    }
}

impl Parser {
    /// A parser; `pricing` gives `best` its symbol costs (the fixed code if `None`).
    pub fn new(model: ParseModel, pricing: Option<&Table>) -> Parser {
        Parser {
            model,
            own: model.level().map(|level| Own {
                finder: MatchFinder::new(),
                tokens: Vec::with_capacity(4096),
                level,
                costs: pricing.map(|t| Costs::from_lengths(t.lengths())),
            }),
            library: None,
        }
    }

    /// Parses one page and adds its symbols (and end-of-block) to `counts`,
    /// without keeping its tokens.
    pub fn count(&mut self, page: &[u8], counts: &mut SymbolCounts) -> Result<(), TrainError> {
        match &mut self.own {
            Some(o) => {
                o.finder.parse_into(page, o.level, o.costs.as_ref(), counts);
                counts.end_page();
            }
            None => {
                let lib = match &mut self.library {
                    Some(l) => l,
                    None => self
                        .library
                        .insert(crate::target::library_parser(self.model)?),
                };
                counts.add_library(&lib.count(page)?);
            }
        }
        Ok(())
    }

    /// Parses one page and returns its tokens (cannery's parses only: a
    /// library's parse gives counts).
    pub fn parse(&mut self, page: &[u8]) -> Result<&[Token], TrainError> {
        let o = self
            .own
            .as_mut()
            .ok_or(TrainError::NoTokens(self.model.name()))?;
        o.finder
            .parse(page, o.level, o.costs.as_ref(), &mut o.tokens);
        Ok(&o.tokens)
    }
}

/// The settings a histogram gathered with `model` and `pricing` records.
pub fn settings_for(model: ParseModel, pricing: Option<&Table>) -> Settings {
    let mut s = Settings::new(model);
    if model == ParseModel::Best {
        s.cost_table = Some(
            pricing
                .map(|t| t.id())
                .unwrap_or_else(|| Table::fixed().id()),
        );
    }
    s
}

/// Histogram of one slice of pages, in parallel, skipping same-filled pages
/// (counted) and pages `keep` rejects (not counted).
pub fn gather_pages<P: AsRef<[u8]> + Sync>(
    pages: &[P],
    model: ParseModel,
    pricing: Option<&Table>,
    keep: &(dyn Fn(&[u8]) -> bool + Sync),
) -> Result<Histogram, TrainError> {
    model.check_available()?;
    let settings = settings_for(model, pricing);
    let partials: Vec<Result<(SymbolCounts, u64, u64), TrainError>> = pages
        .par_chunks(TASK_PAGES)
        .map_init(
            || Parser::new(model, pricing),
            |parser, task| {
                let mut counts = SymbolCounts::default();
                let (mut parsed, mut same) = (0u64, 0u64);
                for p in task {
                    let p = p.as_ref();
                    if !keep(p) {
                        continue;
                    }
                    if same_filled(p).is_some() {
                        same += 1;
                        continue;
                    }
                    parser.count(p, &mut counts)?;
                    parsed += 1;
                }
                Ok((counts, parsed, same))
            },
        )
        .collect();
    let mut h = Histogram::zero(settings);
    for partial in partials {
        let (counts, parsed, same) = partial?;
        // Sums of page counts from one source cannot overflow u64 in practice.
        h.counts.add(&counts).expect("page counts fit in u64");
        h.pages += parsed;
        h.same_filled_pages += same;
    }
    Ok(h)
}

/// Histogram of every page of `source` that `keep` accepts, streaming the
/// source in chunks. Same-filled pages the source counted without yielding
/// them are added when `keep` is not a filter (`count_uncounted`).
pub fn gather<S: PageSource + ?Sized>(
    source: &S,
    model: ParseModel,
    pricing: Option<&Table>,
    keep: &(dyn Fn(&[u8]) -> bool + Sync),
) -> Result<Histogram, TrainError> {
    let mut h = Histogram::zero(settings_for(model, pricing));
    for_each_chunk(source, |chunk| {
        h.merge(&gather_pages(chunk, model, pricing, keep)?)?;
        Ok(())
    })?;
    Ok(h)
}

/// [`gather`] over every page, adding the source's uncounted same-filled pages:
/// what `cannery stats` writes.
pub fn gather_all<S: PageSource + ?Sized>(
    source: &S,
    model: ParseModel,
    pricing: Option<&Table>,
) -> Result<Histogram, TrainError> {
    let mut h = gather(source, model, pricing, &|_| true)?;
    h.same_filled_pages += source.uncounted_same_filled();
    Ok(h)
}

/// [`gather_all`] over a corpus's workloads, or the one named `workload`,
/// merged into one histogram; `done` is called after each workload.
pub fn gather_corpus(
    corpus: &crate::corpus::CorpusSource,
    workload: Option<&str>,
    model: ParseModel,
    pricing: Option<&Table>,
    done: &mut dyn FnMut(),
) -> Result<Histogram, TrainError> {
    let chosen = corpus
        .workloads
        .iter()
        .filter(|(n, _)| workload.is_none_or(|w| w == n));
    let mut total: Option<Histogram> = None;
    for (_, source) in chosen {
        let h = gather_all(source, model, pricing)?;
        done();
        total = Some(match total {
            None => h,
            Some(t) => t.merged(&h)?,
        });
    }
    total.ok_or_else(|| TrainError::NoWorkload {
        name: workload.unwrap_or_default().to_string(),
        has: corpus.workloads.iter().map(|(n, _)| n.clone()).collect(),
    })
}

/// Collects a chunk of pages from a capture and folds it into a histogram.
struct HistogramSink<'a> {
    model: ParseModel,
    pricing: Option<&'a Table>,
    chunk: Vec<Vec<u8>>,
    hist: Histogram,
}

impl HistogramSink<'_> {
    fn flush(&mut self) -> Result<(), TrainError> {
        if !self.chunk.is_empty() {
            let h = gather_pages(&self.chunk, self.model, self.pricing, &|_| true)?;
            self.hist.merge(&h)?;
            self.chunk.clear();
        }
        Ok(())
    }
}

impl cannery_capture::PageSink for HistogramSink<'_> {
    fn begin_process(
        &mut self,
        _sample: u32,
        _pid: u32,
        _comm: &str,
    ) -> cannery_capture::Result<()> {
        Ok(())
    }

    fn page(
        &mut self,
        _addr: u64,
        _region: cannery_capture::RegionKind,
        data: &[u8],
    ) -> cannery_capture::Result<()> {
        self.chunk.push(data.to_vec());
        if self.chunk.len() >= crate::pages::CHUNK_PAGES {
            self.flush().map_err(|e| {
                cannery_capture::Error::new(cannery_capture::ErrorKind::InvalidInput, e.to_string())
            })?;
        }
        Ok(())
    }
}

/// The histogram of one sample of live process `pid`'s resident anonymous
/// pages (and its descendants' with `children`): pages go from the capture
/// library into the histogram in memory, chunk by chunk, and nothing else
/// is kept. Zero and same-filled pages the capture counted are added.
pub fn gather_process(
    pid: u32,
    children: bool,
    model: ParseModel,
    pricing: Option<&Table>,
) -> Result<Histogram, TrainError> {
    let opts = cannery_capture::CaptureOptions {
        include_children: children,
        ..cannery_capture::CaptureOptions::default()
    };
    let mut capturer = cannery_capture::Capturer::new(opts);
    let mut sink = HistogramSink {
        model,
        pricing,
        chunk: Vec::new(),
        hist: Histogram::zero(settings_for(model, pricing)),
    };
    let report = capturer
        .sample(pid, None, &mut sink)
        .map_err(|e| TrainError::Source(format!("cannot read process {pid}: {e}").into()))?;
    sink.flush()?;
    let mut h = sink.hist;
    h.same_filled_pages += report.counts.zero + report.counts.same_filled;
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::synthetic_pages;

    #[test]
    fn parallel_gathering_equals_a_sequential_count() {
        let pages = synthetic_pages(300, 1);
        let h = gather_all(&pages, ParseModel::Fast, None).unwrap();
        let mut seq = Histogram::zero(Settings::new(ParseModel::Fast));
        let mut p = Parser::new(ParseModel::Fast, None);
        for page in &pages {
            if same_filled(page).is_none() {
                let toks = p.parse(page).unwrap().to_vec();
                seq.add_page(&toks);
            } else {
                seq.same_filled_pages += 1;
            }
        }
        assert_eq!(h, seq);
        assert!(
            h.same_filled_pages > 0,
            "synthetic pages include zero pages"
        );
        assert!(h.check().is_ok());
    }

    #[test]
    fn thread_count_and_page_order_do_not_change_the_histogram() {
        let pages = synthetic_pages(400, 2);
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| gather_all(&pages, ParseModel::Default, None).unwrap());
        let mut rev = pages.clone();
        rev.reverse();
        let three = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap()
            .install(|| gather_all(&rev, ParseModel::Default, None).unwrap());
        assert_eq!(one, three);
    }

    #[test]
    fn best_parse_records_its_pricing_table() {
        let pages = synthetic_pages(20, 3);
        let k = Table::kernel_2024();
        let h = gather_all(&pages, ParseModel::Best, Some(&k)).unwrap();
        assert_eq!(h.settings().cost_table.as_deref(), Some(k.id().as_str()));
        let plain = gather_all(&pages, ParseModel::Fast, None).unwrap();
        assert_eq!(plain.settings().cost_table, None);
    }
}
