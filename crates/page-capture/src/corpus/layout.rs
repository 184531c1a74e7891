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

/// The one rule for naming a corpus: an existing path is used as it is; a
/// bare name (one component) that is not a path is looked up as
/// `corpora/NAME` in the current directory, then in each parent, so
/// `--corpus fleet-snapshots` works anywhere inside the repository. Any
/// other missing path is [`ErrorKind::NotFound`].
pub fn resolve(path: &Path) -> Result<PathBuf> {
    if path.exists() {
        return Ok(path.to_path_buf());
    }
    if path.components().count() == 1 {
        let mut dir = std::env::current_dir()
            .map_err(|e| Error::io(Path::new("."), "cannot read the current directory", e))?;
        loop {
            let cand = dir.join(CORPORA_DIR).join(path);
            if cand.exists() {
                return Ok(cand);
            }
            if !dir.pop() {
                break;
            }
        }
        return Err(Error::new(
            ErrorKind::NotFound,
            format!(
                "corpus {:?} not found: no such path, and no {CORPORA_DIR}/{} in the current \
                 directory or any parent",
                path.display().to_string(),
                path.display()
            ),
        ));
    }
    Err(Error::new(
        ErrorKind::NotFound,
        format!("corpus {} not found", path.display()),
    ))
}

impl Corpus {
    /// Open a corpus named by [`resolve`]'s rule. A directory: each
    /// sub-directory holding page files is a workload, and page files
    /// directly inside form one workload named after the directory; other
    /// files (READMEs, scripts) are ignored. A file: one workload named after
    /// the file stem.
    pub fn open(path: &Path) -> Result<Corpus> {
        let root = resolve(path)?;
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

    /// Zero and same-filled pages the captures of this workload counted
    /// without storing, in proportion to the pages they stored
    /// ([`crate::PageCounts::unstored_same_filled`]); 0 for raw `.pages`
    /// files. Reads each file's header only.
    pub fn unstored_same_filled(&self) -> Result<f64> {
        unstored_same_filled(&self.files)
    }
}

/// [`Workload::unstored_same_filled`] of any list of page files.
pub fn unstored_same_filled(files: &[PathBuf]) -> Result<f64> {
    let mut total = 0.0;
    for f in files {
        let reader = open_pages(f)?;
        let h = reader.header();
        if !h.raw {
            total += h.counts.unstored_same_filled();
        }
    }
    Ok(total)
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
