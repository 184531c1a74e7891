//! The corpus layout rule (`Corpus::open` on a directory: workload names,
//! hidden and `.partial` files, workload directories, `.pages` files and
//! snapshots by magic) on a directory described in memory
//! (`layout_input.rs`), through `Tree::plan`, the same code `Corpus::open`
//! runs on a real directory. No panic; the plan is bounded by the tree;
//! the workload names are non-empty and distinct; no hidden or partial
//! entry (by its bytes) is read or becomes a page file; every refusal names
//! the offending entry; the plan does not depend on the order the entries
//! are listed in; without unreadable entries it equals a plain model of the
//! rule written here. One input in 64 is also laid out in a tmpfs and
//! opened with `Corpus::open`, which must agree.
#![no_main]

use std::cell::RefCell;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use cannery_capture::corpus::{Entry, Plan, Tree};
use cannery_capture::Corpus;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;
#[path = "layout_input.rs"]
mod layout_input;

use layout_input::Input;

/// The one skip rule, on bytes: hidden or partial.
fn skipped(name: &OsStr) -> bool {
    let b = name.as_bytes();
    b.starts_with(b".") || b.ends_with(b".partial")
}

/// The bytes of a path (comparing them costs one `memcmp`, comparing
/// `Path`s walks their components).
fn bytes(p: &Path) -> &[u8] {
    p.as_os_str().as_bytes()
}

/// `path` below `root` and that path's entry in `tree`.
fn entry<'a>(tree: &'a Tree, root: &Path, path: &Path) -> (&'a Path, Entry) {
    let rel = path
        .strip_prefix(root)
        .unwrap_or_else(|_| panic!("{} outside {}", path.display(), root.display()));
    let want = bytes(rel);
    let (p, e) = tree
        .entries
        .iter()
        .find(|(p, _)| bytes(p) == want)
        .unwrap_or_else(|| panic!("{} is not in the tree", path.display()));
    (p, *e)
}

/// A file that opens and is named `.pages` or begins with the magic.
fn is_page_file(path: &Path, e: Entry) -> bool {
    let pages = path.extension() == Some(OsStr::new("pages"));
    matches!(e, Entry::File { opens: true, snapshot } if snapshot || pages)
}

/// Workload names and files, or the error's message.
type Summary = Result<Vec<(String, Vec<PathBuf>)>, String>;

fn summary(plan: &Plan) -> Summary {
    match &plan.workloads {
        Ok(w) => Ok(w
            .iter()
            .map(|w| (w.name.clone(), w.files.clone()))
            .collect()),
        Err(e) => Err(e.to_string()),
    }
}

/// A [`Summary`] borrowed: names and files are not copied (copies were a
/// large part of the target's allocations, which ASan makes costly).
type Borrowed<'a> = Result<Vec<(&'a str, &'a [PathBuf])>, String>;

fn borrowed(plan: &Plan) -> Borrowed<'_> {
    match &plan.workloads {
        Ok(w) => Ok(w.iter().map(|w| (w.name.as_str(), &w.files[..])).collect()),
        Err(e) => Err(e.to_string()),
    }
}

/// Workload names and their files relative to the root (the model's
/// answer: no path is joined to the root, which costs an allocation).
type Relative<'a> = Result<Vec<(String, Vec<&'a Path>)>, String>;

/// The rule as the documentation states it, for trees where everything
/// opens: page files directly in the root form a workload named after the
/// root, each visible sub-directory with page files one named after it, by
/// name; a name met twice, or no workload, refuses the corpus.
fn model<'a>(tree: &'a Tree, root: &Path) -> Relative<'a> {
    // (parent, path, entry) of each visible entry.
    let visible: Vec<(&Path, &'a PathBuf, Entry)> = tree
        .entries
        .iter()
        .filter(|(p, _)| !skipped(p.file_name().unwrap()))
        .map(|(p, e)| (p.parent().unwrap(), p, *e))
        .collect();
    let children = |dir: &Path| {
        let mut v: Vec<(&'a PathBuf, Entry)> = visible
            .iter()
            .filter(|(d, _, _)| bytes(d) == bytes(dir))
            .map(|&(_, p, e)| (p, e))
            .collect();
        v.sort_by(|a, b| bytes(a.0).cmp(bytes(b.0)));
        v
    };
    let files = |dir: &Path| -> Vec<&'a Path> {
        children(dir)
            .into_iter()
            .filter(|&(p, e)| is_page_file(p, e))
            .map(|(p, _)| p.as_path())
            .collect()
    };
    let mut out: Vec<(String, Vec<&Path>)> = Vec::new();
    let loose = files(Path::new(""));
    if !loose.is_empty() {
        let name = root.file_name().map_or("corpus".into(), name_of);
        out.push((name, loose));
    }
    for (d, e) in children(Path::new("")) {
        if !matches!(e, Entry::Dir { .. }) {
            continue;
        }
        let f = files(d);
        if f.is_empty() {
            continue;
        }
        let name = name_of(d.file_name().unwrap());
        if out.iter().any(|(n, _)| *n == name) {
            return Err("two workloads are named".into());
        }
        out.push((name, f));
    }
    if out.is_empty() {
        return Err("no snapshot or .pages files found".into());
    }
    Ok(out)
}

/// A workload's name: UTF-8 as it is, other bytes as `\xNN`.
fn name_of(n: &OsStr) -> String {
    let mut s = String::new();
    for c in n.as_bytes().utf8_chunks() {
        s.push_str(c.valid());
        for b in c.invalid() {
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    s
}

/// Whether `full` is `root` joined with the relative path `rel`, as
/// [`Path::join`] joins them (a separator unless `root` is empty or ends
/// in one), by bytes.
fn joined(root: &[u8], rel: &Path, full: &Path) -> bool {
    let Some(rest) = bytes(full).strip_prefix(root) else {
        return false;
    };
    let rest = match root.last() {
        Some(b'/') | None => Some(rest),
        Some(_) => rest.strip_prefix(b"/"),
    };
    rest == Some(bytes(rel))
}

fn check(tree: &mut Tree, root: &Path, skip: bool) -> Plan {
    let plan = tree.plan(root, skip);
    let got = borrowed(&plan);
    let n = tree.entries.len();
    // Nothing hidden or partial is read, skipped entries are hidden files.
    for p in plan.read.iter().chain(plan.skipped.iter()) {
        let (rel, e) = entry(tree, root, p);
        assert!(matches!(e, Entry::File { .. }), "{} read", p.display());
        // At most one directory above it, and that one not hidden.
        let mut parents = rel.components().rev().skip(1);
        if let Some(c) = parents.next() {
            assert!(
                !skipped(c.as_os_str()),
                "{} is inside a hidden entry",
                p.display()
            );
        }
        assert!(
            parents.next().is_none(),
            "{} is too deep to be read",
            p.display()
        );
    }
    for p in &plan.read {
        assert!(
            !skipped(p.file_name().unwrap()),
            "hidden {} read",
            p.display()
        );
    }
    for p in &plan.skipped {
        assert!(
            skipped(p.file_name().unwrap()),
            "{} is not hidden",
            p.display()
        );
    }
    assert!(skip || plan.unreadable.is_empty());
    for p in &plan.unreadable {
        let (_, e) = entry(tree, root, p);
        assert!(
            matches!(
                e,
                Entry::File { opens: false, .. } | Entry::Dir { lists: false }
            ),
            "{} skipped as unreadable: {e:?}",
            p.display()
        );
    }
    match &plan.workloads {
        Ok(w) => {
            assert!(!w.is_empty() && w.len() <= n + 1);
            let mut names: Vec<&str> = w.iter().map(|w| w.name.as_str()).collect();
            assert!(names.iter().all(|n| !n.is_empty()), "{names:?}");
            names.sort();
            names.dedup();
            assert_eq!(names.len(), w.len(), "two workloads share a name");
            let files: usize = w.iter().map(|w| w.files.len()).sum();
            assert!(files <= n, "{files} files from {n} entries");
            for w in w {
                assert!(!w.files.is_empty(), "{} has no files", w.name);
                // In order of their bytes (one directory's files: as
                // their names), all in that directory.
                let parent = w.files[0].parent().map(bytes);
                assert!(
                    w.files.windows(2).all(|f| bytes(&f[0]) < bytes(&f[1])),
                    "{:?}",
                    w.files
                );
                for f in &w.files {
                    let (_, e) = entry(tree, root, f);
                    assert!(is_page_file(f, e), "{} is no page file: {e:?}", f.display());
                    let read = plan.read.iter().any(|r| bytes(r) == bytes(f));
                    assert!(read || f.extension() == Some(OsStr::new("pages")));
                    assert_eq!(f.parent().map(bytes), parent);
                }
            }
        }
        Err(e) => {
            let msg = e.to_string();
            match e.path() {
                // Listing or opening failed: the path is the root, or an
                // entry that does not list or open.
                Some(p) => {
                    assert!(msg.contains(&p.display().to_string()), "{msg}");
                    if p != root {
                        let (_, e) = entry(tree, root, p);
                        assert!(
                            matches!(
                                e,
                                Entry::File { opens: false, .. } | Entry::Dir { lists: false }
                            ),
                            "{msg}: {e:?}"
                        );
                    } else {
                        assert!(!tree.root_lists, "{msg}");
                    }
                }
                None => {
                    assert!(msg.starts_with(&root.display().to_string()), "{msg}");
                    if msg.contains("two workloads are named") {
                        let named = tree.entries.iter().any(|(p, _)| {
                            p.parent() == Some(Path::new(""))
                                && msg.contains(&root.join(p).display().to_string())
                        });
                        assert!(named, "{msg} names no entry");
                    }
                }
            }
        }
    }
    // Any listing order gives the same plan (the entries turned in place,
    // then back: a clone of the tree was a tenth of the allocations).
    let k = n / 3;
    tree.entries.reverse();
    tree.entries.rotate_left(k);
    let again = tree.plan(root, skip);
    tree.entries.rotate_right(k);
    tree.entries.reverse();
    assert_eq!(got, borrowed(&again), "the listing order changed the plan");
    assert_eq!(plan.unreadable, again.unreadable);
    fn sorted(v: &[PathBuf]) -> Vec<&[u8]> {
        let mut v: Vec<&[u8]> = v.iter().map(|p| bytes(p)).collect();
        v.sort_unstable();
        v
    }
    assert_eq!(sorted(&plan.skipped), sorted(&again.skipped));
    // The model, where nothing fails to open or list.
    let fails = |e: &Entry| {
        matches!(
            e,
            Entry::File { opens: false, .. } | Entry::Dir { lists: false }
        )
    };
    if tree.root_lists && !tree.entries.iter().any(|(_, e)| fails(e)) {
        let want = model(tree, root);
        let same = match (&got, &want) {
            (Err(g), Err(w)) => g.contains(w.as_str()),
            (Ok(g), Ok(w)) => {
                let root = bytes(root);
                g.len() == w.len()
                    && g.iter().zip(w).all(|((gn, gf), (wn, wf))| {
                        gn == wn
                            && gf.len() == wf.len()
                            && gf.iter().zip(wf).all(|(g, w)| joined(root, w, g))
                    })
            }
            _ => false,
        };
        assert!(
            same,
            "the plan differs from the model: {got:?} (model: {want:?})"
        );
    }
    drop(got);
    plan
}

/// Lays `tree` out under a fresh directory; `None` when it holds an entry
/// that cannot be made (one that does not open or list: we run as root).
fn lay_out(tree: &Tree, name: &OsStr) -> Option<PathBuf> {
    if !tree.root_lists
        || tree.entries.iter().any(|(_, e)| {
            matches!(
                e,
                Entry::File { opens: false, .. } | Entry::Dir { lists: false }
            )
        })
    {
        return None;
    }
    let root = common::scratch_dir().join(name);
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir(&root).expect("scratch root");
    for (p, e) in &tree.entries {
        let path = root.join(p);
        match e {
            Entry::File { snapshot, .. } => {
                let bytes: &[u8] = if *snapshot { b"CNRYSNAP" } else { b"notes" };
                std::fs::write(&path, bytes).expect("scratch file");
            }
            Entry::Dir { .. } => std::fs::create_dir(&path).expect("scratch directory"),
            Entry::Other => {
                std::os::unix::fs::symlink("/nonexistent/cannery", &path).expect("scratch link")
            }
        }
    }
    Some(root)
}

thread_local! {
    /// The decoded input and spare paths, whose buffers every run reuses.
    static DECODED: RefCell<(Input, Vec<PathBuf>)> = RefCell::default();
}

fuzz_target!(|data: &[u8]| {
    DECODED.with_borrow_mut(|(input, spare)| {
        if layout_input::decode_into(data, input, spare) {
            run(input);
        }
    });
});

/// One decoded input: its plan checked; one input in
/// [`layout_input::MATERIALIZE_EVERY`] also laid out and opened for real.
fn run(input: &mut Input) {
    let _ = check(&mut input.tree, &input.root, input.skip_unreadable);
    if !input.materialize || input.skip_unreadable {
        return;
    }
    let name = input.root.file_name().unwrap_or(OsStr::new("corpus"));
    let Some(root) = lay_out(&input.tree, name) else {
        return;
    };
    let want = summary(&check(&mut input.tree, &root, false));
    let got = Corpus::open(&root)
        .map(|c| {
            c.workloads
                .into_iter()
                .map(|w| (w.name, w.files))
                .collect::<Vec<_>>()
        })
        .map_err(|e| e.to_string());
    assert_eq!(got, want, "Corpus::open on {} differs", root.display());
    std::fs::remove_dir_all(&root).expect("scratch cleaned");
}
