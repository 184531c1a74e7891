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
        let entries = self.sorted_entries(root)?;
        let (loose, mut others) = self.page_files_of(entries)?;
        if !loose.is_empty() {
            let name = root.file_name().map_or("corpus".into(), workload_name);
            workloads.push(Workload { name, files: loose });
        }
        others.retain(|p| self.view.kind(p) == Kind::Dir);
        for d in others {
            let files = match self.sorted_entries(&d).and_then(|e| self.page_files_of(e)) {
                Ok((f, _)) => f,
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
        let listed = (self.view.list(dir)).map_err(|e| Error::io(dir, "cannot list", e))?;
        let mut entries = Vec::with_capacity(listed.len());
        for p in listed {
            if !is_skipped_name(&p) {
                entries.push(p);
                continue;
            }
            // Paths of listings are joined from names: equal as paths is
            // equal as bytes (a `Path` comparison walks components).
            let seen = (self.plan.skipped.iter()).any(|q| q.as_os_str() == p.as_os_str());
            if self.view.kind(&p) == Kind::File && !seen {
                self.plan.skipped.push(p);
            }
        }
        // Entries of one listing are `dir` joined with a name, so they sort
        // as the bytes of their names do: compared past the shared part (as
        // `Path`s each comparison walks components; as whole paths each
        // `memcmp` reads the shared part again, which the fuzz target's
        // interceptor makes costly).
        let dir = dir.as_os_str().as_bytes();
        let at = dir.len() + usize::from(joins_with_separator(dir));
        fn name(p: &Path, at: usize) -> &[u8] {
            p.as_os_str().as_bytes().get(at..).unwrap_or_default()
        }
        entries.sort_by(|a, b| name(a, at).cmp(name(b, at)));
        Ok(entries)
    }

    /// The page files among a directory's `entries` (as
    /// [`Rule::sorted_entries`] gives them): `.pages` files and snapshots
    /// (by their magic); and the entries that are not regular files. A file
    /// named as one (`.pages`, `.cansnap`) that cannot be opened is an
    /// error naming it, never a workload silently missing (unless
    /// skip_unreadable).
    fn page_files_of(&mut self, entries: Vec<PathBuf>) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
        let mut files = Vec::with_capacity(entries.len());
        let mut others = Vec::new();
        self.plan.read.reserve(entries.len());
        for p in entries {
            if self.view.kind(&p) != Kind::File {
                others.push(p);
                continue;
            }
            let raw = is_raw_pages(&p);
            let named =
                raw || p.extension().and_then(|e| e.to_str()) == Some(crate::snapshot::EXTENSION);
            if named {
                self.plan.read.push(p.clone());
                if let Err(e) = self.view.open(&p) {
                    if self.skip_unreadable {
                        self.plan.unreadable.push(p);
                        continue;
                    }
                    return Err(Error::io(&p, "cannot read", e));
                }
            }
            let page_file = raw || self.view.is_snapshot(&p);
            // A file not named as one was read for its magic. Only a path
            // kept in both lists is cloned (most files are in neither).
            match (named, page_file) {
                (false, false) => self.plan.read.push(p),
                (false, true) => {
                    self.plan.read.push(p.clone());
                    files.push(p);
                }
                (true, true) => files.push(p),
                (true, false) => {}
            }
        }
        Ok((files, others))
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
        fn bytes(p: &Path) -> &[u8] {
            p.as_os_str().as_bytes()
        }
        // Each path's first entry: sorted stably by path, the first of each
        // run of equal paths is the first listed.
        let mut by_path: Vec<(&[u8], usize)> = (self.entries.iter().enumerate())
            .map(|(i, (p, _))| (bytes(p), i))
            .collect();
        by_path.sort_by(|a, b| key(a.0).cmp(&key(b.0)));
        by_path.dedup_by(|later, first| later.0 == first.0);
        // Each directory's children (first entries only), in listing order,
        // by the directory's first entry. A child whose parent is no entry
        // is never listed.
        let mut children: Vec<(usize, usize)> = Vec::with_capacity(by_path.len());
        for &(_, i) in &by_path {
            let p = &self.entries[i].0;
            if let (Some(parent), Some(_)) = (p.parent(), p.file_name()) {
                if let Some(d) = first_entry(&by_path, bytes(parent)) {
                    children.push((d, i));
                }
            }
        }
        children.sort_unstable();
        let mut view = TreeView {
            root,
            root_lists: self.root_lists,
            entries: &self.entries,
            by_path,
            children,
        };
        plan_dir(&mut view, root, skip_unreadable)
    }
}

/// The order of [`TreeView`]'s indexes: by length, then bytes (most
/// comparisons end at the lengths, before a `memcmp`, which the fuzzer
/// intercepts and traces).
fn key(path: &[u8]) -> (usize, &[u8]) {
    (path.len(), path)
}

/// The first entry at the relative path `rel` in `by_path` (sorted by
/// [`key`]); [`ROOT`] for "".
fn first_entry(by_path: &[(&[u8], usize)], rel: &[u8]) -> Option<usize> {
    if rel.is_empty() {
        return Some(ROOT);
    }
    let i = by_path.binary_search_by(|e| key(e.0).cmp(&key(rel))).ok()?;
    Some(by_path[i].1)
}

/// The root directory in [`TreeView::children`], where entries are indexes.
const ROOT: usize = usize::MAX;

/// A [`Tree`] as a [`View`], at `root`, indexed by the bytes of relative
/// paths in vectors sorted by [`key`] (no hashing, few allocations: the
/// fuzz target plans two trees an input).
struct TreeView<'a> {
    root: &'a Path,
    root_lists: bool,
    /// The tree's entries.
    entries: &'a [(PathBuf, Entry)],
    /// Each path and the index of its first entry, sorted by [`key`].
    by_path: Vec<(&'a [u8], usize)>,
    /// Each first entry's parent (its first entry, or [`ROOT`]) and index,
    /// sorted (a parent's children in listing order).
    children: Vec<(usize, usize)>,
}

impl TreeView<'_> {
    /// The bytes of `path` relative to the root. `path` is the root or was
    /// made from it by [`Path::join`] (as [`View::list`] makes them): the
    /// root's bytes, a separator unless the root is empty or ends in one,
    /// then the relative path's. `None` for other paths.
    fn relative<'p>(&self, path: &'p Path) -> Option<&'p [u8]> {
        let root = self.root.as_os_str().as_bytes();
        let rest = path.as_os_str().as_bytes().strip_prefix(root)?;
        if rest.is_empty() || !joins_with_separator(root) {
            return Some(rest);
        }
        rest.strip_prefix(b"/")
    }

    /// The index of the first entry at `path` ([`ROOT`] for the root),
    /// `None` when missing.
    fn index(&self, path: &Path) -> Option<usize> {
        first_entry(&self.by_path, self.relative(path)?)
    }

    /// The entry at `path` (the root is a directory), `None` when missing.
    fn entry(&self, path: &Path) -> Option<Entry> {
        self.index(path).map(|i| self.entry_of(i))
    }

    /// The entry at index `i` of the tree, or the root.
    fn entry_of(&self, i: usize) -> Entry {
        match i {
            ROOT => Entry::Dir {
                lists: self.root_lists,
            },
            _ => self.entries[i].1,
        }
    }
}

/// Whether [`Path::join`] puts a separator between `dir` and a name: unless
/// `dir` is empty or ends in one.
fn joins_with_separator(dir: &[u8]) -> bool {
    !dir.is_empty() && !dir.ends_with(b"/")
}

/// `root.join(path)` in one allocation (`join` copies `root`, then grows
/// the copy: two, which ASan makes costly in the fuzz target).
fn join(root: &Path, path: &Path) -> PathBuf {
    let mut p = PathBuf::with_capacity(root.as_os_str().len() + 1 + path.as_os_str().len());
    p.push(root);
    p.push(path);
    p
}

fn os_error(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

impl View for TreeView<'_> {
    fn list(&mut self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let Some(d) = self.index(dir) else {
            return Err(os_error(libc::ENOENT));
        };
        match self.entry_of(d) {
            Entry::Dir { lists: true } => {}
            Entry::Dir { lists: false } => return Err(os_error(libc::EACCES)),
            Entry::File { .. } => return Err(os_error(libc::ENOTDIR)),
            Entry::Other => return Err(os_error(libc::ENOENT)),
        }
        let from = self.children.partition_point(|c| c.0 < d);
        let to = from + self.children[from..].partition_point(|c| c.0 == d);
        Ok(self.children[from..to]
            .iter()
            .map(|c| join(self.root, &self.entries[c.1].0))
            .collect())
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
