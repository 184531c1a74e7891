//! `cannery validate`'s report: the table checked against every backend's
//! canned-mode rules ([`rule_results`]), the matrix of every pair on the
//! pages ([`super::run_matrix`]), its counts and verdict, as one
//! serializable [`ValidationReport`] with its text form. The CLI and any
//! other caller read the pages, open the backends and print; this module
//! does neither.

use serde::Serialize;

use super::matrix::{run_matrix, Cell, Counts, FailureCase, MatrixSpec, Verdict};
use crate::backend::Engine;
use cannery_codec::mode::Mode;
use cannery_codec::table::Table;

/// A rule check of the table for one backend and direction.
#[derive(Clone, Debug, Serialize)]
pub struct RuleResult {
    /// Engine.
    pub backend: String,
    /// "compress" or "decompress" (canned mode).
    pub direction: &'static str,
    /// Rule name.
    pub rule: &'static str,
    /// True if the table follows it.
    pub ok: bool,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Checks `table` against the canned-mode rules each backend states in its
/// capabilities, for each direction it supports.
pub fn rule_results(table: &Table, backends: &[Box<dyn Engine>]) -> Vec<RuleResult> {
    let mut v = Vec::new();
    for b in backends {
        let caps = b.capabilities();
        let dirs = [
            (
                "compress",
                caps.can_compress(Mode::Canned),
                caps.canned_compress_rules,
            ),
            (
                "decompress",
                caps.can_decompress(Mode::Canned),
                caps.canned_decompress_rules,
            ),
        ];
        for (direction, able, rules) in dirs {
            for r in rules.iter().filter(|_| able) {
                let res = r.check(table);
                v.push(RuleResult {
                    backend: b.name().into(),
                    direction,
                    rule: r.name(),
                    ok: res.is_ok(),
                    detail: res.err(),
                });
            }
        }
    }
    v
}

/// The table a validation checked.
#[derive(Clone, Debug, Serialize)]
pub struct TableRef {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: Option<String>,
}

/// A backend as the report lists it.
#[derive(Clone, Debug, Serialize)]
pub struct BackendRef {
    /// Name.
    pub name: &'static str,
    /// Execution path (`software`, `hardware`).
    pub path: &'static str,
    /// Why that path, if the backend says.
    pub path_note: Option<String>,
}

/// What `cannery validate` found.
#[derive(Clone, Debug, Serialize)]
pub struct ValidationReport {
    /// The table.
    pub table: TableRef,
    /// The corpus, as the caller names it.
    pub corpus: String,
    /// Pages checked.
    pub pages: usize,
    /// The compressing backends.
    pub backends: Vec<BackendRef>,
    /// The table against each backend's canned-mode rules.
    pub rules: Vec<RuleResult>,
    /// One cell per (mode, compressor, decompressor).
    pub matrix: Vec<Cell>,
    /// What ran, passed, failed and was skipped.
    pub counts: Counts,
    /// Whether skips were allowed.
    pub allow_skips: bool,
    /// The verdict.
    pub ok: bool,
}

impl ValidationReport {
    /// The verdict as a result (skips fail unless allowed).
    pub fn verdict(&self) -> Result<(), Verdict> {
        self.counts.verdict(self.allow_skips)
    }
}

/// Validates `table` on `pages` (labelled by `sources`) with every
/// compressor in `comps` against every decompressor in `decomps`, in
/// `modes`; `reproduce` keeps each failure (returns where it went);
/// `progress` hears (pages compressed, of how many) now and then. The
/// report names the corpus `corpus`.
#[allow(clippy::too_many_arguments)]
pub fn validate<E>(
    table: &Table,
    corpus: &str,
    modes: &[Mode],
    comps: &mut [Box<dyn Engine>],
    decomps: &mut [Box<dyn Engine>],
    pages: &[Vec<u8>],
    sources: &[String],
    allow_skips: bool,
    reproduce: &mut dyn FnMut(&FailureCase<'_>) -> Result<Option<String>, E>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ValidationReport, E> {
    let rules = rule_results(table, comps);
    let spec = MatrixSpec {
        table,
        modes,
        only_involving: None,
    };
    let cells = run_matrix(&spec, comps, decomps, pages, sources, reproduce, progress)?;
    let counts = Counts::of(&cells, pages.len());
    let ok = counts.verdict(allow_skips).is_ok();
    Ok(ValidationReport {
        table: TableRef {
            id: table.id(),
            name: table.name.clone(),
        },
        corpus: corpus.to_string(),
        pages: pages.len(),
        backends: comps
            .iter()
            .map(|b| BackendRef {
                name: b.name(),
                path: b.capabilities().path.name(),
                path_note: b.capabilities().path_note.clone(),
            })
            .collect(),
        rules,
        matrix: cells,
        counts,
        allow_skips,
        ok,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::software::Software;

    #[test]
    fn the_software_backend_validates_the_kernel_table() {
        let t = Table::kernel_2024();
        let pages: Vec<Vec<u8>> = (0..3u8)
            .map(|i| (0..4096u32).map(|j| (j / 40) as u8 ^ i).collect())
            .collect();
        let sources: Vec<String> = (0..3).map(|i| format!("w#{i}")).collect();
        let mut comps: Vec<Box<dyn Engine>> = vec![Box::new(Software::new())];
        let mut decomps: Vec<Box<dyn Engine>> = vec![Box::new(Software::new())];
        let r = validate::<()>(
            &t,
            "test",
            &[Mode::Canned, Mode::Fixed],
            &mut comps,
            &mut decomps,
            &pages,
            &sources,
            false,
            &mut |_| Ok(None),
            &mut |_, _| {},
        )
        .unwrap();
        assert!(r.ok && r.verdict().is_ok(), "{:?}", r.counts);
        assert_eq!(r.pages, 3);
        assert!(r.rules.iter().all(|x| x.ok));
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["ok"], true);
        assert_eq!(json["backends"][0]["name"], "software");
    }
}
