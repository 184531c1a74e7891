//! Writes the seed corpora of every fuzz target, `fuzz/corpus/<target>/`,
//! from real data: pages of the shipped corpus `corpora/fleet-snapshots`,
//! tables trained on them, the kernel's 2024 table and test vectors
//! (`crates/codec/tests/data/kernel-canned-2024.json`), the kernel header
//! golden files of `crates/export/tests/golden/`, and damaged forms of
//! each (cut short, a bit flipped, a byte appended). For `corpus_layout`,
//! the trees of the shipped corpora (each directory in `corpora/`) as
//! they are and with a hidden or partial file, an empty or nested
//! directory, two workloads of one name, an entry that does not open or
//! list, a dangling link, a hidden name that is not UTF-8. Nothing here is
//! committed as a binary blob; `fuzz/corpus/` is git-ignored.
//!
//! ```sh
//! cargo run --manifest-path fuzz/Cargo.toml --example seeds
//! ```
//!
//! Existing seed files are replaced (they are generated); other files in
//! `fuzz/corpus/<target>/` (what the fuzzer added) are kept.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use cannery_capture::corpus::{Entry, Tree};
use cannery_capture::maps::RegionKind;
use cannery_capture::snapshot::writer::SnapshotWriter;
use cannery_capture::{Corpus, Metadata};
use cannery_codec::huffman::limited_code_lengths;
use cannery_codec::lz77::MatchFinder;
use cannery_codec::records::RecordWriter;
use cannery_codec::{Encoder, Format, Level, Mode, Outcome, Table};
use cannery_export::c_header::{kernel_header, KernelOptions};
use cannery_export::qpl::QplExport;
use cannery_files::output::Existing;
use cannery_trainer::{Histogram, ParseModel, Settings};

#[path = "../fuzz_targets/common.rs"]
mod common;
#[path = "../fuzz_targets/layout_input.rs"]
mod layout_input;

/// Pages taken from each workload of the shipped corpus.
const PAGES_PER_WORKLOAD: usize = 4;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("fuzz/ has a parent");
    let out = root.join("fuzz/corpus");
    let seeds = Seeds::gather(root);
    let mut n = 0;
    let layouts = ("corpus_layout", layouts(&root.join("corpora")));
    for (target, files) in seeds.by_target().into_iter().chain([layouts]) {
        let dir = out.join(target);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        for (i, bytes) in files.iter().enumerate() {
            let path = dir.join(format!("seed-{i:03}"));
            std::fs::write(&path, bytes)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
            n += 1;
        }
    }
    eprintln!("seeds: wrote {n} files under {}", out.display());
}

/// The real data every target's seeds are made of.
struct Seeds {
    /// Distinct non-zero pages of the shipped corpus.
    pages: Vec<Vec<u8>>,
    /// 316 count bytes per workload (its pages' symbol counts scaled to bytes).
    count_bytes: Vec<Vec<u8>>,
    /// Tables: the kernel's 2024 table, the fixed code, one trained per workload.
    tables: Vec<Table>,
    /// Histogram files of the workloads.
    histograms: Vec<String>,
    /// The kernel's vectors: (page, IAA canned stream, zlib canned stream).
    vectors: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)>,
    /// Kernel header files: the golden ones and ours of each table.
    headers: Vec<String>,
}

impl Seeds {
    fn gather(root: &Path) -> Seeds {
        let corpus =
            Corpus::open(&root.join("corpora/fleet-snapshots")).expect("the shipped corpus opens");
        let (mut pages, mut count_bytes, mut tables, mut histograms) =
            (vec![], vec![], vec![], vec![]);
        tables.push(Table::kernel_2024());
        tables.push(Table::fixed());
        let mut finder = MatchFinder::new();
        let mut tokens = Vec::new();
        for w in &corpus.workloads {
            let mut h = Histogram::zero(Settings::new(ParseModel::from_level(Level::Fast)));
            let mut taken = 0;
            for page in w.pages().expect("workload opens") {
                let page = page.expect("shipped pages read").data;
                if page.iter().all(|&b| b == page[0]) || pages.contains(&page) {
                    continue;
                }
                finder.parse(&page, Level::Fast, None, &mut tokens);
                h.add_page(&tokens);
                pages.push(page);
                taken += 1;
                if taken == PAGES_PER_WORKLOAD {
                    break;
                }
            }
            let (ll, d) = (&h.counts.litlen[..], &h.counts.dist[..]);
            let top = ll.iter().chain(d).copied().max().unwrap_or(1).max(1);
            count_bytes.push(ll.iter().chain(d).map(|&c| (c * 255 / top) as u8).collect());
            let ll = ll.iter().map(|&c| c + 1).collect::<Vec<_>>();
            let d = d.iter().map(|&c| c + 1).collect::<Vec<_>>();
            let mut t = Table::from_lengths(
                &limited_code_lengths(&ll, 15),
                &limited_code_lengths(&d, 15),
            )
            .expect("package-merge gives a valid table");
            t.name = Some(w.name.clone());
            tables.push(t);
            histograms.push(h.to_json());
        }
        let json = read(&root.join("crates/codec/tests/data/kernel-canned-2024.json"));
        let v: serde_json::Value = serde_json::from_slice(&json).expect("vectors JSON");
        let hex = |x: &serde_json::Value| unhex(x.as_str().expect("hex string"));
        let vectors = v["vectors"]
            .as_array()
            .expect("vectors")
            .iter()
            .map(|x| {
                (
                    hex(&x["input_hex"]),
                    hex(&x["iaa_out_hex"]),
                    hex(&x["zlib_out_hex"]),
                )
            })
            .collect();
        let golden = root.join("crates/export/tests/golden");
        let mut headers: Vec<String> = std::fs::read_dir(&golden)
            .expect("golden headers")
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "h"))
            .map(|e| String::from_utf8(read(&e.path())).expect("UTF-8 header"))
            .collect();
        headers.sort();
        for t in &tables {
            if let Ok(h) = kernel_header(t, &KernelOptions::new("canned")) {
                headers.push(h);
            }
        }
        Seeds {
            pages,
            count_bytes,
            tables,
            histograms,
            vectors,
            headers,
        }
    }

    /// Table selectors (`common::with_table`): some of the fixed set, and
    /// each workload's counts as an arbitrary table.
    fn prefixes(&self) -> Vec<Vec<u8>> {
        let fixed = [0u8, 1, 2, 3, 6, 9, 12, 33, 62, 101, 126];
        let arbitrary = self.count_bytes.iter().enumerate();
        fixed
            .iter()
            .map(|&i| vec![i])
            .chain(arbitrary.map(|(k, c)| [&[common::ARBITRARY + k as u8 % 2][..], c].concat()))
            .collect()
    }

    /// Canned streams of the seed pages with the table `prefix` selects.
    fn streams(&self, prefix: &[u8]) -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        common::with_table(prefix, false, |c, _| {
            let e = c.encoder(Level::Fast).expect("encodable");
            for p in &self.pages {
                let mut s = Vec::new();
                if let Ok(Outcome::Compressed(_)) = e.compress(p, &mut s) {
                    v.push(s);
                }
            }
        });
        v
    }

    fn by_target(&self) -> Vec<(&'static str, Vec<Vec<u8>>)> {
        let cat = |parts: &[&[u8]]| parts.concat();
        let mut decode_canned = Vec::new();
        let mut differential = Vec::new();
        let mut roundtrip = Vec::new();
        for (i, prefix) in self.prefixes().iter().enumerate() {
            for s in damaged(&self.streams(prefix)) {
                decode_canned.push(cat(&[prefix, &[0xff], &s]));
                differential.push(cat(&[prefix, &s]));
            }
            for (j, p) in self.pages.iter().enumerate().skip(i % 4).step_by(4) {
                roundtrip.push(cat(&[prefix, &[(i + j) as u8 % 3], p]));
                differential.push(cat(&[prefix, p]));
            }
            for (_, iaa, zlib) in &self.vectors {
                decode_canned.push(cat(&[prefix, &[0xff], iaa]));
                decode_canned.push(cat(&[prefix, &[0xff], zlib]));
            }
        }
        let mut decode_fast = Vec::new();
        for (i, p) in self.pages.iter().enumerate() {
            // Table (i * 2), edits then the page; and arbitrary bytes.
            decode_fast.push(cat(&[
                &[(i * 2) as u8, 0x30, i as u8],
                &[0, 5, 0, 1, 2, 9, 0, 0, 3, 1, 0, 4],
                p,
            ]));
        }
        for (_, iaa, zlib) in &self.vectors {
            decode_fast.push(cat(&[&[0, 0, 0], iaa]));
            decode_fast.push(cat(&[&[1, 2, 200], zlib]));
        }
        let lengths: Vec<Vec<u8>> = self
            .tables
            .iter()
            .map(|t| cat(&[&t.lengths().litlen[..], &t.lengths().dist[..]]))
            .collect();
        let table_files: Vec<Vec<u8>> = self
            .tables
            .iter()
            .flat_map(|t| [t.to_json().into_bytes(), t.to_binary()])
            .collect();
        let qpl: Vec<Vec<u8>> = self
            .tables
            .iter()
            .filter_map(|t| QplExport::new(t).ok())
            .map(|q| q.counts_bytes())
            .chain(
                lengths
                    .iter()
                    .map(|l| l.iter().flat_map(|&x| u32::from(x).to_le_bytes()).collect()),
            )
            .collect();
        vec![
            ("decode_canned", decode_canned),
            ("canned_roundtrip", roundtrip),
            ("differential_miniz", differential),
            ("decode_fast", decode_fast),
            ("table_from_lengths", damaged(&lengths)),
            ("table_deserialize", damaged(&table_files)),
            (
                "histogram_deserialize",
                damaged(&bytes_of(&self.histograms)),
            ),
            ("snapshot_reader", damaged(&self.snapshots())),
            ("records_reader", damaged(&self.records())),
            ("kernel_header", damaged(&bytes_of(&self.headers))),
            ("qpl_counts", damaged(&qpl)),
        ]
    }

    /// Snapshot files (through the writer, in a temporary directory) of the
    /// seed pages: one per workload's pages, one empty, one with two processes.
    fn snapshots(&self) -> Vec<Vec<u8>> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mut v = Vec::new();
        let groups: Vec<&[Vec<u8>]> = self
            .pages
            .chunks(PAGES_PER_WORKLOAD)
            .chain([&[][..]])
            .collect();
        for (i, group) in groups.iter().enumerate() {
            let path = dir.path().join(format!("{i}.cansnap"));
            let meta = Metadata {
                label: format!("seed-{i}"),
                ..Metadata::default()
            };
            let mut w = SnapshotWriter::create(&path, meta, 1, Existing::Replace).expect("writer");
            w.begin_process(0, 100 + i as u32, "seed")
                .expect("process record");
            for (j, p) in group.iter().enumerate() {
                if j == 2 {
                    w.begin_process(1, 200, "second").expect("process record");
                }
                w.write_page(RegionKind::Anon, p).expect("page record");
            }
            w.finish().expect("snapshot finishes");
            v.push(read(&path));
        }
        v
    }

    /// Records files: a mode byte (as `records_reader` reads it) then the
    /// records of the seed pages in that mode.
    fn records(&self) -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        for (m, mode) in Mode::ALL.into_iter().enumerate() {
            let table = common::sample_table();
            let Ok(mut e) = Encoder::new(mode, Format::Iaa, Level::Fast, Some(&table)) else {
                continue;
            };
            let mut w = RecordWriter::new(vec![m as u8]);
            for p in self.pages.iter().take(6) {
                let mut s = Vec::new();
                match e.compress(p, &mut s).expect("a page compresses") {
                    Outcome::Compressed(_) => w.write(&s).expect("to memory"),
                    Outcome::Incompressible => w.write(p).expect("to memory"),
                }
            }
            v.push(w.finish().expect("to memory"));
        }
        v
    }
}

/// The tree under `dir` as the layout rule sees it, three levels deep.
fn tree_of(dir: &Path) -> Tree {
    fn walk(dir: &Path, rel: &Path, depth: usize, out: &mut Vec<(PathBuf, Entry)>) {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
            .map(|e| e.expect("a directory entry").file_name())
            .collect();
        names.sort();
        for name in names {
            let (path, rel) = (dir.join(&name), rel.join(&name));
            if path.is_dir() {
                out.push((rel.clone(), Entry::Dir { lists: true }));
                if depth > 1 {
                    walk(&path, &rel, depth - 1, out);
                }
            } else if path.is_file() {
                let head = std::fs::read(&path).map(|b| b.starts_with(b"CNRYSNAP"));
                let snapshot = head.unwrap_or(false);
                out.push((
                    rel,
                    Entry::File {
                        opens: true,
                        snapshot,
                    },
                ));
            } else {
                out.push((rel, Entry::Other));
            }
        }
    }
    let mut entries = Vec::new();
    walk(dir, Path::new(""), 3, &mut entries);
    Tree {
        root_lists: true,
        entries,
    }
}

/// Seeds of `corpus_layout`: the tree of each directory in `corpora/`, as they are and damaged (`layout_input.rs` says what the control
/// byte chooses: bit 0 skip unreadable entries, bits 1-2 the root's name,
/// `0xf0` a root that does not list).
fn layouts(corpora: &Path) -> Vec<Vec<u8>> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpora)
        .expect("corpora/ lists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    let file = |snapshot| Entry::File {
        opens: true,
        snapshot,
    };
    let mut out = Vec::new();
    for (i, dir) in dirs.iter().enumerate() {
        let tree = tree_of(dir);
        let first = tree
            .entries
            .iter()
            .find(|(p, e)| matches!(e, Entry::Dir { .. }) && p.components().count() == 1)
            .map_or(PathBuf::from("w"), |(p, _)| p.clone());
        let damages: Vec<Vec<(PathBuf, Entry)>> = vec![
            vec![],
            vec![(first.join(".w.cansnap.123.0.partial"), file(true))],
            vec![("x.cansnap.partial".into(), file(true))],
            vec![("empty".into(), Entry::Dir { lists: true })],
            vec![
                (first.join("nested"), Entry::Dir { lists: true }),
                (first.join("nested/n.cansnap"), file(true)),
            ],
            vec![
                ("loose.pages".into(), file(false)),
                ("fleet".into(), Entry::Dir { lists: true }),
                ("fleet/a.pages".into(), file(false)),
            ],
            vec![(
                first.join("u.pages"),
                Entry::File {
                    opens: false,
                    snapshot: false,
                },
            )],
            vec![
                ("locked".into(), Entry::Dir { lists: false }),
                ("locked/l.cansnap".into(), file(true)),
            ],
            vec![("gone.cansnap".into(), Entry::Other)],
            vec![(
                first.join(std::ffi::OsStr::from_bytes(b".\xff.pages")),
                file(false),
            )],
        ];
        for (j, extra) in damages.into_iter().enumerate() {
            let mut t = tree.clone();
            if !t.entries.iter().any(|(p, _)| *p == first) {
                t.entries.push((first.clone(), Entry::Dir { lists: true }));
            }
            t.entries.extend(extra);
            // Root names by turn; skipping unreadable entries or not.
            let ctl = ((i + j) % 4 * 2) as u8 | (j % 2) as u8;
            let bytes = layout_input::encode(ctl, &t);
            let back = layout_input::decode(&bytes).expect("a seed decodes").tree;
            assert_eq!(
                back.entries,
                t.entries,
                "{} does not fit a seed",
                dir.display()
            );
            out.push(bytes);
        }
        out.push(layout_input::encode(0xf0, &tree));
    }
    out
}

/// Each item, cut to half its length, with its middle bit flipped, and
/// with a byte appended, besides the item itself.
fn damaged(items: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for x in items {
        v.push(x.clone());
        if x.is_empty() {
            continue;
        }
        v.push(x[..x.len() / 2].to_vec());
        let mut flipped = x.clone();
        flipped[x.len() / 2] ^= 0x10;
        v.push(flipped);
        v.push([&x[..], &[0x5a]].concat());
    }
    v
}

fn bytes_of(texts: &[String]) -> Vec<Vec<u8>> {
    texts.iter().map(|t| t.as_bytes().to_vec()).collect()
}

fn read(path: &PathBuf) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex digits"))
        .collect()
}
