//! The layout rule of a corpus directory, written once over a view of a
//! file system: which sub-directories are workloads, named how, from which
//! files in which order, which hidden or partial files are passed over,
//! which unreadable entries are skipped and which refuse the corpus.
//! [`Corpus::open`](super::Corpus::open) runs it on the real directory
//! ([`Disk`]); a [`Tree`] is a directory described in memory, so the fuzz
//! target `corpus_layout` and the tests run the same rule with no file
//! system ([`Tree::plan`], a pure function).

#![forbid(unsafe_code)]

use super::layout::{is_skipped_name, workload_name, Workload};
use super::reader::is_raw_pages;
use crate::error::{Error, ErrorKind, Result};
use std::collections::HashMap;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What a path is, following symbolic links (as `Path::is_file` and
/// `Path::is_dir` tell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    File,
    Dir,
    /// Missing, a dangling or looping link, a FIFO, a socket, a device.
    Other,
}

/// The only questions the layout rule asks of a file system.
pub(super) trait View {
    /// The entries of `dir` (full paths), in any order.
    fn list(&mut self, dir: &Path) -> io::Result<Vec<PathBuf>>;
    /// What `path` is, following links.
    fn kind(&mut self, path: &Path) -> Kind;
    /// Whether the regular file `path` opens for reading.
    fn open(&mut self, path: &Path) -> io::Result<()>;
    /// Whether the regular file `path` begins with the snapshot magic.
    fn is_snapshot(&mut self, path: &Path) -> bool;
}

/// The real file system.
pub(super) struct Disk;

impl View for Disk {
    fn list(&mut self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        std::fs::read_dir(dir)?
            .map(|e| e.map(|e| e.path()))
            .collect()
    }

    fn kind(&mut self, path: &Path) -> Kind {
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => Kind::File,
            Ok(m) if m.is_dir() => Kind::Dir,
            _ => Kind::Other,
        }
    }

    fn open(&mut self, path: &Path) -> io::Result<()> {
        std::fs::File::open(path).map(drop)
    }

    fn is_snapshot(&mut self, path: &Path) -> bool {
        crate::snapshot::is_snapshot(path)
    }
}

/// The layout decision for one corpus directory.
#[derive(Debug)]
pub struct Plan {
    /// Its workloads in order (the files directly inside first, named after
    /// the directory, then one per sub-directory by name), each with its
    /// page files in order; or why the corpus is refused.
    pub workloads: Result<Vec<Workload>>,
    /// Regular files passed over as hidden or partial ([`is_skipped_name`]),
    /// each once, in the order they were met.
    pub skipped: Vec<PathBuf>,
    /// Page files and workload directories that could not be read and were
    /// passed over (only with `skip_unreadable`).
    pub unreadable: Vec<PathBuf>,
    /// The files whose contents the rule looked at (opened to see that they
    /// open, or read for the snapshot magic), in order.
    pub read: Vec<PathBuf>,
}

impl Plan {
    fn empty() -> Plan {
        Plan {
            workloads: Ok(Vec::new()),
            skipped: Vec::new(),
            unreadable: Vec::new(),
            read: Vec::new(),
        }
    }
}

/// The rule of [`Corpus::open`](super::Corpus::open) for the directory
/// `root`, asking `view` about it; `skip_unreadable` as
/// [`super::set_skip_unreadable`].
pub(super) fn plan_dir(view: &mut impl View, root: &Path, skip_unreadable: bool) -> Plan {
    let mut plan = Plan::empty();
    let mut rule = Rule {
        view,
        skip_unreadable,
        plan: &mut plan,
    };
    let workloads = rule.workloads(root);
    plan.workloads = workloads;
    plan
}

/// One run of the rule: the view it asks and the plan it fills.
struct Rule<'a, V> {
    view: &'a mut V,
    skip_unreadable: bool,
    plan: &'a mut Plan,
}

impl<V: View> Rule<'_, V> {
    fn workloads(&mut self, root: &Path) -> Result<Vec<Workload>> {
        let mut workloads = Vec::new();
        // One listing of the root gives its page files and its directories.
        let mut entries = self.sorted_entries(root)?;
        let loose = self.page_files_of(&entries)?;
        if !loose.is_empty() {
            let name = root.file_name().map_or("corpus".into(), workload_name);
            workloads.push(Workload { name, files: loose });
        }
        entries.retain(|p| self.view.kind(p) == Kind::Dir);
        for d in entries {
            let files = match self.sorted_entries(&d).and_then(|e| self.page_files_of(&e)) {
                Ok(f) => f,
                // With skip_unreadable, a file that does not open is
                // skipped inside page_files_of: the error is d's listing.
                Err(_) if self.skip_unreadable => {
                    self.plan.unreadable.push(d);
                    continue;
                }
                Err(e) => return Err(e),
            };
            if files.is_empty() {
                continue;
            }
            let name = d.file_name().map_or("workload".into(), workload_name);
            if let Some(w) = workloads.iter().find(|w| w.name == name) {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    format!(
                        "{}: two workloads are named {name:?} ({} and {}); rename one",
                        root.display(),
                        w.files[0].parent().unwrap_or(root).display(),
                        d.display()
                    ),
                ));
            }
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
        Ok(workloads)
    }

    /// The entries of `dir`, sorted, without those [`is_skipped_name`]
    /// skips (the regular files among them noted in the plan).
    fn sorted_entries(&mut self, dir: &Path) -> Result<Vec<PathBuf>> {
        let mut entries = (self.view.list(dir)).map_err(|e| Error::io(dir, "cannot list", e))?;
        entries.retain(|p| {
            if !is_skipped_name(p) {
                return true;
            }
            if self.view.kind(p) == Kind::File && !self.plan.skipped.contains(p) {
                self.plan.skipped.push(p.clone());
            }
            false
        });
        // Entries of one listing share their parent, so their bytes sort
        // as their names do (as `Path`s, each comparison walks components).
        entries.sort_by(|a, b| a.as_os_str().as_bytes().cmp(b.as_os_str().as_bytes()));
        Ok(entries)
    }

    /// The page files among a directory's `entries` (as
    /// [`Rule::sorted_entries`] gives them): `.pages` files and snapshots
    /// (by their magic). A file named as one (`.pages`, `.cansnap`) that
    /// cannot be opened is an error naming it, never a workload silently
    /// missing (unless skip_unreadable).
    fn page_files_of(&mut self, entries: &[PathBuf]) -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for p in entries {
            if self.view.kind(p) != Kind::File {
                continue;
            }
            let named = is_raw_pages(p)
                || p.extension().and_then(|e| e.to_str()) == Some(crate::snapshot::EXTENSION);
            if named {
                self.plan.read.push(p.clone());
                if let Err(e) = self.view.open(p) {
                    if self.skip_unreadable {
                        self.plan.unreadable.push(p.clone());
                        continue;
                    }
                    return Err(Error::io(p, "cannot read", e));
                }
            }
            let page_file = is_raw_pages(p) || {
                if !named {
                    self.plan.read.push(p.clone());
                }
                self.view.is_snapshot(p)
            };
            if page_file {
                files.push(p.clone());
            }
        }
        Ok(files)
    }
}

/// The entries of `dir`, sorted, without those [`is_skipped_name`] skips,
/// and the regular files among those skipped.
pub(super) fn sorted_entries(dir: &Path) -> (Result<Vec<PathBuf>>, Vec<PathBuf>) {
    let mut plan = Plan::empty();
    let entries = Rule {
        view: &mut Disk,
        skip_unreadable: false,
        plan: &mut plan,
    }
    .sorted_entries(dir);
    (entries, plan.skipped)
}

/// One entry of a [`Tree`], as the layout rule sees it (links followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// A regular file or a link to one: whether it opens for reading, and
    /// whether it begins with the snapshot magic.
    File {
        /// `File::open` succeeds.
        opens: bool,
        /// Its first 8 bytes are the snapshot magic.
        snapshot: bool,
    },
    /// A directory or a link to one: whether it can be listed.
    Dir {
        /// `read_dir` succeeds.
        lists: bool,
    },
    /// Anything else: a dangling or looping link, a FIFO, a socket, a device.
    Other,
}

/// A directory tree described in memory: entries by path relative to its
/// root, in the order a listing gives them (any order: the rule sorts). The
/// first entry of a path counts; an entry is reached only through listable
/// directories, as on a real file system.
#[derive(Debug, Clone)]
pub struct Tree {
    /// Whether the root directory itself can be listed.
    pub root_lists: bool,
    /// The entries: relative paths of normal components, and what they are.
    pub entries: Vec<(PathBuf, Entry)>,
}

impl Tree {
    /// The decision [`Corpus::open`](super::Corpus::open) makes for this
    /// tree laid out at the directory `root` (which only names things: no
    /// file system is touched), with `skip_unreadable` as
    /// [`super::set_skip_unreadable`] sets it.
    pub fn plan(&self, root: &Path, skip_unreadable: bool) -> Plan {
        let mut view = TreeView {
            root,
            root_lists: self.root_lists,
            by_path: HashMap::new(),
            children: HashMap::new(),
        };
        for (p, e) in &self.entries {
            let key = p.as_os_str().as_bytes();
            if view.by_path.contains_key(key) {
                continue;
            }
            view.by_path.insert(key, *e);
            if let (Some(parent), Some(_)) = (p.parent(), p.file_name()) {
                let parent = parent.as_os_str().as_bytes();
                view.children.entry(parent).or_default().push(p);
            }
        }
        plan_dir(&mut view, root, skip_unreadable)
    }
}

/// A [`Tree`] as a [`View`], at `root`, indexed by the bytes of relative
/// paths.
struct TreeView<'a> {
    root: &'a Path,
    root_lists: bool,
    /// Each entry (the first of its path).
    by_path: HashMap<&'a [u8], Entry>,
    /// The paths in each directory, in listing order.
    children: HashMap<&'a [u8], Vec<&'a Path>>,
}

impl TreeView<'_> {
    /// The entry at `path` (the root is a directory), `None` when missing.
    fn entry(&self, path: &Path) -> Option<Entry> {
        let rel = path.strip_prefix(self.root).ok()?.as_os_str().as_bytes();
        if rel.is_empty() {
            return Some(Entry::Dir {
                lists: self.root_lists,
            });
        }
        self.by_path.get(rel).copied()
    }
}

fn os_error(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

impl View for TreeView<'_> {
    fn list(&mut self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        match self.entry(dir) {
            Some(Entry::Dir { lists: true }) => {}
            Some(Entry::Dir { lists: false }) => return Err(os_error(libc::EACCES)),
            Some(Entry::File { .. }) => return Err(os_error(libc::ENOTDIR)),
            Some(Entry::Other) | None => return Err(os_error(libc::ENOENT)),
        }
        let rel = dir.strip_prefix(self.root).unwrap_or(dir);
        let children = self.children.get(rel.as_os_str().as_bytes());
        Ok(children.map_or(Vec::new(), |c| {
            c.iter().map(|p| self.root.join(p)).collect()
        }))
    }

    fn kind(&mut self, path: &Path) -> Kind {
        match self.entry(path) {
            Some(Entry::File { .. }) => Kind::File,
            Some(Entry::Dir { .. }) => Kind::Dir,
            Some(Entry::Other) | None => Kind::Other,
        }
    }

    fn open(&mut self, path: &Path) -> io::Result<()> {
        match self.entry(path) {
            Some(Entry::File { opens: true, .. }) => Ok(()),
            Some(Entry::File { opens: false, .. }) => Err(os_error(libc::EACCES)),
            _ => Err(os_error(libc::ENOENT)),
        }
    }

    fn is_snapshot(&mut self, path: &Path) -> bool {
        matches!(
            self.entry(path),
            Some(Entry::File {
                opens: true,
                snapshot: true
            })
        )
    }
}
