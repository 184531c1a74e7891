//! The files `cannery train` writes, planned before the work and filled in
//! after it: [`TrainFiles::plan`] names every table and dictionary file (so
//! existing ones can be refused before anything is trained), and
//! [`TrainFiles::contents`] turns a [`CorpusTraining`] into the bytes of
//! each, stamped with the time the caller gives
//! (`cannery_codec::timestamp::created_now`). Nothing here touches
//! the file system.

use std::path::{Path, PathBuf};

use cannery_codec::Table;
use cannery_trainer::train::fallback_table;

use crate::report::{dictionary_file_name, table_file_names, CorpusTraining};

/// Every file a corpus training writes under one directory.
#[derive(Clone, Debug)]
pub struct TrainFiles {
    /// The workloads, in corpus order.
    names: Vec<String>,
    /// One table file per workload, then `fleet`, then the clusters'.
    pub tables: Vec<PathBuf>,
    /// `(workload or "fleet", dictionary file)`, empty without dictionaries.
    pub dictionaries: Vec<(String, PathBuf)>,
}

impl TrainFiles {
    /// The files for `names` (the corpus's workloads, in order) and
    /// `clusters` cluster tables (0 for none) under `out`, with a
    /// dictionary beside each workload and fleet table when `dictionaries`.
    pub fn plan(out: &Path, names: Vec<String>, clusters: usize, dictionaries: bool) -> Self {
        let files = table_file_names(&names, clusters);
        let tables = files.iter().map(|f| out.join(f)).collect();
        let dictionaries = if dictionaries {
            names
                .iter()
                .cloned()
                .chain(std::iter::once("fleet".to_string()))
                .zip(&files)
                .map(|(n, f)| (n, out.join(dictionary_file_name(f))))
                .collect()
        } else {
            Vec::new()
        };
        TrainFiles {
            names,
            tables,
            dictionaries,
        }
    }

    /// Every planned path: the tables, then the dictionaries.
    pub fn every(&self) -> Vec<PathBuf> {
        self.tables
            .iter()
            .chain(self.dictionaries.iter().map(|(_, p)| p))
            .cloned()
            .collect()
    }

    /// The table file of workload `name`.
    ///
    /// # Panics
    /// If `name` is not one of the planned workloads.
    fn table_of(&self, name: &str) -> PathBuf {
        let i = self
            .names
            .iter()
            .position(|n| n == name)
            .expect("a corpus workload");
        self.tables[i].clone()
    }

    /// The bytes of each file of `out` (tables stamped `created`), and the
    /// warnings to print, in order: each skipped workload (with `fallback`
    /// its file gets the kernel-2024 table, whose provenance names
    /// `corpus/workload`) and each dictionary zstd's trainer could not make.
    pub fn contents(
        &self,
        out: &CorpusTraining,
        corpus: &str,
        created: &str,
        fallback: bool,
    ) -> (Vec<(PathBuf, Vec<u8>)>, Vec<String>) {
        let stamped = |t: &Table| {
            let mut t = t.clone();
            t.provenance.created = Some(created.to_string());
            t.to_json().into_bytes()
        };
        let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        let mut warnings = Vec::new();
        for t in &out.workload_tables {
            let name = t.name.as_deref().unwrap_or_default();
            files.push((self.table_of(name), stamped(t)));
        }
        for w in &out.report.workloads {
            if let Some(reason) = &w.skipped {
                warnings.push(format!("no table for workload {}: {reason}", w.name));
                if fallback {
                    let k = fallback_table(reason, Some(format!("{corpus}/{}", w.name)));
                    let path = self.table_of(&w.name);
                    warnings.push(format!(
                        "writing the kernel-2024 table to {} instead",
                        path.display()
                    ));
                    files.push((path, k.to_json().into_bytes()));
                }
            }
        }
        let n = self.names.len();
        files.push((self.tables[n].clone(), stamped(&out.fleet_table)));
        for (i, t) in out.cluster_tables.iter().enumerate() {
            files.push((self.tables[n + 1 + i].clone(), stamped(t)));
        }
        for (name, path) in &self.dictionaries {
            match out.dictionaries.iter().find(|(n, _)| n == name) {
                Some((_, d)) => files.push((path.clone(), d.clone())),
                None => warnings.push(format!(
                    "no dictionary for {name}: zstd's trainer found too little to learn from"
                )),
            }
        }
        (files, warnings)
    }
}

/// The file `train --histograms` writes the table `name` to under `out`:
/// `fleet.table.json` for `fleet`, else the workload table file of `name`.
pub fn histogram_table_path(out: &Path, name: &str) -> PathBuf {
    if name == "fleet" {
        out.join("fleet.table.json")
    } else {
        out.join(table_file_names(std::slice::from_ref(&name.to_string()), 0).remove(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_names_tables_then_fleet_then_clusters_and_dictionaries_beside() {
        let out = Path::new("o");
        let p = TrainFiles::plan(out, vec!["a".into(), "b c".into()], 2, true);
        let t: Vec<String> = p.tables.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(
            t,
            [
                "o/a.table.json",
                "o/b_c.table.json",
                "o/fleet.table.json",
                "o/cluster-0.table.json",
                "o/cluster-1.table.json"
            ]
        );
        let d: Vec<(String, String)> = p
            .dictionaries
            .iter()
            .map(|(n, p)| (n.clone(), p.display().to_string()))
            .collect();
        assert_eq!(
            d,
            [
                ("a".into(), "o/a.dict".into()),
                ("b c".into(), "o/b_c.dict".into()),
                ("fleet".into(), "o/fleet.dict".into())
            ]
        );
        assert_eq!(p.every().len(), 8);
        assert!(TrainFiles::plan(out, vec!["a".into()], 0, false)
            .dictionaries
            .is_empty());
        assert_eq!(p.table_of("b c"), Path::new("o/b_c.table.json"));
    }

    #[test]
    fn histogram_table_path_is_fleet_or_the_workload_file() {
        let out = Path::new("d");
        assert_eq!(
            histogram_table_path(out, "fleet"),
            Path::new("d/fleet.table.json")
        );
        assert_eq!(
            histogram_table_path(out, "web/1"),
            Path::new("d/web_1.table.json")
        );
    }
}
