//! Training for another compressor (`--target`): statistics gathered with
//! that compressor's own parse, and tables judged under its own compressor.
//!
//! The targets and their parse models ([`ParseModel`]):
//! - `iaa` = [`ParseModel::Fast`], cannery's model of IAA hardware;
//! - `qpl-default`, `qpl-high`: the symbols QPL's canned compressor emits
//!   at that level (software path; feature `qpl`);
//! - `isal`: the symbols ISA-L's level-0 compressor emits (feature `isal`).
//!
//! A library target is trained on what the library's *compressor* emits
//! ([`library_parser`]; the FFI calls are `cannery_engines::library`'s), not on the library's statistics function: measured
//! on the shipped corpus, `qpl_gather_deflate_statistics` and
//! `isal_update_histogram` parse a page like their own compressor on 0 to
//! 10 % of pages, while the compressors' parses do not depend on the table
//! (engines tests/qpl_target.rs, engines tests/isal_target.rs).
//!
//! [`compare_under_target`] compresses held-out pages with the library's
//! canned compressor twice: with cannery's table, and with the table the
//! library's own workflow makes from the same training pages (its
//! statistics function, then `qpl_huffman_table_init_with_histogram` or
//! `isal_create_hufftables`); [`compress_sizes`] runs any table under any
//! target, for the target × parse matrix. Tables are made by
//! [`crate::train`], as for every parse; this module only gathers and
//! measures.

use serde::Serialize;

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::Table;
use cannery_engines::backend::LibraryCounts;
use cannery_engines::library::{self, Library, LibraryError, TableSource};

use crate::error::TrainError;
use crate::histogram::ParseModel;
use crate::pages::{for_each_chunk, page_hash, same_filled, PageSource, Part, Split};

/// The target names of `--target`, each with its parse model.
pub const TARGETS: [(&str, ParseModel); 4] = [
    ("iaa", ParseModel::Fast),
    ("qpl-default", ParseModel::QplDefault),
    ("qpl-high", ParseModel::QplHigh),
    ("isal", ParseModel::Isal),
];

/// The parse model of a `--target` name.
pub fn parse_of_target(name: &str) -> Result<ParseModel, String> {
    TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, m)| m)
        .ok_or_else(|| {
            format!("unknown target {name:?}; expected iaa, qpl-default, qpl-high or isal")
        })
}

/// The `--target` name of a parse model (cannery's fast parse is `iaa`),
/// or `None` for cannery's `default` and `best` parses.
pub fn target_name(model: ParseModel) -> Option<&'static str> {
    TARGETS.iter().find(|(_, m)| *m == model).map(|(n, _)| *n)
}

/// The compressor a target's tables are meant for, in words.
pub fn compressor_of(model: ParseModel) -> &'static str {
    match model {
        ParseModel::QplDefault => "QPL canned, default level (software path)",
        ParseModel::QplHigh => "QPL canned, high level (software path)",
        ParseModel::Isal => "ISA-L level 0 with the table (whole streams, header included)",
        _ => "cannery canned, fast level",
    }
}

/// The targets whose compressor this build can run, in [`TARGETS`] order.
pub fn available_targets() -> Vec<ParseModel> {
    TARGETS
        .iter()
        .map(|&(_, m)| m)
        .filter(|m| m.check_available().is_ok())
        .collect()
}

/// The library compressor a library parse model is the parse of.
fn library_of(model: ParseModel) -> Option<Library> {
    match model {
        ParseModel::QplDefault => Some(Library::QplDefault),
        ParseModel::QplHigh => Some(Library::QplHigh),
        ParseModel::Isal => Some(Library::Isal),
        _ => None,
    }
}

impl From<LibraryError> for TrainError {
    fn from(e: LibraryError) -> TrainError {
        TrainError::Library {
            library: e.library,
            message: e.message,
        }
    }
}

/// One page's counts from the library's own statistics function
/// (`qpl_gather_deflate_statistics`, `isal_update_histogram`): what the
/// library's own training workflow sees.
pub fn library_statistics(model: ParseModel, page: &[u8]) -> Result<LibraryCounts, TrainError> {
    model.check_available()?;
    let library = library_of(model).ok_or(TrainError::NoTokens(model.name()))?;
    Ok(library::statistics(library, page)?)
}

/// A library's compressor as a parser ([`library::Parser`]) for a library
/// parse model.
pub fn library_parser(model: ParseModel) -> Result<library::Parser, TrainError> {
    model.check_available()?;
    let library = library_of(model).ok_or(TrainError::NoTokens(model.name()))?;
    Ok(library::Parser::new(library)?)
}

/// A table inside a target's compressor.
enum Loaded {
    /// cannery's own encoder (the `iaa` target).
    Own(Box<cannery_codec::Encoder>),
    /// A library's compressor.
    Library(library::Loaded),
}

impl Loaded {
    fn new(model: ParseModel, which: TableSource<'_>) -> Result<Loaded, TrainError> {
        model.check_available()?;
        match (library_of(model), which) {
            (Some(library), _) => Ok(Loaded::Library(library::Loaded::new(library, which)?)),
            (None, TableSource::Table(t)) => {
                Ok(Loaded::Own(Box::new(cannery_codec::Encoder::new(
                    cannery_codec::Mode::Canned,
                    cannery_codec::Format::Iaa,
                    cannery_codec::Level::Fast,
                    Some(t),
                )?)))
            }
            (None, TableSource::Trained(_)) => Err(TrainError::NoTokens(model.name())),
        }
    }

    /// Bytes of one page (at most 4096; under ISA-L every byte it writes,
    /// the header included) and the header bits among them.
    fn size(&mut self, page: &[u8], buf: &mut Vec<u8>) -> Result<(u64, u64), TrainError> {
        match self {
            Loaded::Own(e) => {
                let n = match e.compress(page, buf)? {
                    cannery_codec::Outcome::Compressed(n) => n as u64,
                    _ => PAGE_SIZE as u64,
                };
                Ok((n.min(PAGE_SIZE as u64), 0))
            }
            Loaded::Library(l) => Ok(l.size(page)?),
        }
    }
}

/// Held-out pages compressed by a target's compressor.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Sizes {
    /// Pages compressed.
    pub pages: u64,
    /// Their bytes: whole streams (an incompressible page counts 4096;
    /// under ISA-L every byte it writes, each stream's header included).
    pub bytes: u64,
    /// The header bits among them (0 for canned streams, which carry none).
    pub header_bits: u64,
}

impl Sizes {
    /// No pages.
    pub const ZERO: Sizes = Sizes {
        pages: 0,
        bytes: 0,
        header_bits: 0,
    };

    /// The counts summed.
    pub fn plus(self, o: Sizes) -> Sizes {
        Sizes {
            pages: self.pages + o.pages,
            bytes: self.bytes + o.bytes,
            header_bits: self.header_bits + o.header_bits,
        }
    }

    /// Header bits per stream.
    pub fn header_bits_per_page(&self) -> f64 {
        if self.pages == 0 {
            0.0
        } else {
            self.header_bits as f64 / self.pages as f64
        }
    }

    /// Compression ratio (input bytes / output bytes).
    pub fn ratio(&self) -> f64 {
        if self.bytes == 0 {
            0.0
        } else {
            (self.pages * PAGE_SIZE as u64) as f64 / self.bytes as f64
        }
    }
}

/// The held-out pages of `source` under `split` (its test part), zero and
/// same-filled pages left out (zswap never compresses them).
fn for_each_held_out<S: PageSource + ?Sized>(
    source: &S,
    split: Split,
    f: &mut dyn FnMut(&[u8]) -> Result<(), TrainError>,
) -> Result<(), TrainError> {
    for_each_chunk(source, |chunk| {
        for p in chunk {
            if same_filled(p).is_none()
                && split.part_of_hash(page_hash(split.seed, p)) == Part::Test
            {
                f(p)?;
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// Each table's sizes for the held-out pages of `source`, under `model`'s
/// compressor (cannery's fast encoder for cannery's parses).
pub fn compress_sizes<S: PageSource + ?Sized>(
    source: &S,
    split: Split,
    model: ParseModel,
    tables: &[&Table],
) -> Result<Vec<Sizes>, TrainError> {
    let mut loaded = tables
        .iter()
        .map(|t| Loaded::new(model, TableSource::Table(t)))
        .collect::<Result<Vec<_>, _>>()?;
    measure(source, split, &mut loaded)
}

fn measure<S: PageSource + ?Sized>(
    source: &S,
    split: Split,
    loaded: &mut [Loaded],
) -> Result<Vec<Sizes>, TrainError> {
    let mut sizes = vec![Sizes::ZERO; loaded.len()];
    let mut buf = Vec::with_capacity(PAGE_SIZE);
    for_each_held_out(source, split, &mut |p| {
        for (l, s) in loaded.iter_mut().zip(sizes.iter_mut()) {
            let (bytes, header_bits) = l.size(p, &mut buf)?;
            s.bytes += bytes;
            s.header_bits += header_bits;
            s.pages += 1;
        }
        Ok(())
    })?;
    Ok(sizes)
}

/// cannery's table against the library's own, under the library's compressor.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TargetComparison {
    /// The target (`qpl-default`, `qpl-high`, `isal`).
    pub target: &'static str,
    /// The compressor both tables ran through.
    pub compressor: &'static str,
    /// cannery's table.
    pub cannery: Sizes,
    /// The table the library builds from the same training counts.
    pub library: Sizes,
}

impl TargetComparison {
    /// cannery's ratio over the library table's, less one (+0.01 = 1 % better).
    pub fn gain(&self) -> f64 {
        if self.library.ratio() == 0.0 {
            0.0
        } else {
            self.cannery.ratio() / self.library.ratio() - 1.0
        }
    }
}

/// The library's own statistics of the training pages of `source` (every
/// page `split` does not hold out, zero and same-filled pages left out).
pub fn library_training_counts<S: PageSource + ?Sized>(
    source: &S,
    split: Split,
    model: ParseModel,
) -> Result<LibraryCounts, TrainError> {
    use rayon::prelude::*;
    let mut total = LibraryCounts::zero();
    for_each_chunk(source, |chunk| {
        let parts: Vec<Result<LibraryCounts, TrainError>> = chunk
            .par_chunks(16)
            .map(|task| {
                let mut sum = LibraryCounts::zero();
                for p in task {
                    if same_filled(p).is_none()
                        && split.part_of_hash(page_hash(split.seed, p)) != Part::Test
                    {
                        sum.add(&library_statistics(model, p)?);
                    }
                }
                Ok(sum)
            })
            .collect();
        for c in parts {
            total.add(&c?);
        }
        Ok(())
    })?;
    Ok(total)
}

/// Compresses the held-out pages of `source` (`eval_split`'s test part)
/// with the library's canned compressor for `model`, once with `table` and
/// once with the table the library's own workflow trains on the same
/// training pages (`train_split`'s other parts).
pub fn compare_under_target<S: PageSource + ?Sized>(
    source: &S,
    train_split: Split,
    eval_split: Split,
    model: ParseModel,
    table: &Table,
) -> Result<TargetComparison, TrainError> {
    let target = target_name(model).filter(|_| model.feature().is_some());
    let Some(target) = target else {
        return Err(TrainError::NoTokens(model.name()));
    };
    let training = library_training_counts(source, train_split, model)?;
    let mut loaded = vec![
        Loaded::new(model, TableSource::Table(table))?,
        Loaded::new(model, TableSource::Trained(&training))?,
    ];
    let sizes = measure(source, eval_split, &mut loaded)?;
    Ok(TargetComparison {
        target,
        compressor: compressor_of(model),
        cannery: sizes[0],
        library: sizes[1],
    })
}

/// Tables trained for each target (rows, one fleet table per target from
/// every workload's training pages, all QPL-compatible so every compressor
/// can load them) under each target's compressor (columns), on the
/// held-out pages of every workload.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TargetMatrix {
    /// Targets, in rows and columns alike.
    pub targets: Vec<&'static str>,
    /// `sizes[row][col]`: the row's table under the column's compressor.
    pub sizes: Vec<Vec<Sizes>>,
}

impl TargetMatrix {
    /// How much the row's table loses under the column's compressor against
    /// the table trained for that compressor (the diagonal): 0.02 = 2 %.
    pub fn loss(&self, row: usize, col: usize) -> f64 {
        let own = self.sizes[col][col].ratio();
        if own == 0.0 || row == col {
            0.0
        } else {
            1.0 - self.sizes[row][col].ratio() / own
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram::SymbolCounts;

    #[test]
    fn targets_name_their_parses_both_ways() {
        for (name, model) in TARGETS {
            assert_eq!(parse_of_target(name), Ok(model));
            assert_eq!(target_name(model), Some(name));
        }
        assert_eq!(target_name(ParseModel::Best), None);
        assert!(parse_of_target("zstd").unwrap_err().contains("qpl-default"));
    }

    #[test]
    fn library_targets_say_which_feature_they_need() {
        assert!(available_targets().contains(&ParseModel::Fast));
        for m in [ParseModel::QplDefault, ParseModel::QplHigh] {
            assert_eq!(m.check_available().is_ok(), cfg!(feature = "qpl"));
        }
        assert_eq!(
            ParseModel::Isal.check_available().is_ok(),
            cfg!(feature = "isal")
        );
        if !cfg!(feature = "qpl") {
            let e = library_statistics(ParseModel::QplHigh, &[0u8; 4096]).unwrap_err();
            assert!(e.to_string().contains("`qpl` feature"), "{e}");
        }
        if !cfg!(feature = "isal") {
            let e = ParseModel::Isal.check_available().unwrap_err();
            assert!(e.to_string().contains("--features isal"), "{e}");
        }
    }

    #[test]
    fn library_counts_carry_their_extra_bits() {
        let mut c = LibraryCounts::zero();
        c.litlen[256] = 1;
        c.litlen[265] = 2; // lengths 11..=12: 1 extra bit
        c.dist[4] = 2; // distances 5..=6: 1 extra bit
        let mut s = SymbolCounts::default();
        s.add_library(&c);
        assert_eq!(s.extra_bits, 4);
        assert_eq!(s.litlen[265], 2);
    }
}
