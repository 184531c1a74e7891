//! The house rules that hold after every change, checked on the tree as it
//! is: the CLI's `src/` at most 2,000 lines, no Rust file over 650 lines
//! (tests included), every file opening with a `//!` doc, no two files
//! of a crate importing each other (`use crate::…` / `use super::…`), and
//! a match's byte distance never passed under the name `dist` or `d`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const SRC_LIMIT: usize = 2_000;
const FILE_LIMIT: usize = 650;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file below `dir`, skipping build output.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p.is_dir() {
            if name != "target" && name != ".git" && name != ".venv" && name != "corpus" {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p).unwrap().lines().count()
}

#[test]
fn the_cli_stays_thin() {
    let mut src = Vec::new();
    rust_files(&root().join("src"), &mut src);
    let total: usize = src.iter().map(|p| lines(p)).sum();
    assert!(total > 0, "no files under src/");
    assert!(
        total <= SRC_LIMIT,
        "src/ has {total} lines, the limit is {SRC_LIMIT}"
    );
}

/// crates/cli holds the command line's arguments and help only: it reads,
/// writes and prints nothing, and depends on no crate that does I/O or
/// changes the machine.
#[test]
fn the_argument_crate_runs_nothing() {
    let mut files = Vec::new();
    rust_files(&root().join("crates/cli/src"), &mut files);
    assert!(
        files.len() > 10,
        "only {} files in crates/cli/src",
        files.len()
    );
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        for banned in [
            "std::fs",
            "std::io",
            "print!",
            "println!",
            "std::process",
            "File::",
        ] {
            assert!(!text.contains(banned), "{} uses {banned}", p.display());
        }
    }
    let manifest = std::fs::read_to_string(root().join("crates/cli/Cargo.toml")).unwrap();
    for crate_name in ["cannery-files", "cannery-engines", "cannery-machine"] {
        assert!(
            !manifest.contains(crate_name),
            "crates/cli depends on {crate_name}"
        );
    }
}

#[test]
fn no_file_grows_past_its_limit_and_each_says_what_it_does() {
    let mut all = Vec::new();
    for d in ["src", "crates", "tests", "benches", "fuzz", "python"] {
        rust_files(&root().join(d), &mut all);
    }
    assert!(all.len() > 100, "only {} Rust files found", all.len());
    let over: Vec<String> = all
        .iter()
        .filter(|p| lines(p) > FILE_LIMIT)
        .map(|p| {
            format!(
                "{} ({} lines)",
                p.strip_prefix(root()).unwrap().display(),
                lines(p)
            )
        })
        .collect();
    assert!(over.is_empty(), "files over {FILE_LIMIT} lines: {over:#?}");
    let undocumented: Vec<_> = all
        .iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            !(first.starts_with("//!") || first.starts_with("/*!"))
        })
        .map(|p| p.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    assert!(
        undocumented.is_empty(),
        "files without a //! doc at the top: {undocumented:#?}"
    );
}

/// The module path of a file below a crate's `src/` (`a/b.rs` and
/// `a/b/mod.rs` are both `["a", "b"]`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The `use` statements of a file's non-test code, as single strings.
fn use_statements(text: &str) -> Vec<String> {
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in code.lines() {
        let t = line.trim();
        if let Some(c) = current.as_mut() {
            c.push_str(t);
        } else if t.starts_with("use ") || (t.starts_with("pub") && t.contains(" use ")) {
            current = Some(t.to_string());
        }
        if current.as_ref().is_some_and(|c| c.ends_with(';')) {
            out.push(current.take().unwrap());
        }
    }
    out
}

/// The files of the crate that `file`'s `use` statements name.
fn imported_files(
    src: &Path,
    file: &Path,
    files: &BTreeMap<Vec<String>, PathBuf>,
) -> BTreeSet<PathBuf> {
    let me = module_of(src, file);
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = BTreeSet::new();
    for stmt in use_statements(&text) {
        let path = stmt
            .split(" use ")
            .last()
            .unwrap()
            .trim_start_matches("use ")
            .trim_end_matches(';');
        let (base, rest): (Vec<String>, &str) = if let Some(r) = path.strip_prefix("crate::") {
            (Vec::new(), r)
        } else if let Some(r) = path.strip_prefix("super::") {
            (me[..me.len().saturating_sub(1)].to_vec(), r)
        } else {
            continue;
        };
        let mut full = base;
        full.extend(
            rest.split("::")
                .map(|s| s.split(" as ").next().unwrap_or(s))
                .take_while(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'))
                .map(String::from),
        );
        for n in (1..=full.len()).rev() {
            if let Some(f) = files.get(&full[..n]) {
                if f != file {
                    out.insert(f.clone());
                }
                break;
            }
        }
    }
    out
}

#[test]
fn no_two_files_import_each_other() {
    let mut srcs = vec![root().join("src"), root().join("python/src")];
    for e in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
        srcs.push(e.path().join("src"));
    }
    let mut pairs = Vec::new();
    let mut checked = 0;
    for src in srcs {
        let mut list = Vec::new();
        rust_files(&src, &mut list);
        let files: BTreeMap<Vec<String>, PathBuf> = list
            .iter()
            .map(|f| (module_of(&src, f), f.clone()))
            .collect();
        let imports: BTreeMap<&PathBuf, BTreeSet<PathBuf>> = list
            .iter()
            .map(|f| (f, imported_files(&src, f, &files)))
            .collect();
        checked += imports.values().map(BTreeSet::len).sum::<usize>();
        for (a, uses) in &imports {
            for b in uses {
                if a < &b && imports.get(b).is_some_and(|u| u.contains(*a)) {
                    pairs.push(format!("{} <-> {}", a.display(), b.display()));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} imports between files found: the parser is broken"
    );
    assert!(pairs.is_empty(), "files that import each other: {pairs:#?}");
}

/// Where a match's byte distance enters the codec: the distance → symbol
/// and extra-bits mappings, the token's field and the price of a distance.
const DISTANCE_SITES: [&str; 4] = ["dist_symbol(", "dist_extra(", "distance: ", ".distance("];

/// The `site: name` pairs of `text` where a byte distance goes by `dist` or
/// `d`, names the README keeps for the distance alphabet (its symbols and
/// code lengths).
fn distances_named_dist(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap();
        for site in DISTANCE_SITES {
            for (at, _) in code.match_indices(site) {
                let rest = &code[at + site.len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if name == "dist" || name == "d" {
                    found.push(format!("{site}{name}"));
                }
            }
        }
    }
    found
}

#[test]
fn a_match_distance_is_called_distance() {
    // The check sees the mistakes it is for.
    assert_eq!(
        distances_named_dist(
            "let c = costs.distance(dist as usize);\n\
             Token::Match { length: len, distance: dist }\n\
             let s = dist_symbol(d) as usize; // dist_extra(d) in a comment\n\
             let s = dist_symbol(distance); let t = DIST_BASE[dist_symbol(distance) as usize];"
        ),
        [".distance(dist", "distance: dist", "dist_symbol(d"]
    );
    let mut all = Vec::new();
    for d in ["src", "crates", "tests", "benches", "fuzz", "python"] {
        rust_files(&root().join(d), &mut all);
    }
    let mut sites = 0;
    let mut wrong = Vec::new();
    for p in &all {
        if p.ends_with("tests/house_rules.rs") {
            continue;
        }
        let text = std::fs::read_to_string(p).unwrap();
        sites += DISTANCE_SITES
            .iter()
            .map(|s| text.matches(s).count())
            .sum::<usize>();
        for w in distances_named_dist(&text) {
            wrong.push(format!(
                "{}: {w}",
                p.strip_prefix(root()).unwrap().display()
            ));
        }
    }
    assert!(
        sites > 50,
        "only {sites} distance sites found: the scan is broken"
    );
    assert!(
        wrong.is_empty(),
        "byte distances named `dist`/`d`: {wrong:#?}"
    );
}
