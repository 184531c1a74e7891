//! The one options type of training, [`TrainOptions`]: which parse gathers
//! the statistics, how a histogram becomes a table (smoothing, which
//! distance symbols are coded, the length limit and QPL's rule, the fewest
//! pages), the train/test split, and what a workload's scan keeps beside
//! its histograms (refinements, dictionary and clustering samples). Every
//! step of the trainer takes it whole and reads the fields it needs.

use cannery_codec::constants::MAX_CODE_LEN;

use crate::error::MIN_TRAINING_PAGES;
use crate::histogram::ParseModel;
use crate::pages::Split;
use crate::smoothing::Smoothing;

/// Largest dictionary trained (for the `zstd-1-dict` and `lz4-dict`
/// peers, and written by `train` for zram): at most 64 KiB, the most the
/// kernel's lz4 backend loads (zstd's trainer defaults to 110 KiB).
pub const DICTIONARY_SIZE: usize = 32 * 1024;

/// How pages become statistics and statistics become a table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrainOptions {
    /// The parse the statistics are gathered with (and refined with, for
    /// `best`).
    pub parse: ParseModel,
    /// Smoothing of zero and rare counts; `None`: the parse's default
    /// ([`Smoothing::for_parse`], resolved by [`TrainOptions::for_parse`]).
    pub smoothing: Option<Smoothing>,
    /// Code all 30 distance symbols, not just 0..=23 (implied by
    /// `qpl_compatible`: see [`TrainOptions::codes_all_distances`]).
    pub all_distances: bool,
    /// Longest code (15 for deflate and IAA).
    pub max_len: u8,
    /// Also make QPL (and stock ISA-L) load the table unchanged: every
    /// symbol coded (the smoothing sees to that) and the 56-bit budget.
    pub qpl_compatible: bool,
    /// Fewest pages a histogram must hold to train a table.
    pub min_pages: u64,
    /// Train/test split.
    pub split: Split,
    /// Most `best` refinement iterations.
    pub max_refinements: usize,
    /// Training pages kept as zstd dictionary samples (0: none). The
    /// default, 1024 pages (4 MiB), is over 100 times the 32 KiB dictionary,
    /// zstd's own sizing advice.
    pub dictionary_samples: usize,
    /// Largest dictionary zstd's trainer makes, bytes (at most 64 KiB:
    /// the kernel's lz4 backend loads no more).
    pub dictionary_size: usize,
    /// Training pages whose symbol counts are kept for clustering (0: none).
    pub cluster_samples: usize,
}

impl Default for TrainOptions {
    fn default() -> Self {
        TrainOptions {
            parse: ParseModel::Fast,
            smoothing: None,
            all_distances: false,
            max_len: MAX_CODE_LEN,
            qpl_compatible: false,
            min_pages: MIN_TRAINING_PAGES,
            split: Split::default(),
            max_refinements: 4,
            dictionary_samples: 1024,
            dictionary_size: DICTIONARY_SIZE,
            cluster_samples: 0,
        }
    }
}

impl TrainOptions {
    /// The table options `train`, `stats`, `eval` and the Python package
    /// take: a smoothing, every distance coded or not, QPL-compatible or
    /// not (which codes every distance too); the rest as by default.
    pub fn with_table(
        smoothing: Option<Smoothing>,
        all_distances: bool,
        qpl_compatible: bool,
    ) -> TrainOptions {
        TrainOptions {
            smoothing,
            all_distances,
            qpl_compatible,
            ..TrainOptions::default()
        }
    }

    /// These options for tables trained on `parse`: its default smoothing
    /// unless one was asked for, and QPL-compatible for a library's parse
    /// (that library must load the table unchanged).
    pub fn for_parse(&self, parse: ParseModel) -> TrainOptions {
        let mut o = *self;
        o.smoothing = Some(self.smoothing.unwrap_or(Smoothing::for_parse(parse)));
        if parse.feature().is_some() {
            o.qpl_compatible = true;
        }
        o
    }

    /// The smoothing these options use (`None` resolves to the fast
    /// parse's default; [`TrainOptions::for_parse`] resolves it for others).
    pub fn smoothing(&self) -> Smoothing {
        self.smoothing.unwrap_or(Smoothing::DEFAULT)
    }

    /// True if every distance symbol gets a code: asked for, or needed for
    /// QPL to load the table unchanged.
    pub fn codes_all_distances(&self) -> bool {
        self.all_distances || self.qpl_compatible
    }

    /// The table parameters recorded in a table's provenance.
    pub fn provenance_map(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert("smoothing".into(), self.smoothing().to_string().into());
        m.insert("all_distances".into(), self.codes_all_distances().into());
        m.insert("max_code_length".into(), self.max_len.into());
        m.insert("qpl_compatible".into(), self.qpl_compatible.into());
        m
    }
}
