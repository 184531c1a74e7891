//! `cannery fuzz`'s engine: a stream of seeded stress pages
//! ([`crate::backend::stress`], optionally mutating corpus pages) through
//! every pair that involves the backend under test, in batches of
//! [`BATCH`] pages, so memory stays bounded however many iterations are
//! asked for; the batches' cells are merged into one matrix, keeping the
//! first [`FAILURES_KEPT`] failures (and reproducers) of each cell. Also the
//! fuzz report and its text. It prints nothing and writes no files.

use std::collections::HashMap;

use serde::Serialize;

use super::matrix::{run_matrix, Cell, Counts, FailureCase, MatrixSpec, Verdict, FAILURES_KEPT};
use crate::backend::stress::{page, Kind, Rng};
use crate::backend::{open, Engine, NAMES};
use cannery_codec::table::rules;
use cannery_codec::{Mode, Table};

/// Pages generated and checked at a time.
pub const BATCH: usize = 1024;

/// What `cannery fuzz` found.
#[derive(Clone, Debug, Serialize)]
pub struct FuzzReport {
    /// The backend under test.
    pub backend: String,
    /// The backends it was checked against.
    pub against: Vec<String>,
    /// Seed of the page generator.
    pub seed: u64,
    /// Pages generated.
    pub iterations: u64,
    /// The canned table's id.
    pub table: String,
    /// What ran, passed, failed and was skipped.
    pub counts: Counts,
    /// One cell per (mode, compressor, decompressor).
    pub matrix: Vec<Cell>,
    /// Whether skips were allowed.
    pub allow_skips: bool,
    /// The verdict.
    pub ok: bool,
}

impl FuzzReport {
    /// The verdict as a result (skips fail unless allowed).
    pub fn verdict(&self) -> Result<(), Verdict> {
        self.counts.verdict(self.allow_skips)
    }
}

/// The canned table to fuzz a backend with when none is named: kernel-2024
/// if the backend can compress with it (or cannot compress canned streams
/// at all), else its QPL-loadable variant (every symbol coded, within the
/// 56-bit budget).
pub fn default_table(under_test: &dyn Engine) -> Table {
    let k = Table::kernel_2024();
    let caps = under_test.capabilities();
    if !caps.can_compress(Mode::Canned) || caps.canned_compress_check(&k).is_ok() {
        return k;
    }
    rules::qpl_loadable_variant(&k)
}

/// The backends to open for fuzzing `backend`: it first, then `against`
/// (without it), or every other backend that opens here. An error if that
/// leaves nothing to compare with.
pub fn participants(backend: &str, against: Option<&[String]>) -> Result<Vec<String>, String> {
    let mut names = vec![backend.to_string()];
    match against {
        Some(list) => names.extend(list.iter().filter(|n| *n != backend).cloned()),
        None => names.extend(
            NAMES
                .iter()
                .filter(|n| **n != backend && open(n).is_ok())
                .map(|n| n.to_string()),
        ),
    }
    if names.len() == 1 {
        return Err(format!(
            "nothing to compare {backend} with: --against names only it, or no other backend \
             opens here"
        ));
    }
    Ok(names)
}

impl FuzzReport {
    /// The report of a run: `names` as [`participants`] gave them.
    pub fn new(
        names: &[String],
        seed: u64,
        iterations: u64,
        table: &Table,
        cells: Vec<Cell>,
        allow_skips: bool,
    ) -> FuzzReport {
        let counts = Counts::of(&cells, usize::try_from(iterations).unwrap_or(usize::MAX));
        FuzzReport {
            backend: names[0].clone(),
            against: names[1..].to_vec(),
            seed,
            iterations,
            table: table.id(),
            ok: counts.verdict(allow_skips).is_ok(),
            counts,
            matrix: cells,
            allow_skips,
        }
    }
}

/// Adds `b`'s checks to `a` (the same cell of another batch).
fn merge(a: &mut Cell, b: Cell) {
    a.pages += b.pages;
    a.passed += b.passed;
    a.failed += b.failed;
    a.incompressible += b.incompressible;
    a.compressed_bytes += b.compressed_bytes;
    for (k, n) in b.reencode {
        *a.reencode.entry(k).or_default() += n;
    }
    if b.status == "fail" {
        a.status = b.status;
    }
    a.compressor_path = b.compressor_path;
    let room = FAILURES_KEPT.saturating_sub(a.failures.len());
    a.failures.extend(b.failures.into_iter().take(room));
}

/// Generates `iterations` pages from `seed` (kinds in turn; mutations of
/// `corpus` pages too if it is not empty) and checks each through every
/// pair `spec` selects. `on_failure` hears at most [`FAILURES_KEPT`]
/// failures per cell over the whole run; `progress` hears the pages done.
#[allow(clippy::too_many_arguments)]
pub fn fuzz<E>(
    spec: &MatrixSpec<'_>,
    comps: &mut [Box<dyn Engine>],
    decomps: &mut [Box<dyn Engine>],
    seed: u64,
    iterations: u64,
    corpus: &[Vec<u8>],
    on_failure: &mut dyn FnMut(&FailureCase<'_>) -> Result<Option<String>, E>,
    progress: &mut dyn FnMut(u64),
) -> Result<Vec<Cell>, E> {
    let mut rng = Rng::new(seed);
    let mut kinds: Vec<Kind> = Kind::GENERATED.to_vec();
    if !corpus.is_empty() {
        kinds.push(Kind::Mutated);
    }
    let mut kept: HashMap<(String, String, String), usize> = HashMap::new();
    let mut merged: Option<Vec<Cell>> = None;
    let mut done = 0u64;
    while done < iterations {
        let n = (iterations - done).min(BATCH as u64) as usize;
        let mut pages = Vec::with_capacity(n);
        let mut labels = Vec::with_capacity(n);
        for i in done..done + n as u64 {
            let kind = kinds[(i % kinds.len() as u64) as usize];
            let base = (kind == Kind::Mutated).then(|| &corpus[rng.below(corpus.len())][..]);
            pages.push(page(kind, &mut rng, base));
            labels.push(format!("seed{seed}-iter{i}-{}", kind.name()));
        }
        let cells = run_matrix(
            spec,
            comps,
            decomps,
            &pages,
            &labels,
            &mut |f| {
                let key = (
                    f.mode.name().to_string(),
                    f.compressor.0.to_string(),
                    f.decompressor.0.to_string(),
                );
                let k = kept.entry(key).or_default();
                *k += 1;
                if *k > FAILURES_KEPT {
                    return Ok(None);
                }
                on_failure(f)
            },
            &mut |_, _| {},
        )?;
        merged = Some(match merged {
            None => cells,
            Some(mut all) => {
                for (a, b) in all.iter_mut().zip(cells) {
                    merge(a, b);
                }
                all
            }
        });
        done += n as u64;
        progress(done);
    }
    Ok(merged.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::software::Software;

    #[test]
    fn participants_need_someone_to_compare_with() {
        let only = ["software".to_string()];
        assert!(participants("software", Some(&only)).is_err());
        let two = ["software".to_string(), "zlib".to_string()];
        assert_eq!(participants("software", Some(&two)).unwrap(), two);
        assert_eq!(default_table(&Software::new()), Table::kernel_2024());
    }

    #[test]
    fn batches_merge_into_the_matrix_of_one_run() {
        let t = Table::kernel_2024();
        let spec = MatrixSpec {
            table: &t,
            modes: &[Mode::Canned, Mode::Fixed],
            only_involving: None,
        };
        let backends = || -> Vec<Box<dyn Engine>> { vec![Box::new(Software::new())] };
        let n = BATCH as u64 + 7;
        let mut heard = Vec::new();
        let cells = fuzz::<()>(
            &spec,
            &mut backends(),
            &mut backends(),
            5,
            n,
            &[],
            &mut |_| Ok(None),
            &mut |d| heard.push(d),
        )
        .unwrap();
        assert_eq!(heard, [BATCH as u64, n]);
        assert_eq!(cells.len(), 2);
        for c in &cells {
            assert_eq!(c.pages, n as usize, "{c:?}");
            assert_eq!(c.passed + c.incompressible, c.pages);
            assert_eq!(c.status, "pass");
        }
    }
}
