//! The corpus layout rule described in memory (`Tree::plan`, what the fuzz
//! target `corpus_layout` runs) agrees with `Corpus::open` on the same tree
//! laid out for real: files, directories, links to files and directories
//! outside the tree, dangling and looping links; hidden, `.partial`,
//! non-UTF-8 and colliding names. Entries that do not open or list cannot
//! be made here (tests run as root), so the plan's answers for them are
//! checked on their own.

use cannery_capture::corpus::{Entry, Plan, Tree};
use cannery_capture::snapshot::MAGIC;
use cannery_capture::{Corpus, ErrorKind};
use proptest::prelude::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Names the generated entries take: page files by extension and by magic,
/// hidden, partial, not UTF-8, and names that collide as workloads (the
/// root is `fleet`; `w\xff` and the UTF-8 `w\\xff` give the same name).
const NAMES: [&[u8]; 14] = [
    b"a.pages",
    b"b.cansnap",
    b"notes.md",
    b".hidden.pages",
    b"x.partial",
    b"w",
    b"fleet",
    b".d",
    b"s",
    b"\xff.pages",
    b".\xff.cansnap",
    b"c.cansnap.partial",
    b"w\\xff",
    b"w\xff",
];

/// What to make at a path.
#[derive(Debug, Clone, Copy)]
enum Make {
    File {
        magic: bool,
    },
    Dir,
    /// A link to nowhere.
    Dangling,
    /// A link to itself.
    Loop,
    /// A link to a file outside the tree.
    LinkToFile {
        magic: bool,
    },
    /// A link to a directory outside the tree holding `a.pages`.
    LinkToDir,
}

fn make() -> impl Strategy<Value = Make> {
    prop_oneof![
        4 => any::<bool>().prop_map(|magic| Make::File { magic }),
        3 => Just(Make::Dir),
        1 => Just(Make::Dangling),
        1 => Just(Make::Loop),
        1 => any::<bool>().prop_map(|magic| Make::LinkToFile { magic }),
        1 => Just(Make::LinkToDir),
    ]
}

/// Lays out `nodes` (parent choice, name, what) under `root`, outside
/// things under `outside`, and returns the tree as the rule sees it.
fn lay_out(root: &Path, outside: &Path, nodes: &[(usize, usize, Make)]) -> Tree {
    std::fs::create_dir_all(root).unwrap();
    std::fs::create_dir_all(outside.join("d")).unwrap();
    std::fs::write(outside.join("d/a.pages"), [7u8; 4096]).unwrap();
    std::fs::write(outside.join("magic"), MAGIC).unwrap();
    std::fs::write(outside.join("plain"), b"plain").unwrap();
    let mut dirs: Vec<PathBuf> = vec![PathBuf::new()];
    let mut entries: Vec<(PathBuf, Entry)> = Vec::new();
    for &(parent, name, what) in nodes {
        let rel = dirs[parent % dirs.len()].join(OsStr::from_bytes(NAMES[name % NAMES.len()]));
        if entries.iter().any(|(p, _)| *p == rel) {
            continue;
        }
        let path = root.join(&rel);
        let link = |target: &Path| std::os::unix::fs::symlink(target, &path).unwrap();
        let entry = match what {
            Make::File { magic } => {
                std::fs::write(&path, if magic { &MAGIC[..] } else { b"notes" }).unwrap();
                Entry::File {
                    opens: true,
                    snapshot: magic,
                }
            }
            Make::Dir => {
                std::fs::create_dir(&path).unwrap();
                dirs.push(rel.clone());
                Entry::Dir { lists: true }
            }
            Make::Dangling => {
                link(&outside.join("nothing"));
                Entry::Other
            }
            Make::Loop => {
                link(&path);
                Entry::Other
            }
            Make::LinkToFile { magic } => {
                link(&outside.join(if magic { "magic" } else { "plain" }));
                Entry::File {
                    opens: true,
                    snapshot: magic,
                }
            }
            Make::LinkToDir => {
                link(&outside.join("d"));
                entries.push((
                    rel.join("a.pages"),
                    Entry::File {
                        opens: true,
                        snapshot: false,
                    },
                ));
                Entry::Dir { lists: true }
            }
        };
        entries.push((rel, entry));
    }
    Tree {
        root_lists: true,
        entries,
    }
}

/// Workload names and files, or the error's message.
fn summary(
    plan: Result<Vec<cannery_capture::Workload>, cannery_capture::Error>,
) -> Result<Vec<(String, Vec<PathBuf>)>, String> {
    plan.map(|w| w.into_iter().map(|w| (w.name, w.files)).collect())
        .map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_plan_of_a_described_tree_is_what_corpus_open_does(
        nodes in proptest::collection::vec((0usize..8, 0usize..NAMES.len(), make()), 0..14)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("fleet");
        let tree = lay_out(&root, &dir.path().join("outside"), &nodes);
        let plan = tree.plan(&root, false);
        let real = Corpus::open(&root).map(|c| c.workloads);
        let skipped = plan.skipped.clone();
        prop_assert_eq!(summary(plan.workloads), summary(real));
        let noted = cannery_capture::corpus::skipped_files();
        for s in &skipped {
            prop_assert!(noted.contains(s), "{} skipped but not noted", s.display());
        }
        // Any listing order gives the same plan.
        let mut turned = tree.clone();
        turned.entries.reverse();
        prop_assert_eq!(summary(turned.plan(&root, false).workloads), summary(tree.plan(&root, false).workloads));
    }
}

fn file(opens: bool) -> Entry {
    Entry::File {
        opens,
        snapshot: false,
    }
}

fn tree(entries: &[(&str, Entry)]) -> Tree {
    Tree {
        root_lists: true,
        entries: entries
            .iter()
            .map(|&(p, e)| (PathBuf::from(p), e))
            .collect(),
    }
}

fn names(plan: &Plan) -> Vec<&str> {
    plan.workloads
        .as_ref()
        .unwrap()
        .iter()
        .map(|w| w.name.as_str())
        .collect()
}

#[test]
fn a_page_file_that_does_not_open_refuses_the_corpus_by_name_unless_skipped() {
    let root = Path::new("/c/fleet");
    let t = tree(&[
        ("w", Entry::Dir { lists: true }),
        ("w/a.pages", file(false)),
        ("v", Entry::Dir { lists: true }),
        ("v/b.pages", file(true)),
        // Not named as a page file: not opened, so not an error.
        ("v/notes", file(false)),
    ]);
    let e = t.plan(root, false).workloads.unwrap_err();
    assert_eq!(e.path(), Some(Path::new("/c/fleet/w/a.pages")));
    assert!(
        e.to_string().contains("cannot read /c/fleet/w/a.pages"),
        "{e}"
    );
    let plan = t.plan(root, true);
    assert_eq!(names(&plan), ["v"]);
    assert_eq!(plan.unreadable, [PathBuf::from("/c/fleet/w/a.pages")]);
}

#[test]
fn a_directory_that_does_not_list_refuses_the_corpus_by_name_unless_skipped() {
    let root = Path::new("/c/fleet");
    let t = tree(&[
        ("w", Entry::Dir { lists: false }),
        ("w/a.pages", file(true)),
        ("v", Entry::Dir { lists: true }),
        ("v/b.pages", file(true)),
    ]);
    let e = t.plan(root, false).workloads.unwrap_err();
    assert!(e.to_string().contains("cannot list /c/fleet/w"), "{e}");
    let plan = t.plan(root, true);
    assert_eq!(names(&plan), ["v"]);
    assert_eq!(plan.unreadable, [PathBuf::from("/c/fleet/w")]);
    // The root itself is never skipped.
    let mut t = t;
    t.root_lists = false;
    let e = t.plan(root, true).workloads.unwrap_err();
    assert!(e.to_string().contains("cannot list /c/fleet"), "{e}");
}

#[test]
fn hidden_and_partial_entries_are_never_read() {
    let root = Path::new("/c/fleet");
    let t = tree(&[
        (".w", Entry::Dir { lists: true }),
        (".w/a.pages", file(true)),
        ("w", Entry::Dir { lists: true }),
        ("w/.a.pages", file(false)),
        (
            "w/b.cansnap.1.0.partial",
            Entry::File {
                opens: true,
                snapshot: true,
            },
        ),
        ("w/c.pages", file(true)),
        ("x.partial", Entry::Dir { lists: true }),
        ("x.partial/d.pages", file(true)),
    ]);
    let plan = t.plan(root, false);
    assert_eq!(names(&plan), ["w"]);
    assert_eq!(plan.read, [PathBuf::from("/c/fleet/w/c.pages")]);
    assert_eq!(
        plan.skipped,
        [
            PathBuf::from("/c/fleet/w/.a.pages"),
            PathBuf::from("/c/fleet/w/b.cansnap.1.0.partial")
        ]
    );
    // Two names for one workload are refused, naming both.
    let t = tree(&[
        ("a.pages", file(true)),
        ("fleet", Entry::Dir { lists: true }),
        ("fleet/b.pages", file(true)),
    ]);
    let e = t.plan(root, false).workloads.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
    assert!(
        e.to_string().contains("(/c/fleet and /c/fleet/fleet)"),
        "{e}"
    );
}

#[test]
fn the_first_entry_of_a_path_counts_at_any_root() {
    let t = tree(&[
        ("a.pages", file(true)),
        // Met again: the first entry counts (this one would refuse).
        ("a.pages", file(false)),
        ("w", Entry::Dir { lists: true }),
        ("w", Entry::Other),
        ("w/b.pages", file(true)),
        ("w/b.pages", Entry::Dir { lists: false }),
    ]);
    for (root, name) in [
        ("/c/fleet", "fleet"),
        ("/c/fleet/", "fleet"),
        ("", "corpus"),
    ] {
        let root = Path::new(root);
        let plan = t.plan(root, false);
        let got: Vec<(String, Vec<PathBuf>)> = (plan.workloads.unwrap().into_iter())
            .map(|w| (w.name, w.files))
            .collect();
        let want = vec![
            (name.to_string(), vec![root.join("a.pages")]),
            ("w".to_string(), vec![root.join("w/b.pages")]),
        ];
        assert_eq!(got, want, "root {}", root.display());
        assert_eq!(plan.read, [root.join("a.pages"), root.join("w/b.pages")]);
    }
}

#[test]
fn a_workloads_files_are_in_the_byte_order_of_their_names_at_any_root() {
    // Listed in no order; by bytes, upper case before lower case and a
    // prefix before its extensions. A file whose parent is no entry, or a
    // file, is never listed.
    let names = [
        "b.pages",
        "ab.pages",
        "B.pages",
        "a.pages",
        "a.pagesx.pages",
    ];
    let mut entries = vec![("w", Entry::Dir { lists: true })];
    let listed: Vec<String> = names
        .iter()
        .flat_map(|n| [n.to_string(), format!("w/{n}")])
        .collect();
    entries.extend(listed.iter().map(|p| (p.as_str(), file(true))));
    entries.extend([
        ("x/c.pages", file(true)),
        ("f", file(true)),
        ("f/d.pages", file(true)),
    ]);
    let t = tree(&entries);
    let order = [
        "B.pages",
        "a.pages",
        "a.pagesx.pages",
        "ab.pages",
        "b.pages",
    ];
    for (root, name) in [
        ("/c/fleet", "fleet"),
        ("/c/fleet/", "fleet"),
        ("/", "corpus"),
        ("", "corpus"),
    ] {
        let root = Path::new(root);
        let got: Vec<(String, Vec<PathBuf>)> = (t.plan(root, false).workloads.unwrap().into_iter())
            .map(|w| (w.name, w.files))
            .collect();
        let want = vec![
            (
                name.to_string(),
                order.iter().map(|n| root.join(n)).collect(),
            ),
            (
                "w".to_string(),
                order.iter().map(|n| root.join("w").join(n)).collect(),
            ),
        ];
        assert_eq!(got, want, "root {}", root.display());
    }
}
