//! The input of `corpus_layout`: bytes as a directory tree described in
//! memory (`cannery_capture::corpus::Tree`), and a tree back as bytes (for
//! the seeds, `examples/seeds.rs`).
//!
//! Byte 0: bit 0 `skip_unreadable`; bits 1-2 the root's path ([`ROOTS`]);
//! high nibble `0xf`: the root cannot be listed. One input in
//! [`MATERIALIZE_EVERY`] (by a hash of all its bytes, so that the fuzzer's
//! mutations of such an input are again one in as many) is also laid out
//! in a tmpfs and opened for real. Then entries of 4 header bytes
//! and a name: the parent (0: the root, else one of the directories before,
//! by index), the kind (bits 0-1: file, file, directory, other; bits 2-4
//! all set: it does not open or list; bit 5: a file begins with the
//! snapshot magic), a decoration of the name ([`DECORATIONS`]), the name's
//! length (mod 33) then its bytes (`/` and NUL become `_`). At most
//! [`MAX_ENTRIES`] entries; a path met again is dropped.
#![allow(dead_code)] // the target and the seeds each use part of it

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use cannery_capture::corpus::{Entry, Tree};

/// Entries read from one input at most.
pub const MAX_ENTRIES: usize = 32;
// A directory's index fits a byte.
const _: () = assert!(MAX_ENTRIES <= 256);
/// Bytes of a name taken from the input at most.
pub const MAX_NAME: usize = 32;
/// What a decoration byte (mod 8) puts before and after a name: the forms
/// the layout rule tells apart, so the fuzzer need not find them.
pub const DECORATIONS: [(&str, &str); 8] = [
    ("", ""),
    ("", ".pages"),
    ("", ".cansnap"),
    ("", ".partial"),
    (".", ""),
    ("", ".cansnap.partial"),
    (".", ".pages"),
    (".", ".cansnap.7.0.partial"),
];
/// One input in this many is also laid out in a tmpfs ([`Input::materialize`]):
/// a real directory costs about 1.9 ms under ASan, as much as twenty inputs
/// described in memory.
pub const MATERIALIZE_EVERY: u32 = 64;

/// The root paths an input can name ("/" has no file name; the others
/// match names the entries often take).
pub const ROOTS: [&str; 4] = ["/fz/fleet", "/", "/fz/w", "/fz/w.pages"];

/// A decoded input.
pub struct Input {
    /// Where the tree is laid out (only names things).
    pub root: PathBuf,
    /// As `cannery_capture::corpus::set_skip_unreadable`.
    pub skip_unreadable: bool,
    /// Also lay the tree out in a tmpfs and open it with `Corpus::open`.
    pub materialize: bool,
    /// The tree.
    pub tree: Tree,
}

/// Writes into `out` (emptied first) the path of an entry in `parent` (""
/// for the root) named from its decoration and bytes: the name is never
/// empty, `.` or `..`, and holds no `/` or NUL.
fn path_of(out: &mut PathBuf, parent: &Path, decoration: u8, stem: &[u8]) {
    let (pre, suf) = DECORATIONS[decoration as usize % DECORATIONS.len()];
    let parent = parent.as_os_str().as_bytes();
    let mut b = std::mem::take(out).into_os_string().into_vec();
    b.clear();
    b.reserve(parent.len() + pre.len() + stem.len() + suf.len() + 2);
    if !parent.is_empty() {
        b.extend_from_slice(parent);
        b.push(b'/');
    }
    let start = b.len();
    b.extend_from_slice(pre.as_bytes());
    b.extend(
        stem.iter()
            .map(|&b| if b == b'/' || b == 0 { b'_' } else { b }),
    );
    b.extend_from_slice(suf.as_bytes());
    if b.len() == start {
        b.push(b'w');
    }
    if b[start..] == *b"." || b[start..] == *b".." {
        b.push(b'_');
    }
    *out = PathBuf::from(OsString::from_vec(b));
}

/// The input `data` describes; `None` when it is empty.
pub fn decode(data: &[u8]) -> Option<Input> {
    let mut input = Input::default();
    decode_into(data, &mut input, &mut Vec::new()).then_some(input)
}

impl Default for Input {
    fn default() -> Input {
        Input {
            root: PathBuf::new(),
            skip_unreadable: false,
            materialize: false,
            tree: Tree {
                root_lists: true,
                entries: Vec::with_capacity(MAX_ENTRIES),
            },
        }
    }
}

/// [`decode`] into `input`, reusing its buffers and those in `spare` (the
/// target decodes every input into the same ones: under ASan an allocation
/// costs more than the rest of decoding an entry). False when `data` is
/// empty: `input`'s tree then has no entries, and the rest of it is the
/// last input's.
pub fn decode_into(data: &[u8], input: &mut Input, spare: &mut Vec<PathBuf>) -> bool {
    let entries = &mut input.tree.entries;
    spare.extend(entries.drain(..).map(|(p, _)| p));
    let Some((&ctl, mut rest)) = data.split_first() else {
        return false;
    };
    // Directories by their index in `entries`.
    let mut dirs = [0u8; MAX_ENTRIES];
    let mut n_dirs = 0;
    while rest.len() >= 4 && entries.len() < MAX_ENTRIES {
        let (p, k, dec) = (rest[0], rest[1], rest[2]);
        let len = (rest[3] as usize % (MAX_NAME + 1)).min(rest.len() - 4);
        let stem = &rest[4..4 + len];
        rest = &rest[4 + len..];
        let parent = match p {
            0 => Path::new(""),
            _ if n_dirs == 0 => Path::new(""),
            _ => entries[dirs[(p as usize - 1) % n_dirs] as usize]
                .0
                .as_path(),
        };
        let mut path = spare.pop().unwrap_or_default();
        path_of(&mut path, parent, dec, stem);
        // Names hold no `/` and are never `.`: equal paths are equal bytes
        // (comparing `Path`s walks their components, a tenth of the time).
        if entries
            .iter()
            .any(|(q, _)| q.as_os_str() == path.as_os_str())
        {
            spare.push(path);
            continue;
        }
        let ok = (k >> 2) & 7 != 7;
        let entry = match k & 3 {
            0 | 1 => Entry::File {
                opens: ok,
                snapshot: k & 0x20 != 0,
            },
            2 => Entry::Dir { lists: ok },
            _ => Entry::Other,
        };
        if matches!(entry, Entry::Dir { .. }) {
            dirs[n_dirs] = entries.len() as u8;
            n_dirs += 1;
        }
        entries.push((path, entry));
    }
    input.root.clear();
    input.root.push(ROOTS[(ctl >> 1) as usize % ROOTS.len()]);
    input.skip_unreadable = ctl & 1 == 1;
    input.materialize = crate::common::hash(data).is_multiple_of(MATERIALIZE_EVERY);
    input.tree.root_lists = ctl >> 4 != 0xf;
    true
}

/// Bytes that [`decode`] reads back as `tree` (names cut to
/// [`MAX_NAME`] bytes, parents listed before their entries), with the
/// control byte `ctl`.
pub fn encode(ctl: u8, tree: &Tree) -> Vec<u8> {
    let mut out = vec![ctl];
    let mut dirs: Vec<&Path> = Vec::new();
    for (path, entry) in &tree.entries {
        let parent = path.parent().unwrap_or(Path::new(""));
        let p = match dirs.iter().position(|d| *d == parent) {
            Some(i) => i + 1,
            None => 0,
        };
        let fail = 7 << 2;
        let k = match *entry {
            Entry::File { opens, snapshot } => {
                (if opens { 0 } else { fail }) | (if snapshot { 0x20 } else { 0 })
            }
            Entry::Dir { lists } => 2 | if lists { 0 } else { fail },
            Entry::Other => 3,
        };
        let n = path.file_name().map_or(&b"w"[..], |n| n.as_bytes());
        let n = &n[..n.len().min(MAX_NAME)];
        out.extend_from_slice(&[p.min(255) as u8, k, 0, n.len() as u8]);
        out.extend_from_slice(n);
        if matches!(entry, Entry::Dir { .. }) {
            dirs.push(path);
        }
    }
    out
}
