//! How a corpus is laid out on disk: a directory of workloads (one
//! sub-directory each, or page files directly inside), or a single page
//! file; bare names are looked up under `corpora/`. Streams a workload's
//! files one after another through [`super::reader`]. Does not parse page
//! files itself and does not summarize ([`super::summary`]).

#![forbid(unsafe_code)]

use super::plan::{plan_dir, Disk, Plan};
use super::reader::{open_pages, Page, PageReader};
use crate::error::{Error, ErrorKind, Result};
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
        let workloads = if meta.is_file() {
            // Validate early so a bad file is reported at open.
            open_pages(&root)?;
            let name = root.file_stem().map_or("pages".into(), workload_name);
            vec![Workload {
                name,
                files: vec![root.clone()],
            }]
        } else {
            // The rule itself: super::plan, the same code the fuzz target
            // `corpus_layout` runs on directories described in memory.
            let skip = SKIP_UNREADABLE.load(std::sync::atomic::Ordering::SeqCst);
            let plan = plan_dir(&mut Disk, &root, skip);
            note_plan(&plan);
            plan.workloads?
        };
        Ok(Corpus { root, workloads })
    }
}

/// A workload's name from its directory or file name: the name itself when
/// it is UTF-8, else with each byte that is not part of valid UTF-8 written
/// as `\xNN`, so two different names never become the same workload.
pub fn workload_name(name: &std::ffi::OsStr) -> String {
    use std::fmt::Write;
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::with_capacity(name.len());
    for chunk in name.as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            write!(out, "\\x{b:02x}").expect("a String takes any text");
        }
    }
    out
}

impl Corpus {
    /// The pages of every workload in order, at most `limit` of each
    /// workload (its first ones), in memory, each labelled `workload#index`
    /// (for checks that report which page failed). An error if the corpus
    /// holds no pages.
    pub fn read_pages(&self, limit: Option<usize>) -> Result<(Vec<Vec<u8>>, Vec<String>)> {
        self.read_pages_every(1, limit)
    }

    /// As [`Corpus::read_pages`], but only every `step`-th page of each
    /// workload (pages 0, `step`, 2 × `step`, …: samples spread over a
    /// capture), at most `limit` of them per workload.
    pub fn read_pages_every(
        &self,
        step: usize,
        limit: Option<usize>,
    ) -> Result<(Vec<Vec<u8>>, Vec<String>)> {
        let limit = limit.unwrap_or(usize::MAX);
        let (mut pages, mut labels) = (Vec::new(), Vec::new());
        for w in &self.workloads {
            for (i, page) in w.pages()?.enumerate().step_by(step.max(1)).take(limit) {
                pages.push(page?.data);
                labels.push(format!("{}#{i}", w.name));
            }
        }
        if pages.is_empty() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("corpus {} holds no pages", self.root.display()),
            ));
        }
        Ok((pages, labels))
    }
}

/// Files every corpus reader skipped, by [`is_skipped_name`].
static SKIPPED: std::sync::Mutex<std::collections::BTreeSet<PathBuf>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// The one rule of every corpus reader (`corpus info/export`, `train`,
/// `stats`, `eval`, `scan-secrets`, the Python loaders): a hidden entry
/// (`.name`, which includes the `.NAME.PID.N.partial` files of writers
/// that were killed) or one whose name ends in `.partial` is not read.
/// The name's bytes decide, so a name that is not UTF-8 is no exception.
pub fn is_skipped_name(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    path.file_name()
        .map(|n| n.as_bytes())
        .is_some_and(|n| n.starts_with(b".") || n.ends_with(b".partial"))
}

/// Every regular file this process's corpus readers skipped as hidden or
/// partial, each once: callers say how many.
pub fn skipped_files() -> Vec<PathBuf> {
    let set = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    set.iter().cloned().collect()
}

/// Page files and directories the corpus readers could not read and
/// skipped, with [`set_skip_unreadable`].
static UNREADABLE: std::sync::Mutex<std::collections::BTreeSet<PathBuf>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Whether an unreadable page file inside a corpus directory is skipped
/// (with a warning and a count, `--skip-unreadable`) instead of failing.
static SKIP_UNREADABLE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on, a page file (or workload directory) inside a corpus
/// directory that cannot be read is skipped and remembered
/// ([`unreadable_files`]) instead of failing the read; a file named
/// directly is still an error. For `--skip-unreadable`.
pub fn set_skip_unreadable(on: bool) {
    SKIP_UNREADABLE.store(on, std::sync::atomic::Ordering::SeqCst);
}

/// Every page file or workload directory skipped as unreadable, each once:
/// callers say how many.
pub fn unreadable_files() -> Vec<PathBuf> {
    let set = UNREADABLE.lock().unwrap_or_else(|e| e.into_inner());
    set.iter().cloned().collect()
}

/// Whether an unreadable `path` is to be skipped (and is remembered as
/// such), by [`set_skip_unreadable`].
pub(crate) fn skip_unreadable(path: &Path) -> bool {
    let skip = SKIP_UNREADABLE.load(std::sync::atomic::Ordering::SeqCst);
    if skip {
        let mut set = UNREADABLE.lock().unwrap_or_else(|e| e.into_inner());
        set.insert(path.to_path_buf());
    }
    skip
}

/// The entries of `dir`, sorted, without those [`is_skipped_name`] skips
/// (noted for [`skipped_files`]).
pub fn read_dir_sorted(dir: &Path) -> Result<Vec<PathBuf>> {
    let (entries, skipped) = super::plan::sorted_entries(dir);
    let mut set = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    set.extend(skipped);
    entries
}

/// Remembers what a run of the layout rule skipped, for [`skipped_files`]
/// and [`unreadable_files`].
fn note_plan(plan: &Plan) {
    SKIPPED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(plan.skipped.iter().cloned());
    UNREADABLE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(plan.unreadable.iter().cloned());
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
    /// ([`crate::PageCounts::unstored_same_filled`], summed and rounded to
    /// whole pages); for raw `.pages` files the pages in holes of a sparse
    /// file. Reads each file's header only.
    pub fn unstored_same_filled(&self) -> Result<u64> {
        unstored_same_filled(&self.files)
    }
}

/// [`Workload::unstored_same_filled`] of any list of page files.
pub fn unstored_same_filled(files: &[PathBuf]) -> Result<u64> {
    let mut total = 0.0;
    for f in files {
        let reader = open_pages(f)?;
        let h = reader.header();
        // A raw file's holes count as zero pages (0 for a file without).
        total += h.counts.unstored_same_filled();
    }
    Ok(total.round() as u64)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    fn pages_file(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("a.pages"), vec![7u8; crate::PAGE_SIZE]).unwrap();
    }

    #[test]
    fn workloads_with_non_utf8_names_stay_distinct() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("c");
        pages_file(&root.join(OsStr::from_bytes(b"w\xff")));
        pages_file(&root.join(OsStr::from_bytes(b"w\xfe")));
        pages_file(&root.join("w space"));
        pages_file(&root.join("w_space"));
        let c = Corpus::open(&root).unwrap();
        let names: Vec<&str> = c.workloads.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["w space", "w_space", "w\\xfe", "w\\xff"]);
    }

    /// Found by the fuzz target `corpus_layout`: the rule read names
    /// through `to_str`, so a hidden or partial name that is not UTF-8 (a
    /// killed writer's `.NAME.PID.N.partial` of such a NAME) was read as a
    /// page file.
    #[test]
    fn hidden_and_partial_names_that_are_not_utf8_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().join("c").join("w");
        pages_file(&w);
        for name in [
            &b".\xff.pages"[..],
            b"\xff.pages.partial",
            b".w\xff.cansnap.7.0.partial",
        ] {
            let p = w.join(OsStr::from_bytes(name));
            std::fs::write(&p, crate::snapshot::MAGIC).unwrap();
            assert!(is_skipped_name(&p), "{}", p.display());
        }
        let c = Corpus::open(&dir.path().join("c")).unwrap();
        assert_eq!(c.workloads.len(), 1);
        assert_eq!(c.workloads[0].files, [w.join("a.pages")]);
        assert!(!is_skipped_name(Path::new(OsStr::from_bytes(
            b"w/\xff.pages"
        ))));
    }

    #[test]
    fn pages_are_read_with_their_labels_up_to_a_limit() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.pages");
        std::fs::write(&f, vec![0u8; 4095]).unwrap();
        assert!(Corpus::open(&f).is_err(), "not whole pages");
        std::fs::write(&f, vec![7u8; 8192]).unwrap();
        let c = Corpus::open(dir.path()).unwrap();
        let (pages, labels) = c.read_pages(None).unwrap();
        assert_eq!(pages.len(), 2);
        assert!(labels[1].ends_with("#1"), "{labels:?}");
        assert_eq!(c.read_pages(Some(1)).unwrap().0.len(), 1);
        // The limit is per workload.
        std::fs::create_dir(dir.path().join("w2")).unwrap();
        std::fs::write(dir.path().join("w2/b.pages"), vec![8u8; 3 * 4096]).unwrap();
        std::fs::remove_file(&f).unwrap();
        std::fs::create_dir(dir.path().join("w1")).unwrap();
        std::fs::write(dir.path().join("w1/a.pages"), vec![7u8; 8192]).unwrap();
        let c = Corpus::open(dir.path()).unwrap();
        let (pages, labels) = c.read_pages(Some(2)).unwrap();
        assert_eq!(labels, ["w1#0", "w1#1", "w2#0", "w2#1"]);
        assert_eq!(pages.len(), 4);
        // Every second page of each workload, the limit counting those taken.
        let (pages, labels) = c.read_pages_every(2, None).unwrap();
        assert_eq!(labels, ["w1#0", "w2#0", "w2#2"]);
        assert_eq!(pages[2], vec![8u8; 4096]);
        let (_, labels) = c.read_pages_every(2, Some(1)).unwrap();
        assert_eq!(labels, ["w1#0", "w2#0"]);
    }

    #[test]
    fn a_loose_workload_and_a_directory_of_the_same_name_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fleet");
        pages_file(&root);
        pages_file(&root.join("fleet"));
        let e = Corpus::open(&root).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert!(e.to_string().contains("two workloads are named"), "{e}");
    }
}
