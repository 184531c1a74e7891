//! Captures resident anonymous memory pages of live Linux processes into
//! snapshot corpora, and reads corpora back as streams of 4 KiB pages.
//!
//! This crate knows nothing about compression tables: its job ends at "a
//! stream of real pages, labelled by workload". It does not train, encode or
//! simulate zswap. Its files (snapshots, page exports) are written and read
//! through `cannery_files` (atomic outputs, inputs never replaced, partial
//! files removed on SIGINT/SIGTERM, whose flag captures poll to stop).
//!
//! # Data flow
//!
//! ```text
//! /proc/PID/maps ─▶ maps ─▶ pagemap ─▶ read ─▶ filter ─▶ sample ─▶ snapshot::writer ─▶ file
//!  (which mappings)  (which pages resident)  (zero/same/dup/secret)  (seeded)
//! file ─▶ snapshot::reader / corpus ─▶ Iterator<Item = Result<Page>>
//! ```
//!
//! [`target`] attaches to a process safely (pidfd + start-time check, all
//! files opened through one `/proc/PID` handle, so a reused PID is never
//! read); [`capture`] runs one sample; [`session`] repeats samples on a
//! schedule, around a running PID or a workload it starts itself with a
//! clean environment; [`freeze`] optionally stops the target (ptrace) for a
//! consistent sample and measures the pause.
//!
//! # What is captured
//!
//! Pages zswap could see: resident, private, anonymous pages of `[heap]`,
//! `[stack]` and anonymous mappings (and, on request, the copy-on-write pages
//! of private file mappings). Not read at all: pages that are swapped out or
//! were never touched (the page map says so), pages only ever read (mapped
//! to the kernel's shared zero page; recognised when page frame numbers are
//! visible, i.e. as root), shared and special mappings, `PROT_NONE` guard
//! areas and `MADV_DONTDUMP` mappings. Zero-filled and same-value-filled
//! pages are counted, not stored, as zswap stores them without compressing;
//! identical pages are optionally counted once; sampling then picks the
//! pages to store, and `redact_secrets` drops chosen pages that look like
//! they hold secrets. Every page read is accounted for in
//! [`snapshot::PageCounts`].
//!
//! With `freeze`, each process is stopped only while its pages are copied
//! into memory (so the pause covers reading, not hashing or compression);
//! that needs memory for the process's resident private pages.
//!
//! # Snapshots contain raw memory
//!
//! A snapshot holds the bytes of another process's memory: whatever it held
//! — passwords, keys, tokens, personal data — may be in it. Capture only
//! workloads whose memory you may share, start them with a clean
//! environment (spawn mode does), consider `--redact-secrets`, and run
//! [`secrets`] (`cannery corpus scan-secrets`) before publishing a corpus.
//!
//! # Snapshot format, version 1
//!
//! All integers little-endian.
//!
//! | offset | size | field |
//! |-------:|-----:|-------|
//! | 0 | 8 | magic `CNRYSNAP` |
//! | 8 | 2 | format version (1) |
//! | 10 | 2 | flags; bit 0 = finalized (counts are final) |
//! | 12 | 4 | page size (4096) |
//! | 16 | 4 | `M`, length of the metadata block |
//! | 20 | 4 | record-stream checksum: first 4 bytes (LE) of SHA-256 over the compressed stream |
//! | 24 | 8×12 | counts: scanned, stored, zero, same-filled, duplicate, unreadable, sampled-out, redacted, samples, longest pause (ns), total pause (ns), record-stream length |
//! | 120 | 8 | checksum: first 8 bytes of SHA-256 over bytes 0..120 and the metadata block |
//! | 128 | `M` | metadata: a UTF-8 JSON object padded with spaces ([`snapshot::Metadata`]: label, command, capture time, kernel release, sampling parameters, schedule, options, end reason) |
//! | 128+`M` | rest | one zstd stream (checksummed, window ≤ 8 MiB; readers accept ≤ 16 MiB) of records |
//!
//! Records, concatenated inside the zstd stream, each starting with a tag
//! byte:
//!
//! * `0x01` page: region code (`u8`: 0 unknown, 1 heap, 2 stack, 3 anon,
//!   4 file-private), then 4096 bytes;
//! * `0x02` process: sample index `u32`, time `u64` (Unix ms), pid `u32`,
//!   name length `u8`, name bytes — pages that follow come from it;
//! * `0x7f` end: number of page records `u64`; nothing follows.
//!
//! The writer writes the header with the finalized bit clear, streams records
//! (flushing after each sample), and at the end writes the end record and
//! rewrites the fixed header (counts, stream length, finalized) and
//! metadata in place. A capture stopped by SIGINT/SIGTERM or by the target
//! exiting is finalized normally. A file whose writer was killed outright is
//! readable up to its last flush; the reader then reports it as not
//! finalized with the offset where the records end. Readers reject a newer
//! version, a page size other than 4096, a damaged header (checksum), and
//! (when finalized) a file whose length or stream checksum disagrees with
//! the header, naming the byte offset. The stream checksum is verified when
//! the end record is reached, so damage inside the stream that zstd itself
//! does not notice is reported at the end of iteration.
//!
//! Raw `.pages` files (a multiple of 4096 bytes, pages back to back) are
//! accepted wherever a corpus is expected ([`corpus::open_pages`]).
//!
//! # Unsafe code
//!
//! Denied everywhere but one private module, `sys`, which wraps every
//! system call the library makes in a safe function: `pidfd_open` and
//! `poll` (used by [`target`]), `process_vm_readv` ([`read`]), the
//! zero-page probe's `mmap`/`munmap` ([`pagemap`]), the [`region`] mapping's
//! `mmap`/`madvise`/`munmap`, `ptrace`/`waitpid`
//! ([`freeze`]), `kill` ([`session`]), `lseek` with `SEEK_DATA`/`SEEK_HOLE`
//! ([`corpus`]'s sparse `.pages` files) and `geteuid`. Each unsafe block there carries a `// SAFETY:` note.

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod capture;
pub mod cold;
pub mod corpus;
pub mod error;
pub mod filter;
pub mod freeze;
pub mod idle;
pub mod maps;
pub mod pagemap;
pub mod read;
pub mod region;
pub mod sample;
pub mod secrets;
pub mod session;
pub mod snapshot;
pub mod stream;
#[allow(unsafe_code)]
mod sys;
pub mod target;

pub use capture::{CaptureOptions, Capturer, PageSink, SampleReport};
pub use corpus::{open_pages, Corpus, Page, PageIter, PageReader, Workload};
pub use error::{Error, ErrorKind, Result};
pub use filter::same_filled;
pub use maps::RegionKind;
pub use snapshot::{Metadata, PageCounts, SnapshotHeader};

/// The page size this crate captures and stores: 4 KiB, as zswap compresses
/// (the codec's constant: one definition).
pub use cannery_codec::constants::PAGE_SIZE;
