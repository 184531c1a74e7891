//! The validation matrix behind `cannery validate` and `cannery fuzz`:
//! every page through every (mode, compressor, decompressor) cell the
//! backends can form, with counts of what ran, passed, failed and was
//! skipped, and a verdict that never passes a check that did not run.
//!
//! A cell is skipped, with the reason, when a backend's stated canned rules
//! reject the table ([`Capabilities`](crate::backend::Capabilities)), and a
//! requested mode no chosen pair speaks becomes one skipped placeholder
//! cell. Failures are handed to the caller as [`FailureCase`]s (page,
//! stream, who failed and how), so it can write reproducers; this module
//! writes no files and prints nothing (`cannery_lab::engine_reports` turns cells into text).

use std::collections::BTreeMap;

use serde::Serialize;

use super::pair::{check_stream, PairOutcome, Reencode};
use crate::backend::Engine;
use cannery_codec::encode::Outcome;
use cannery_codec::mode::Mode;
use cannery_codec::table::Table;

/// Failures kept per cell (every one is counted).
pub const FAILURES_KEPT: usize = 20;

/// What to run.
#[derive(Clone, Copy, Debug)]
pub struct MatrixSpec<'a> {
    /// The table canned mode uses.
    pub table: &'a Table,
    /// Modes to check.
    pub modes: &'a [Mode],
    /// Only cells involving this backend (the one `fuzz` tests).
    pub only_involving: Option<&'a str>,
}

/// One failing page check, as the caller needs it for a reproducer.
#[derive(Clone, Copy, Debug)]
pub struct FailureCase<'a> {
    /// The table.
    pub table: &'a Table,
    /// The mode.
    pub mode: Mode,
    /// The compressor, and the path its job ran on.
    pub compressor: (&'a str, &'static str),
    /// The decompressor, and its path.
    pub decompressor: (&'a str, &'static str),
    /// Where the page came from.
    pub source: &'a str,
    /// The stage that failed: "compress", "decompress", "compare", "reencode".
    pub stage: &'a str,
    /// What went wrong.
    pub detail: &'a str,
    /// The page.
    pub page: &'a [u8],
    /// The compressed stream (empty if compression failed).
    pub stream: &'a [u8],
}

/// The reproducer file of one failure (`format: "cannery-reproducer"`).
#[derive(Clone, Debug, Serialize)]
pub struct Reproducer {
    /// Always "cannery-reproducer".
    pub format: &'static str,
    /// Table id.
    pub table_id: String,
    /// Literal/length code lengths.
    pub litlen_lengths: Vec<u8>,
    /// Distance code lengths.
    pub dist_lengths: Vec<u8>,
    /// Mode.
    pub mode: &'static str,
    /// Compressor and its path.
    pub compressor: String,
    /// Decompressor and its path.
    pub decompressor: String,
    /// Where the page came from.
    pub page_source: String,
    /// Stage that failed.
    pub stage: String,
    /// What went wrong.
    pub detail: String,
    /// The page, hex.
    pub page_hex: String,
    /// The stream, hex.
    pub stream_hex: String,
}

impl Reproducer {
    /// The reproducer of `f`.
    pub fn of(f: &FailureCase<'_>) -> Reproducer {
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        Reproducer {
            format: "cannery-reproducer",
            table_id: f.table.id(),
            litlen_lengths: f.table.lengths().litlen.to_vec(),
            dist_lengths: f.table.lengths().dist.to_vec(),
            mode: f.mode.name(),
            compressor: format!("{} ({})", f.compressor.0, f.compressor.1),
            decompressor: format!("{} ({})", f.decompressor.0, f.decompressor.1),
            page_source: f.source.into(),
            stage: f.stage.into(),
            detail: f.detail.into(),
            page_hex: hex(f.page),
            stream_hex: hex(f.stream),
        }
    }

    /// A file name that identifies the failure:
    /// `<table>-<mode>-<compressor>-<decompressor>-<source>.json`.
    pub fn file_name(&self) -> String {
        let safe: String = self
            .page_source
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let name = |s: &str| s.split(' ').next().unwrap_or("").to_string();
        format!(
            "{}-{}-{}-{}-{safe}.json",
            self.table_id,
            self.mode,
            name(&self.compressor),
            name(&self.decompressor)
        )
    }
}

/// One kept failure of a cell.
#[derive(Serialize, Clone, Debug)]
pub struct Failure {
    /// Page label.
    pub page: String,
    /// Failed stage.
    pub stage: String,
    /// What went wrong.
    pub detail: String,
    /// The reproducer the caller wrote, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproducer: Option<String>,
}

/// One (mode, compressor, decompressor) cell.
#[derive(Serialize, Clone, Debug, Default)]
pub struct Cell {
    /// Mode name.
    pub mode: String,
    /// Compressor name.
    pub compressor: String,
    /// Compressor path (software/hardware).
    pub compressor_path: String,
    /// Decompressor name.
    pub decompressor: String,
    /// "pass", "fail" or "skipped".
    pub status: String,
    /// Pages checked.
    pub pages: usize,
    /// Pages that round-tripped.
    pub passed: usize,
    /// Pages that failed.
    pub failed: usize,
    /// Pages the compressor declined (≥ 4096 bytes).
    pub incompressible: usize,
    /// Sum of compressed sizes of passing pages.
    pub compressed_bytes: usize,
    /// Canned re-encoding results by kind.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub reencode: BTreeMap<String, usize>,
    /// Why the cell was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// The first [`FAILURES_KEPT`] failures.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<Failure>,
}

/// The cells of one compressor row for `mode`, skipped where a rule says so.
fn row(
    spec: &MatrixSpec<'_>,
    mode: Mode,
    comp: &dyn Engine,
    decomps: &[Box<dyn Engine>],
) -> Vec<Cell> {
    let canned = mode == Mode::Canned;
    let comp_block = canned
        .then(|| comp.capabilities().canned_compress_check(spec.table).err())
        .flatten()
        .map(|e| format!("{} cannot compress with the table: {e}", comp.name()));
    decomps
        .iter()
        .filter(|d| d.capabilities().can_decompress(mode))
        .filter(|d| {
            spec.only_involving
                .is_none_or(|b| b == comp.name() || b == d.name())
        })
        .map(|d| {
            let block = comp_block.clone().or_else(|| {
                canned
                    .then(|| d.capabilities().canned_decompress_check(spec.table).err())
                    .flatten()
                    .map(|e| format!("{} cannot decompress with the table: {e}", d.name()))
            });
            Cell {
                mode: mode.name().into(),
                compressor: comp.name().into(),
                compressor_path: comp.capabilities().path.name().into(),
                decompressor: d.name().into(),
                status: if block.is_some() { "skipped" } else { "pass" }.into(),
                skip_reason: block,
                ..Cell::default()
            }
        })
        .collect()
}

/// Runs every cell over `pages` (labelled by `labels`). `on_failure` is
/// called for each of the first [`FAILURES_KEPT`] failures of a cell and
/// may return a reproducer's path; its error stops the run.
pub fn run_matrix<E>(
    spec: &MatrixSpec<'_>,
    comps: &mut [Box<dyn Engine>],
    decomps: &mut [Box<dyn Engine>],
    pages: &[Vec<u8>],
    labels: &[String],
    on_failure: &mut dyn FnMut(&FailureCase<'_>) -> Result<Option<String>, E>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Vec<Cell>, E> {
    let table = spec.table;
    let mut cells = Vec::new();
    // Progress counts pages compressed: each mode's compressors over every page.
    let total: u64 = spec
        .modes
        .iter()
        .map(|&m| {
            comps
                .iter()
                .filter(|c| c.capabilities().can_compress(m))
                .count() as u64
        })
        .sum::<u64>()
        * pages.len() as u64;
    let mut done = 0u64;
    for &mode in spec.modes {
        let before = cells.len();
        for comp in comps.iter_mut() {
            if !comp.capabilities().can_compress(mode) {
                continue;
            }
            let mut row = row(spec, mode, comp.as_ref(), decomps);
            if row.iter().all(|c| c.skip_reason.is_some()) {
                cells.extend(row);
                continue;
            }
            let mut stream = Vec::new();
            for (pi, page) in pages.iter().enumerate() {
                done += 1;
                if done % 256 == 0 || done == total {
                    progress(done, total);
                }
                let res = comp.compress(mode, Some(table), page, &mut stream);
                let comp_path = comp.last_path().name();
                for cell in row.iter_mut().filter(|c| c.skip_reason.is_none()) {
                    cell.pages += 1;
                    cell.compressor_path = comp_path.into();
                    let d = decomps
                        .iter_mut()
                        .find(|d| d.name() == cell.decompressor)
                        .expect("decompressor of the row");
                    let (outcome, s) = match &res {
                        Err(e) => (
                            PairOutcome::Fail {
                                stage: "compress",
                                detail: e.to_string(),
                            },
                            &[][..],
                        ),
                        Ok(Outcome::Incompressible) => (PairOutcome::Incompressible, &[][..]),
                        Ok(Outcome::Compressed(n)) => (
                            check_stream(d.as_mut(), mode, Some(table), page, &stream[..*n]),
                            &stream[..*n],
                        ),
                    };
                    match outcome {
                        PairOutcome::Pass { bytes, reencode } => {
                            cell.passed += 1;
                            cell.compressed_bytes += bytes;
                            if let Some(r) = reencode {
                                let k = match r {
                                    Reencode::Exact => "exact",
                                    Reencode::ExactWithQplTail => "exact-with-qpl-tail",
                                };
                                *cell.reencode.entry(k.into()).or_default() += 1;
                            }
                        }
                        PairOutcome::Incompressible => cell.incompressible += 1,
                        PairOutcome::Fail { stage, detail } => {
                            cell.failed += 1;
                            cell.status = "fail".into();
                            if cell.failures.len() < FAILURES_KEPT {
                                let reproducer = on_failure(&FailureCase {
                                    table,
                                    mode,
                                    compressor: (comp.name(), comp_path),
                                    decompressor: (d.name(), d.last_path().name()),
                                    source: &labels[pi],
                                    stage,
                                    detail: &detail,
                                    page,
                                    stream: s,
                                })?;
                                cell.failures.push(Failure {
                                    page: labels[pi].clone(),
                                    stage: stage.into(),
                                    detail,
                                    reproducer,
                                });
                            }
                        }
                    }
                }
            }
            cells.extend(row);
        }
        if cells.len() == before {
            cells.push(Cell {
                mode: mode.name().into(),
                compressor: "(none)".into(),
                decompressor: "(none)".into(),
                status: "skipped".into(),
                skip_reason: Some(format!(
                    "no pair of the chosen backends compresses and decompresses {mode} streams"
                )),
                ..Cell::default()
            });
        }
    }
    Ok(cells)
}

/// What a matrix ran: cells and page checks (one per page per cell), each
/// run, passed, failed or skipped. A skipped cell counts every page it
/// would have checked.
#[derive(Serialize, Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Cells that ran.
    pub cells_run: usize,
    /// Cells whose every page passed (or was declined as incompressible).
    pub cells_passed: usize,
    /// Cells with at least one failure.
    pub cells_failed: usize,
    /// Cells that could not run.
    pub cells_skipped: usize,
    /// Page checks run.
    pub pages_run: usize,
    /// Page checks that round-tripped.
    pub pages_passed: usize,
    /// Page checks that failed.
    pub pages_failed: usize,
    /// Page checks the compressor declined (≥ 4096 bytes): run, not failed.
    pub pages_incompressible: usize,
    /// Page checks of skipped cells.
    pub pages_skipped: usize,
}

/// Why a matrix does not pass.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Verdict {
    /// Some page checks failed.
    #[error("{failed} of {run} page checks failed")]
    Failed {
        /// Failed page checks.
        failed: usize,
        /// Page checks run.
        run: usize,
    },
    /// No cell ran.
    #[error("nothing was checked ({skipped} cells skipped)")]
    NothingRan {
        /// Skipped cells.
        skipped: usize,
    },
    /// Some cells did not run and skips were not allowed.
    #[error(
        "{skipped} of {total} cells did not run ({pages} page checks skipped); pass \
         --allow-skips to accept that"
    )]
    Skipped {
        /// Skipped cells.
        skipped: usize,
        /// All cells.
        total: usize,
        /// Page checks skipped.
        pages: usize,
    },
}

impl Counts {
    /// Counts of `cells`, each of which was to check `pages` pages.
    pub fn of(cells: &[Cell], pages: usize) -> Counts {
        let mut c = Counts::default();
        for cell in cells {
            if cell.skip_reason.is_some() {
                c.cells_skipped += 1;
                c.pages_skipped += pages;
                continue;
            }
            c.cells_run += 1;
            if cell.failed > 0 {
                c.cells_failed += 1;
            } else {
                c.cells_passed += 1;
            }
            c.pages_run += cell.pages;
            c.pages_passed += cell.passed;
            c.pages_failed += cell.failed;
            c.pages_incompressible += cell.incompressible;
        }
        c
    }

    /// One line: `cells: R run (P passed, F failed), S skipped; page checks: …`.
    pub fn line(&self) -> String {
        format!(
            "cells: {} run ({} passed, {} failed), {} skipped; page checks: {} run ({} passed, {} \
             incompressible, {} failed), {} skipped",
            self.cells_run,
            self.cells_passed,
            self.cells_failed,
            self.cells_skipped,
            self.pages_run,
            self.pages_passed,
            self.pages_incompressible,
            self.pages_failed,
            self.pages_skipped
        )
    }

    /// `Ok` only if nothing failed, something ran, and nothing was skipped
    /// (unless `allow_skips`).
    pub fn verdict(&self, allow_skips: bool) -> Result<(), Verdict> {
        if self.pages_failed > 0 {
            return Err(Verdict::Failed {
                failed: self.pages_failed,
                run: self.pages_run,
            });
        }
        if self.cells_run == 0 {
            return Err(Verdict::NothingRan {
                skipped: self.cells_skipped,
            });
        }
        if self.cells_skipped > 0 && !allow_skips {
            return Err(Verdict::Skipped {
                skipped: self.cells_skipped,
                total: self.cells_skipped + self.cells_run,
                pages: self.pages_skipped,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(feature = "reference")]
    use crate::backend::reference::Reference;
    use crate::backend::software::Software;

    /// Our software backend with one bit of every compressed stream
    /// flipped: a faulty engine, to prove mismatches are caught.
    #[cfg_attr(not(feature = "reference"), allow(dead_code))]
    fn faulty() -> impl Engine {
        use crate::backend::tampered::{flip_middle_bit, Step, Tampered};
        Tampered::new(Software::new(), "faulty", |step: Step<'_>| {
            if let Step::Compressed(stream) = step {
                flip_middle_bit(stream, 0x10);
            }
            Ok(())
        })
    }

    #[cfg_attr(not(feature = "reference"), allow(dead_code))]
    fn text_page(i: usize) -> Vec<u8> {
        format!("page {i}: the quick brown fox jumps over the lazy dog. ")
            .repeat(80)
            .into_bytes()[..4096]
            .to_vec()
    }

    #[test]
    #[cfg(feature = "reference")]
    fn a_faulty_compressor_fails_every_decompressor_and_leaves_reproducers() {
        let table = Table::kernel_2024();
        let pages: Vec<Vec<u8>> = (0..3).map(text_page).collect();
        let sources: Vec<String> = (0..3).map(|i| format!("page{i}")).collect();
        let mut comps: Vec<Box<dyn Engine>> = vec![Box::new(Software::new()), Box::new(faulty())];
        let mut decomps: Vec<Box<dyn Engine>> =
            vec![Box::new(Software::new()), Box::new(Reference::zlib(6))];
        let mut reproducers = Vec::new();
        let spec = MatrixSpec {
            table: &table,
            modes: &[Mode::Canned],
            only_involving: None,
        };
        let mut last_progress = (0, 0);
        let cells = run_matrix::<()>(
            &spec,
            &mut comps,
            &mut decomps,
            &pages,
            &sources,
            &mut |f| {
                let r = Reproducer::of(f);
                reproducers.push(r.clone());
                Ok(Some(r.file_name()))
            },
            &mut |done, total| last_progress = (done, total),
        )
        .unwrap();
        // Progress ends at every page through both compressors.
        let all = 2 * pages.len() as u64;
        assert_eq!(last_progress, (all, all));
        assert_eq!(reproducers.len(), 6);
        for r in &reproducers {
            assert_eq!(r.table_id, table.id());
            assert_eq!(r.mode, "canned");
            assert_eq!(r.page_hex.len(), 8192);
            assert!(!r.stream_hex.is_empty());
            assert!(r.compressor.starts_with("faulty"));
        }
        assert_eq!(cells.len(), 4);
        for c in &cells {
            if c.compressor == "software" {
                assert_eq!((c.status.as_str(), c.passed, c.failed), ("pass", 3, 0));
                assert_eq!(c.reencode.get("exact"), Some(&3));
            } else {
                assert_eq!(
                    (c.status.as_str(), c.failed),
                    ("fail", 3),
                    "{}",
                    c.decompressor
                );
                for f in &c.failures {
                    assert!(f.reproducer.as_ref().unwrap().starts_with(&table.id()));
                }
            }
        }
    }

    fn cell(pages: usize, passed: usize, failed: usize, skipped: bool) -> Cell {
        Cell {
            pages,
            passed,
            failed,
            incompressible: pages - passed - failed,
            skip_reason: skipped.then(|| "why".into()),
            ..Cell::default()
        }
    }

    #[test]
    fn counts_and_verdicts() {
        let ok = [cell(10, 9, 0, false), cell(0, 0, 0, true)];
        let c = Counts::of(&ok, 10);
        assert_eq!(
            (c.cells_run, c.cells_skipped, c.pages_run, c.pages_skipped),
            (1, 1, 10, 10)
        );
        assert_eq!(c.pages_incompressible, 1);
        assert_eq!(
            c.verdict(false),
            Err(Verdict::Skipped {
                skipped: 1,
                total: 2,
                pages: 10
            })
        );
        assert_eq!(c.verdict(true), Ok(()));
        let bad = Counts::of(&[cell(10, 8, 2, false)], 10);
        assert_eq!(
            bad.verdict(true),
            Err(Verdict::Failed { failed: 2, run: 10 })
        );
        let none = Counts::of(&[cell(0, 0, 0, true)], 10);
        assert_eq!(none.verdict(true), Err(Verdict::NothingRan { skipped: 1 }));
        assert_eq!(
            Counts::of(&[], 10).verdict(true),
            Err(Verdict::NothingRan { skipped: 0 })
        );
    }
}
