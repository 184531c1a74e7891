//! How a corpus is laid out on disk: a directory of workloads (one
//! sub-directory each, or page files directly inside), or a single page
//! file; bare names are looked up under `corpora/`. Streams a workload's
//! files one after another through [`super::reader`]. Does not parse page
//! files itself and does not summarize ([`super::summary`]).

#![forbid(unsafe_code)]

use super::reader::{is_raw_pages, open_pages, Page, PageReader};
use crate::error::{Error, ErrorKind, Result};
use crate::snapshot::is_snapshot;
use std::path::{Path, PathBuf};

/// A corpus on disk.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// The directory or file it was opened from.
    pub root: PathBuf,
    /// Its workloads, sorted by name.
    pub workloads: Vec<Workload>,
}

/// One workload: a name and its page files (sorted).
#[derive(Debug, Clone)]
pub struct Workload {
    /// The directory name (or file stem).
    pub name: String,
    /// Snapshot and raw `.pages` files.
    pub files: Vec<PathBuf>,
}

/// The corpora directory searched when a bare name is given.
pub const CORPORA_DIR: &str = "corpora";

impl Corpus {
    /// Open a corpus. A directory: each sub-directory holding page files is
    /// a workload, and page files directly inside form one workload named
    /// after the directory; other files (READMEs, scripts) are ignored. A
    /// file: one workload named after the file stem. If `path` does not exist
    /// and is a bare name (one component), `corpora/NAME` under the current
    /// directory is tried, so `--corpus fleet-snapshots` works from the
    /// repository root.
    pub fn open(path: &Path) -> Result<Corpus> {
        let mut root = path.to_path_buf();
        if !root.exists() && path.components().count() == 1 {
            let alt = Path::new(CORPORA_DIR).join(path);
            if alt.exists() {
                root = alt;
            }
        }
        let meta =
            std::fs::metadata(&root).map_err(|e| Error::io(&root, "cannot open corpus", e))?;
        let mut workloads = Vec::new();
        if meta.is_file() {
            // Validate early so a bad file is reported at open.
            open_pages(&root)?;
            let name = root
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("pages")
                .to_string();
            workloads.push(Workload {
                name,
                files: vec![root.clone()],
            });
        } else {
            let loose = page_files(&root)?;
            if !loose.is_empty() {
                let name = root
                    .file_name()
                    .and_then(|s| s.to_str())
                    .unwrap_or("corpus")
                    .to_string();
                workloads.push(Workload { name, files: loose });
            }
            let mut dirs: Vec<PathBuf> = read_dir_sorted(&root)?
                .into_iter()
                .filter(|p| p.is_dir())
                .collect();
            dirs.sort();
            for d in dirs {
                let files = page_files(&d)?;
                if files.is_empty() {
                    continue;
                }
                let name = d
                    .file_name()
                    .and_then(|s| s.to_str())
                    .unwrap_or("workload")
                    .to_string();
                workloads.push(Workload { name, files });
            }
            if workloads.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "{}: no snapshot or .pages files found (expected one sub-directory per workload)",
                        root.display()
                    ),
                ));
            }
        }
        Ok(Corpus { root, workloads })
    }
}

fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::io(dir, "cannot list", e))?;
    let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    v.sort();
    Ok(v)
}

fn page_files(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(read_dir_sorted(dir)?
        .into_iter()
        .filter(|p| p.is_file() && (is_raw_pages(p) || is_snapshot(p)))
        .collect())
}

/// Streams every page of every file of a workload, file by file.
#[derive(Debug)]
pub struct PageIter {
    files: std::vec::IntoIter<PathBuf>,
    current: Option<PageReader>,
}

impl Workload {
    /// Stream all pages of all files in order.
    pub fn pages(&self) -> Result<PageIter> {
        Ok(PageIter {
            files: self.files.clone().into_iter(),
            current: None,
        })
    }
}

impl Iterator for PageIter {
    type Item = Result<Page>;

    fn next(&mut self) -> Option<Result<Page>> {
        loop {
            if let Some(r) = &mut self.current {
                match r.next() {
                    Some(item) => {
                        if item.is_err() {
                            self.current = None;
                            self.files = Vec::new().into_iter();
                        }
                        return Some(item);
                    }
                    None => self.current = None,
                }
            }
            let path = self.files.next()?;
            match open_pages(&path) {
                Ok(r) => self.current = Some(r),
                Err(e) => {
                    self.files = Vec::new().into_iter();
                    return Some(Err(e));
                }
            }
        }
    }
}
