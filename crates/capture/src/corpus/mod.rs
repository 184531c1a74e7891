//! Reading corpora: a directory of workloads, each holding snapshot files
//! and/or raw `.pages` files, or a single such file. Pages are streamed one
//! at a time (never a whole file in memory). Writing is [`crate::snapshot::writer`].
//!
//! Split along its seams, all re-exported here so paths stay
//! `cannery_capture::corpus::…`:
//!
//! * `reader`: one page file (snapshot or raw) as a stream
//!   of [`Page`]s ([`open_pages`], [`PageReader`]);
//! * `layout`: which files form which workload of a corpus
//!   ([`Corpus`], [`Workload`], [`PageIter`]);
//! * `plan`: the layout rule itself, over the real directory or a
//!   [`Tree`] described in memory ([`Tree::plan`], for fuzzing);
//! * `export`: chosen or sampled pages out, raw or as records
//!   ([`export`], for `corpus export`).

#![forbid(unsafe_code)]

mod export;
mod layout;
mod plan;
mod reader;

pub use export::{export, Emit, ExportOptions, ExportReport, ExportedWorkload};
pub(crate) use layout::skip_unreadable;
pub use layout::{
    is_skipped_name, read_dir_sorted, resolve, set_skip_unreadable, skipped_files,
    unreadable_files, unstored_same_filled, Corpus, PageIter, Workload, CORPORA_DIR,
};
pub use plan::{Entry, Plan, Tree};
pub use reader::{
    is_raw_pages, open_pages, set_read_progress, Page, PageReader, PROGRESS_EVERY, RAW_EXTENSION,
};

/// What a command says, once at its end, of the files its corpus readers
/// skipped: hidden or partial files ([`skipped_files`]) and, with
/// `--skip-unreadable`, unreadable ones ([`unreadable_files`]); a count and
/// one example each.
pub fn skipped_warnings() -> Vec<String> {
    let mut lines = Vec::new();
    let skipped = skipped_files();
    if let Some(first) = skipped.first() {
        lines.push(format!(
            "skipped {} hidden or partial file(s) (names starting with '.' or ending in .partial), e.g. {}",
            skipped.len(),
            first.display()
        ));
    }
    let unreadable = unreadable_files();
    if let Some(first) = unreadable.first() {
        lines.push(format!(
            "skipped {} unreadable file(s) or directories (--skip-unreadable), e.g. {}",
            unreadable.len(),
            first.display()
        ));
    }
    lines
}
