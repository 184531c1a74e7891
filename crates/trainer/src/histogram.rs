//! Symbol statistics of many pages: the unit of fleet-scale training.
//!
//! A [`Histogram`] counts the 286 literal/length and 30 distance symbols of
//! independently parsed pages (one end-of-block per page), plus the pages
//! parsed, the same-filled pages skipped and the extra bits. It is a monoid:
//! [`Histogram::zero`] is the identity and [`Histogram::merge`] is
//! associative and commutative (integer sums), and it refuses to merge
//! histograms made under different [`Settings`] (parse model, window, the
//! table that priced a `best` parse). Hosts ship histograms, never pages.
//!
//! The serialized form is JSON, versioned (`"format": "cannery-histogram",
//! "version": 1`):
//!
//! ```json
//! { "format": "cannery-histogram", "version": 1,
//!   "parse": "fast", "window": 4096, "cost_table": null,
//!   "pages": 1200, "same_filled_pages": 40, "extra_bits": 51234,
//!   "litlen": [286 integers], "dist": [30 integers] }
//! ```
//!
//! On load the counts are checked for consistency (one end-of-block per
//! page; as many distance symbols as length symbols), so a damaged or
//! hand-edited file is an error rather than a silently wrong table. Parsing
//! pages into histograms is [`crate::gather`]'s job.

use serde::{Deserialize, Serialize};

use cannery_codec::constants::{END_OF_BLOCK, NUM_DIST, NUM_LITLEN, WINDOW_SIZE};
use cannery_codec::lz77::{feed, Level, TokenSink};
use cannery_codec::token::{dist_extra, dist_symbol, length_extra, length_symbol, Token};

/// Format name of the serialized form.
pub const FORMAT: &str = "cannery-histogram";
/// Version of the serialized form this build writes and reads.
pub const VERSION: u32 = 1;

/// How pages were parsed into tokens: one of cannery's own parses (the
/// codec's levels) or another compressor's, for tables meant for that
/// compressor (`--target`). Histograms of different parses never merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParseModel {
    /// Greedy, short hash chains: cannery's model of what IAA hardware does
    /// ([`Level::Fast`], `--target iaa`). The default. Files written before
    /// it was named `fast` say `iaa`, which still reads.
    #[serde(alias = "iaa")]
    Fast,
    /// Lazy matching ([`Level::Default`]).
    Default,
    /// Cost-aware shortest-path parse priced by a table ([`Level::Best`]).
    Best,
    /// The symbols QPL's canned compressor emits at its default level
    /// (software path; feature `qpl`; [`crate::target`] says why not QPL's
    /// statistics function).
    QplDefault,
    /// The same at QPL's high level (feature `qpl`).
    QplHigh,
    /// The symbols ISA-L's level-0 compressor emits (feature `isal`).
    Isal,
}

impl ParseModel {
    /// Every parse model, cannery's first.
    pub const ALL: [ParseModel; 6] = [
        ParseModel::Fast,
        ParseModel::Default,
        ParseModel::Best,
        ParseModel::QplDefault,
        ParseModel::QplHigh,
        ParseModel::Isal,
    ];

    /// The codec level that implements this parse, for cannery's own
    /// parses; `None` for another library's.
    pub fn level(self) -> Option<Level> {
        match self {
            ParseModel::Fast => Some(Level::Fast),
            ParseModel::Default => Some(Level::Default),
            ParseModel::Best => Some(Level::Best),
            ParseModel::QplDefault | ParseModel::QplHigh | ParseModel::Isal => None,
        }
    }

    /// The parse model of a codec level (one name each: `fast`,
    /// `default`, `best`).
    pub fn from_level(level: Level) -> ParseModel {
        match level {
            Level::Fast => ParseModel::Fast,
            Level::Default => ParseModel::Default,
            Level::Best => ParseModel::Best,
        }
    }

    /// Its name in files and reports.
    pub fn name(self) -> &'static str {
        match self {
            ParseModel::Fast => "fast",
            ParseModel::Default => "default",
            ParseModel::Best => "best",
            ParseModel::QplDefault => "qpl-default",
            ParseModel::QplHigh => "qpl-high",
            ParseModel::Isal => "isal",
        }
    }

    /// The cargo feature this cannery needs to gather this parse, if any.
    pub fn feature(self) -> Option<&'static str> {
        match self {
            ParseModel::QplDefault | ParseModel::QplHigh => Some("qpl"),
            ParseModel::Isal => Some("isal"),
            _ => None,
        }
    }

    /// `Ok` if this build can gather this parse; else what to rebuild with.
    pub fn check_available(self) -> Result<(), crate::TrainError> {
        match self.feature() {
            Some("qpl") if !cfg!(feature = "qpl") => {}
            Some("isal") if !cfg!(feature = "isal") => {}
            _ => return Ok(()),
        }
        Err(crate::TrainError::ParseUnavailable {
            parse: self.name(),
            feature: self.feature().unwrap_or_default(),
        })
    }
}

impl std::str::FromStr for ParseModel {
    type Err = String;

    fn from_str(s: &str) -> Result<ParseModel, String> {
        if s == "iaa" {
            return Ok(ParseModel::Fast);
        }
        ParseModel::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown parse model {s:?}; expected iaa (= fast), default, best, qpl-default, \
                     qpl-high or isal"
                )
            })
    }
}

impl std::fmt::Display for ParseModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that must agree for two histograms to be merged.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Settings {
    /// The parse model.
    pub parse: ParseModel,
    /// History window in bytes (4096: IAA's window, one page).
    pub window: u32,
    /// For the `best` parse: id of the table whose code lengths priced it.
    pub cost_table: Option<String>,
}

impl Settings {
    /// Settings for a parse model with IAA's 4 KiB window and no pricing table.
    pub fn new(parse: ParseModel) -> Settings {
        Settings {
            parse,
            window: WINDOW_SIZE as u32,
            cost_table: None,
        }
    }
}

/// Why histograms cannot be merged or read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HistogramError {
    /// Histograms made under different settings.
    #[error(
        "cannot merge histograms made with different {field}: {left} vs {right}; \
         gather them again with the same settings"
    )]
    SettingsMismatch {
        /// Which setting differs.
        field: &'static str,
        /// Its value on the left.
        left: String,
        /// Its value on the right.
        right: String,
    },
    /// A count would exceed 2^64.
    #[error("histogram count overflow while merging")]
    Overflow,
    /// Not JSON of the expected shape.
    #[error("histogram file is malformed: {0}")]
    Malformed(String),
    /// JSON of another format.
    #[error("not a cannery histogram: format is {0:?}, expected \"cannery-histogram\"")]
    WrongFormat(String),
    /// A version this build does not read.
    #[error("histogram format version {0} is not supported (this build reads version 1)")]
    UnsupportedVersion(u32),
    /// Counts that cannot come from parsing pages.
    #[error("histogram is inconsistent: {0}; the file is damaged or was edited")]
    Inconsistent(String),
}

/// Symbol counts of one or more parsed pages.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SymbolCounts {
    /// Literal/length symbols 0..=285 (256 = end-of-block).
    pub litlen: [u64; NUM_LITLEN],
    /// Distance symbols 0..=29.
    pub dist: [u64; NUM_DIST],
    /// Extra bits of all lengths and distances (their cost does not depend on the table).
    pub extra_bits: u64,
}

impl Default for SymbolCounts {
    fn default() -> Self {
        SymbolCounts {
            litlen: [0; NUM_LITLEN],
            dist: [0; NUM_DIST],
            extra_bits: 0,
        }
    }
}

/// Counting straight from the match finder: no token buffer in between.
impl TokenSink for SymbolCounts {
    #[inline]
    fn literal(&mut self, byte: u8) {
        self.litlen[byte as usize] += 1;
    }

    #[inline]
    fn copy(&mut self, length: u16, distance: u16) {
        self.litlen[length_symbol(length) as usize] += 1;
        self.dist[dist_symbol(distance) as usize] += 1;
        self.extra_bits += (length_extra(length).0 + dist_extra(distance).0) as u64;
    }
}

impl SymbolCounts {
    /// Counts one page's end-of-block (after its tokens went through [`TokenSink`]).
    #[inline]
    pub fn end_page(&mut self) {
        self.litlen[END_OF_BLOCK as usize] += 1;
    }

    /// Adds the symbols of one page's tokens and its end-of-block.
    pub fn add_tokens(&mut self, tokens: &[Token]) {
        feed(tokens, self);
        self.end_page();
    }

    /// Adds one page's counts from another library's parse (its
    /// end-of-block included); the extra bits follow from the symbols.
    pub fn add_library(&mut self, c: &cannery_engines::backend::LibraryCounts) {
        for (a, b) in self.litlen.iter_mut().zip(&c.litlen) {
            *a += b;
        }
        for (a, b) in self.dist.iter_mut().zip(&c.dist) {
            *a += b;
        }
        let length_extra: u64 = c.litlen[257..]
            .iter()
            .zip(cannery_codec::token::LENGTH_EXTRA)
            .map(|(&n, e)| n * e as u64)
            .sum();
        let dist_extra: u64 = c
            .dist
            .iter()
            .zip(cannery_codec::token::DIST_EXTRA)
            .map(|(&n, e)| n * e as u64)
            .sum();
        self.extra_bits += length_extra + dist_extra;
    }

    /// Adds `other` (checked).
    pub fn add(&mut self, other: &SymbolCounts) -> Result<(), HistogramError> {
        for (a, b) in self.litlen.iter_mut().zip(&other.litlen) {
            *a = a.checked_add(*b).ok_or(HistogramError::Overflow)?;
        }
        for (a, b) in self.dist.iter_mut().zip(&other.dist) {
            *a = a.checked_add(*b).ok_or(HistogramError::Overflow)?;
        }
        self.extra_bits = self
            .extra_bits
            .checked_add(other.extra_bits)
            .ok_or(HistogramError::Overflow)?;
        Ok(())
    }

    /// Bits these symbols take under code lengths `ll`/`d` (extra bits included).
    pub fn bits(&self, ll: &[u8; NUM_LITLEN], d: &[u8; NUM_DIST]) -> u64 {
        let a: u64 = self
            .litlen
            .iter()
            .zip(ll)
            .map(|(&c, &l)| c * l as u64)
            .sum();
        let b: u64 = self.dist.iter().zip(d).map(|(&c, &l)| c * l as u64).sum();
        a + b + self.extra_bits
    }

    /// Total literal/length symbols (tokens plus end-of-blocks).
    pub fn litlen_total(&self) -> u64 {
        self.litlen.iter().sum()
    }
}

/// Symbol statistics of many pages under one [`Settings`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    settings: Settings,
    /// Pages parsed (each contributes one end-of-block).
    pub pages: u64,
    /// Zero or same-filled pages seen but not parsed (zswap never compresses them).
    pub same_filled_pages: u64,
    /// The symbol counts.
    pub counts: SymbolCounts,
}

impl Histogram {
    /// The empty histogram (the identity of [`Histogram::merge`]) for `settings`.
    pub fn zero(settings: Settings) -> Histogram {
        Histogram {
            settings,
            pages: 0,
            same_filled_pages: 0,
            counts: SymbolCounts::default(),
        }
    }

    /// Its settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Adds one parsed page.
    pub fn add_page(&mut self, tokens: &[Token]) {
        self.counts.add_tokens(tokens);
        self.pages += 1;
    }

    /// Adds `other` to `self`; refuses (leaving `self` unchanged) if their settings differ.
    pub fn merge(&mut self, other: &Histogram) -> Result<(), HistogramError> {
        let (a, b) = (&self.settings, &other.settings);
        if a.parse != b.parse {
            return Err(HistogramError::SettingsMismatch {
                field: "parse models",
                left: a.parse.to_string(),
                right: b.parse.to_string(),
            });
        }
        if a.window != b.window {
            return Err(HistogramError::SettingsMismatch {
                field: "windows",
                left: a.window.to_string(),
                right: b.window.to_string(),
            });
        }
        if a.cost_table != b.cost_table {
            let show = |t: &Option<String>| t.clone().unwrap_or_else(|| "none".into());
            return Err(HistogramError::SettingsMismatch {
                field: "pricing tables",
                left: show(&a.cost_table),
                right: show(&b.cost_table),
            });
        }
        let mut sum = self.counts.clone();
        sum.add(&other.counts)?;
        let pages = self
            .pages
            .checked_add(other.pages)
            .ok_or(HistogramError::Overflow)?;
        let same = self
            .same_filled_pages
            .checked_add(other.same_filled_pages)
            .ok_or(HistogramError::Overflow)?;
        self.counts = sum;
        self.pages = pages;
        self.same_filled_pages = same;
        Ok(())
    }

    /// The merge of two histograms, as a value.
    pub fn merged(mut self, other: &Histogram) -> Result<Histogram, HistogramError> {
        self.merge(other)?;
        Ok(self)
    }

    /// The serialized form: pretty JSON ending in a newline.
    pub fn to_json(&self) -> String {
        let j = JsonHistogram {
            format: FORMAT.into(),
            version: VERSION,
            parse: self.settings.parse,
            window: self.settings.window,
            cost_table: self.settings.cost_table.clone(),
            pages: self.pages,
            same_filled_pages: self.same_filled_pages,
            extra_bits: self.counts.extra_bits,
            litlen: self.counts.litlen.to_vec(),
            dist: self.counts.dist.to_vec(),
        };
        let mut s = serde_json::to_string_pretty(&j).expect("a histogram always serializes");
        s.push('\n');
        s
    }

    /// Reads the serialized form, checking format, version and consistency.
    pub fn from_json(text: &str) -> Result<Histogram, HistogramError> {
        let probe: serde_json::Value =
            serde_json::from_str(text).map_err(|e| HistogramError::Malformed(e.to_string()))?;
        match probe.get("format").and_then(|f| f.as_str()) {
            Some(FORMAT) => {}
            Some(other) => return Err(HistogramError::WrongFormat(other.into())),
            None => {
                return Err(HistogramError::Malformed(
                    "no \"format\" field (expected \"cannery-histogram\")".into(),
                ))
            }
        }
        match probe.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == VERSION as u64 => {}
            Some(v) => return Err(HistogramError::UnsupportedVersion(v as u32)),
            None => return Err(HistogramError::Malformed("no \"version\" number".into())),
        }
        let j: JsonHistogram =
            serde_json::from_value(probe).map_err(|e| HistogramError::Malformed(e.to_string()))?;
        let litlen: [u64; NUM_LITLEN] = j.litlen.as_slice().try_into().map_err(|_| {
            HistogramError::Malformed(format!(
                "\"litlen\" has {} counts, expected {NUM_LITLEN}",
                j.litlen.len()
            ))
        })?;
        let dist: [u64; NUM_DIST] = j.dist.as_slice().try_into().map_err(|_| {
            HistogramError::Malformed(format!(
                "\"dist\" has {} counts, expected {NUM_DIST}",
                j.dist.len()
            ))
        })?;
        if j.window == 0 || j.window as usize > WINDOW_SIZE {
            return Err(HistogramError::Inconsistent(format!(
                "window {} is not in 1..=4096",
                j.window
            )));
        }
        if (j.parse == ParseModel::Best) != j.cost_table.is_some() {
            return Err(HistogramError::Inconsistent(
                "a best-parse histogram names its pricing table, and only it".into(),
            ));
        }
        let h = Histogram {
            settings: Settings {
                parse: j.parse,
                window: j.window,
                cost_table: j.cost_table,
            },
            pages: j.pages,
            same_filled_pages: j.same_filled_pages,
            counts: SymbolCounts {
                litlen,
                dist,
                extra_bits: j.extra_bits,
            },
        };
        h.check()?;
        Ok(h)
    }

    /// Checks the invariants of counts made by parsing pages.
    pub fn check(&self) -> Result<(), HistogramError> {
        let eob = self.counts.litlen[END_OF_BLOCK as usize];
        if eob != self.pages {
            return Err(HistogramError::Inconsistent(format!(
                "{} end-of-block symbols for {} pages (one per page expected)",
                eob, self.pages
            )));
        }
        // Checked sums: counts come from a file, and a wrapped sum would
        // pass the checks below (2^64-1 + 1 = 0).
        let sum = |field: &str, v: &[u64]| {
            v.iter()
                .try_fold(0u64, |a, &c| a.checked_add(c))
                .ok_or_else(|| {
                    HistogramError::Inconsistent(format!("\"{field}\" counts overflow 64 bits"))
                })
        };
        let symbols = sum("litlen", &self.counts.litlen)?;
        // Each page is at most 4096 literals or lengths plus its end of block.
        let most = self.pages.saturating_mul(WINDOW_SIZE as u64 + 1);
        if symbols > most {
            return Err(HistogramError::Inconsistent(format!(
                "\"litlen\" counts {symbols} symbols, more than {} per page for {} pages",
                WINDOW_SIZE + 1,
                self.pages
            )));
        }
        let lengths = sum("litlen[257..]", &self.counts.litlen[257..])?;
        let dists = sum("dist", &self.counts.dist)?;
        if lengths != dists {
            return Err(HistogramError::Inconsistent(format!(
                "{lengths} length symbols but {dists} distance symbols"
            )));
        }
        if self.settings.window as usize <= WINDOW_SIZE
            && self.counts.dist[cannery_codec::constants::NUM_DIST_4K..]
                .iter()
                .any(|&c| c > 0)
        {
            return Err(HistogramError::Inconsistent(
                "distance symbols 24..=29 counted, but a 4 KiB window never uses them".into(),
            ));
        }
        Ok(())
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonHistogram {
    format: String,
    version: u32,
    parse: ParseModel,
    window: u32,
    cost_table: Option<String>,
    pages: u64,
    same_filled_pages: u64,
    extra_bits: u64,
    litlen: Vec<u64>,
    dist: Vec<u64>,
}

#[cfg(test)]
mod tests;
