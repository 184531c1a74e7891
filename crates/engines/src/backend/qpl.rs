//! The `qpl` backend (cargo feature `qpl`): Intel QPL through bindings that
//! bindgen generates at build time from the installed headers.
//!
//! It runs on IAA hardware when QPL can initialise a hardware job (an IAA
//! work queue is enabled and usable), else on QPL's software path, and
//! reports which ([`Engine::last_path`], [`Capabilities::path_note`]).
//! Fixed mode = no table, no dynamic flag (BTYPE=01); dynamic mode =
//! `QPL_FLAG_DYNAMIC_HUFFMAN`.
//!
//! Canned mode has two routes, because QPL can only build a table from a
//! histogram:
//! - compression: `QPL_FLAG_CANNED_MODE` with a QPL table built from our
//!   code lengths through the histogram route (count 2^(15 − length) per
//!   symbol, docs/canned-format.md §7). The lengths QPL ends up with are read back
//!   from the header of a static-mode compression and must equal ours, or
//!   loading the table fails ([`EngineError::QplTableChanged`]) — QPL codes
//!   every symbol and applies its 56-bit rule, so some valid tables (e.g.
//!   kernel-2024) cannot be loaded unchanged.
//! - decompression: the kernel driver's route — QPL's decoder is programmed
//!   by the table's deflate header. QPL inflates, as ordinary deflate,
//!   header (BFINAL=0) ‖ canned body up to its end-of-block code ‖ a final
//!   fixed block of two sentinel bytes; the page is accepted only if QPL's
//!   output ends with the sentinel, i.e. QPL decoded the body exactly to the
//!   bit where the stream's framing (end-of-block, then zero padding or QPL's
//!   empty fixed block) says it ends. This works for every table with a
//!   standard header, loadable or not. QPL's own canned decoder is still
//!   reachable through [`Qpl::decompress_with_qpl_table`].
//!
//! The capabilities state the table rules of each direction
//! ([`Rule::QplLoadable`] to compress, [`Rule::Standard`] to decompress);
//! [`qpl_loadable_default_table`] is a fixed-code-like table QPL loads
//! unchanged, for tests that need one.
//!
//! The decompression routes are `qpl/decompress.rs`; QPL as a training
//! target (its statistics, its own tables, canned streams at a level) is
//! `qpl/target.rs`.
//!
//! Every job starts from a freshly initialised job structure, so outputs do
//! not depend on earlier pages. All QPL statuses map to
//! [`EngineError::Qpl`] with QPL's own name and description. Its `unsafe`
//! is the FFI's (the codec's others: `qat`, the decoder's fast loop). It does not check
//! integrity beyond deflate's structure (canned streams carry no checksum).

use super::{Capabilities, Engine, EngineError, ExecPath, Job, ALL_MODES};
use cannery_codec::constants::{NUM_DIST, NUM_LITLEN, PAGE_SIZE};
use cannery_codec::decode::read_block_header;
use cannery_codec::encode::Outcome;
use cannery_codec::mode::Mode;
use cannery_codec::table::rules::Rule;
use cannery_codec::table::{Alphabet, CodeLengths, Table};

bindgen_module!("qpl_bindings.rs");

mod decompress;
mod target;
#[cfg(test)]
use decompress::{eob_end_candidates, sentinel_stream, SENTINEL};
pub use target::{gather_page_statistics, QplLevel, QplParser, QplTable};

#[allow(clippy::unnecessary_cast)]
mod status {
    use super::ffi;
    include!(concat!(env!("OUT_DIR"), "/qpl_status.rs"));
}

/// Maps a QPL status to `Ok` or a readable error.
fn check(call: &'static str, code: ffi::qpl_status) -> Result<(), EngineError> {
    if code == ffi::QPL_STS_OK {
        return Ok(());
    }
    let (name, text) = status::status_name(code);
    Err(EngineError::Qpl {
        call,
        code,
        name,
        text,
    })
}

extern "C" fn qpl_malloc(size: usize) -> *mut std::ffi::c_void {
    // SAFETY: malloc has no preconditions; a null result is handled by QPL.
    unsafe { libc::malloc(size) }
}

extern "C" fn qpl_free(ptr: *mut std::ffi::c_void) {
    // SAFETY: QPL frees only pointers it got from `qpl_malloc`.
    unsafe { libc::free(ptr) }
}

/// A QPL job structure in memory we own; finalised on drop.
struct QplJob {
    /// The job bytes, 8-byte aligned (QPL's job holds pointers and u64s).
    mem: Vec<u64>,
    path: ffi::qpl_path_t,
}

impl QplJob {
    /// Allocates and initialises a job for `path`.
    fn new(path: ffi::qpl_path_t) -> Result<QplJob, EngineError> {
        let mut size: u32 = 0;
        // SAFETY: `size` is a valid out-pointer for the call's duration.
        check("qpl_get_job_size", unsafe {
            ffi::qpl_get_job_size(path, &mut size)
        })?;
        let mut job = QplJob {
            mem: vec![0u64; (size as usize).div_ceil(8)],
            path,
        };
        // SAFETY: `mem` holds at least `size` bytes, 8-byte aligned, as
        // qpl_get_job_size asked for.
        check("qpl_init_job", unsafe {
            ffi::qpl_init_job(path, job.ptr())
        })
        .inspect_err(|_| job.mem.clear())?;
        Ok(job)
    }

    fn ptr(&mut self) -> *mut ffi::qpl_job {
        self.mem.as_mut_ptr().cast()
    }

    /// Re-initialises the job so no state carries over from earlier pages.
    fn reset(&mut self) -> Result<&mut ffi::qpl_job, EngineError> {
        let path = self.path;
        // SAFETY: the job memory was sized for this path by qpl_get_job_size
        // and initialised before; re-initialising it is allowed.
        check("qpl_init_job", unsafe {
            ffi::qpl_init_job(path, self.ptr())
        })?;
        // SAFETY: the memory is an initialised qpl_job, aligned, and
        // exclusively borrowed through `self`.
        Ok(unsafe { &mut *self.ptr() })
    }

    /// Runs the job to completion.
    fn execute(&mut self) -> Result<(), EngineError> {
        // SAFETY: the caller set every pointer in the job to buffers that
        // live until this call returns (see `compress`/`decompress`).
        check("qpl_execute_job", unsafe {
            ffi::qpl_execute_job(self.ptr())
        })
    }
}

impl Drop for QplJob {
    fn drop(&mut self) {
        if !self.mem.is_empty() {
            // SAFETY: the job was initialised by qpl_init_job and is finalised once.
            unsafe {
                ffi::qpl_fini_job(self.ptr());
            }
        }
    }
}

/// A QPL Huffman table; destroyed on drop.
struct HuffTable(ffi::qpl_huffman_table_t);

// SAFETY: the table is a heap allocation this value alone owns (never
// shared); QPL ties it to no thread, so moving it to another thread is fine.
unsafe impl Send for HuffTable {}

impl Drop for HuffTable {
    fn drop(&mut self) {
        // SAFETY: the table was created by qpl_deflate_huffman_table_create
        // and is destroyed once.
        unsafe {
            ffi::qpl_huffman_table_destroy(self.0);
        }
    }
}

/// Intel QPL as a backend.
pub struct Qpl {
    caps: Capabilities,
    job: QplJob,
    canned: Option<(CodeLengths, HuffTable)>,
}

impl Qpl {
    /// Opens QPL on the hardware path if a job can be initialised there,
    /// else on the software path.
    pub fn open() -> Result<Qpl, EngineError> {
        Qpl::open_path(None)
    }

    /// Opens QPL on the software path only (no hardware even if present).
    pub fn open_software() -> Result<Qpl, EngineError> {
        Qpl::open_path(Some(ExecPath::Software))
    }

    fn open_path(only: Option<ExecPath>) -> Result<Qpl, EngineError> {
        let (job, path, note) = match only {
            Some(ExecPath::Software) => (
                QplJob::new(ffi::qpl_path_software)?,
                ExecPath::Software,
                Some("software path requested".to_string()),
            ),
            _ => match QplJob::new(ffi::qpl_path_hardware) {
                Ok(job) => (job, ExecPath::Hardware, None),
                Err(e) => (
                    QplJob::new(ffi::qpl_path_software)?,
                    ExecPath::Software,
                    Some(format!("hardware path unavailable: {e}")),
                ),
            },
        };
        Ok(Qpl {
            caps: Capabilities {
                name: "qpl",
                compress: ALL_MODES.to_vec(),
                decompress: ALL_MODES.to_vec(),
                path,
                path_note: note,
                canned_compress_rules: &[Rule::QplLoadable],
                canned_decompress_rules: &[Rule::Standard],
            },
            job,
            canned: None,
        })
    }

    /// Builds (or reuses) the QPL table for `table`, checking that QPL kept
    /// our code lengths.
    fn table(&mut self, table: Option<&Table>) -> Result<ffi::qpl_huffman_table_t, EngineError> {
        let t = table.ok_or(EngineError::TableRequired)?;
        if let Some((l, h)) = &self.canned {
            if l == t.lengths() {
                return Ok(h.0);
            }
        }
        self.canned = None;
        let h = self.load_table(t)?;
        let ptr = h.0;
        self.canned = Some((*t.lengths(), h));
        Ok(ptr)
    }

    /// A new, empty QPL table for both directions on this path.
    fn new_table(&mut self) -> Result<HuffTable, EngineError> {
        let mut raw: ffi::qpl_huffman_table_t = std::ptr::null_mut();
        let alloc = ffi::allocator_t {
            allocator: Some(qpl_malloc),
            deallocator: Some(qpl_free),
        };
        // SAFETY: `raw` is a valid out-pointer; the allocator functions are
        // valid for the program's lifetime.
        check("qpl_deflate_huffman_table_create", unsafe {
            ffi::qpl_deflate_huffman_table_create(
                ffi::combined_table_type,
                self.job.path,
                alloc,
                &mut raw,
            )
        })?;
        Ok(HuffTable(raw))
    }

    fn load_table(&mut self, t: &Table) -> Result<HuffTable, EngineError> {
        let h = self.new_table()?;
        // The histogram whose optimal code has exactly our lengths.
        // SAFETY: qpl_histogram is plain u32 arrays; all-zero is valid.
        let mut hist: ffi::qpl_histogram = unsafe { std::mem::zeroed() };
        let l = t.lengths();
        for s in 0..NUM_LITLEN {
            hist.literal_lengths[s] = count_for(l.litlen[s]);
        }
        for s in 0..NUM_DIST {
            hist.distances[s] = count_for(l.dist[s]);
        }
        // SAFETY: `h.0` is a live table; `hist` outlives the call.
        check("qpl_huffman_table_init_with_histogram", unsafe {
            ffi::qpl_huffman_table_init_with_histogram(h.0, &hist)
        })?;
        let got = self.read_back(h.0)?;
        compare_lengths(t, &got)?;
        Ok(h)
    }

    /// The code lengths of a QPL table, read from the header it writes in
    /// static mode (table given, no canned flag).
    fn read_back(&mut self, table: ffi::qpl_huffman_table_t) -> Result<CodeLengths, EngineError> {
        // Highly compressible, so QPL writes a coded block, not a stored one.
        let input = vec![b'a'; PAGE_SIZE];
        let mut out = Vec::new();
        let flags = ffi::QPL_FLAG_OMIT_VERIFY;
        let n = self
            .run_compress(
                flags,
                ffi::qpl_default_level,
                table,
                &input,
                &mut out,
                PAGE_SIZE,
            )?
            .unwrap_or(0);
        let h = read_block_header(&out[..n])?;
        let mut l = CodeLengths {
            litlen: [0; NUM_LITLEN],
            dist: [0; NUM_DIST],
        };
        l.litlen.copy_from_slice(&h.litlen[..NUM_LITLEN]);
        l.dist.copy_from_slice(&h.dist[..NUM_DIST]);
        Ok(l)
    }

    /// One page compressed by a fresh job with `flags` (besides FIRST and
    /// LAST), `level` and `table` (null: none) into `out`, with room for
    /// `limit` bytes: the stream's length, or `None` when it does not fit
    /// (QPL writes no stored block in canned mode).
    fn run_compress(
        &mut self,
        flags: u32,
        level: ffi::qpl_compression_levels,
        table: ffi::qpl_huffman_table_t,
        page: &[u8],
        out: &mut Vec<u8>,
        limit: usize,
    ) -> Result<Option<usize>, EngineError> {
        // QPL's job takes a mutable input pointer but does not write through it.
        let mut input = page.to_vec();
        out.clear();
        out.resize(limit, 0);
        let job = self.job.reset()?;
        job.op = ffi::qpl_op_compress;
        job.level = level;
        job.flags = ffi::QPL_FLAG_FIRST | ffi::QPL_FLAG_LAST | flags;
        job.huffman_table = table;
        job.next_in_ptr = input.as_mut_ptr();
        job.available_in = input.len() as u32;
        job.next_out_ptr = out.as_mut_ptr();
        job.available_out = out.len() as u32;
        match self.job.execute() {
            Ok(()) => {}
            Err(EngineError::Qpl { code, .. })
                if code == ffi::QPL_STS_MORE_OUTPUT_NEEDED
                    || code == ffi::QPL_STS_DST_IS_SHORT_ERR =>
            {
                return Ok(None)
            }
            Err(e) => return Err(e),
        }
        // SAFETY: the job is initialised and no longer borrowed mutably.
        let n = unsafe { (*self.job.ptr()).total_out } as usize;
        out.truncate(n);
        Ok(Some(n))
    }
}

/// Histogram count for a code length: 2^(15 − length); 0 for no code
/// (QPL raises it to 1, which changes the table — reported, not hidden).
fn count_for(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        1 << (15 - len as u32)
    }
}

/// `Ok` if QPL's lengths are ours; else the first difference and a likely reason.
fn compare_lengths(t: &Table, got: &CodeLengths) -> Result<(), EngineError> {
    let ours = t.lengths();
    let diff = (0..NUM_LITLEN)
        .find(|&s| ours.litlen[s] != got.litlen[s])
        .map(|s| (Alphabet::LitLen, s, ours.litlen[s], got.litlen[s]))
        .or_else(|| {
            (0..NUM_DIST)
                .find(|&s| ours.dist[s] != got.dist[s])
                .map(|s| (Alphabet::Dist, s, ours.dist[s], got.dist[s]))
        });
    let Some((alphabet, symbol, o, q)) = diff else {
        return Ok(());
    };
    let hint = Rule::QplLoadable
        .check(t)
        .err()
        .map(|e| format!(" ({e})"))
        .unwrap_or_default();
    Err(EngineError::QplTableChanged {
        alphabet,
        symbol,
        ours: o,
        qpl: q,
        hint,
    })
}

/// A table QPL loads unchanged, for canned compression when no table is
/// given: the RFC 1951 fixed code made complete over the 286 + 30 symbols a
/// QPL table has — literal 0 and length symbol 285 (length 258) get 7-bit
/// codes instead of 8, distance symbols 0 and 1 get 4-bit codes instead of
/// 5 (zero bytes, long runs and short distances, common in memory pages, get
/// the room the fixed code keeps for symbols 286/287 and 30/31). With
/// literal 0 first among the 7-bit codes, end-of-block's code is 0000001, not
/// all zeros, so the end of a stream is unambiguous. Worst case
/// 9 + 13 + 18 = 40 bits, within QPL's 56. Deterministic; not trained on
/// anything.
pub fn qpl_loadable_default_table() -> Table {
    let mut l = *Table::fixed().lengths();
    l.litlen[0] = 7;
    l.litlen[285] = 7;
    l.dist[0] = 4;
    l.dist[1] = 4;
    Table::from_lengths(&l.litlen, &l.dist).expect("complete code over 286 + 30 symbols")
}

impl Qpl {
    /// Loads `table` into QPL through the histogram route (as canned
    /// compression does) and checks that QPL kept its code lengths.
    pub fn load_unchanged(&mut self, table: &Table) -> Result<(), EngineError> {
        self.table(Some(table)).map(|_| ())
    }
}

impl Engine for Qpl {
    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn compress_job(&mut self, job: Job<'_>, out: &mut Vec<u8>) -> Result<Outcome, EngineError> {
        let (mode, page) = (job.mode, job.data);
        let huff = match mode {
            Mode::Canned => self.table(job.table)?,
            _ => std::ptr::null_mut(),
        };
        let flags = match mode {
            Mode::Fixed => 0,
            Mode::Dynamic => ffi::QPL_FLAG_DYNAMIC_HUFFMAN,
            Mode::Canned => ffi::QPL_FLAG_CANNED_MODE,
        };
        match self.run_compress(flags, ffi::qpl_default_level, huff, page, out, PAGE_SIZE)? {
            Some(_) => Ok(super::outcome_of(out)),
            None => Ok(Outcome::Incompressible),
        }
    }

    fn decompress_job(&mut self, job: Job<'_>, out: &mut [u8]) -> Result<usize, EngineError> {
        if job.mode == Mode::Canned {
            let t = job.table.ok_or(EngineError::TableRequired)?;
            return self.decompress_by_header(t, job.data, out);
        }
        let limit = out.len();
        match self.inflate_raw(job.data, out) {
            Err(EngineError::Qpl { code, .. }) if code == ffi::QPL_STS_MORE_OUTPUT_NEEDED => {
                Err(EngineError::OutputLimit {
                    backend: "qpl",
                    limit,
                })
            }
            r => r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_as_words() {
        let (name, text) = status::status_name(ffi::QPL_STS_MORE_OUTPUT_NEEDED);
        assert_eq!(name, "QPL_STS_MORE_OUTPUT_NEEDED");
        assert!(text.contains("output buffer"), "{text}");
        let e = check("qpl_execute_job", ffi::QPL_STS_BAD_DIST_ERR).unwrap_err();
        assert!(e.to_string().contains("QPL_STS_BAD_DIST_ERR"), "{e}");
    }

    use super::super::check::QPL_SW_TAIL;
    use cannery_codec::bitio::BitWriter;
    use cannery_codec::constants::END_OF_BLOCK;
    use cannery_codec::encode::{encode_canned_tokens, write_tokens};
    use cannery_codec::token::Token;

    fn tokens() -> Vec<Token> {
        let mut t: Vec<Token> = b"canned pages, "
            .iter()
            .map(|&b| Token::Literal(b))
            .collect();
        t.push(Token::Match {
            length: 40,
            distance: 14,
        });
        t.push(Token::Literal(0xff));
        t
    }

    /// The stream with QPL's software-path framing: end-of-block, the 10-bit
    /// empty final fixed block, zero padding.
    fn tailed(toks: &[Token], table: &Table) -> Vec<u8> {
        let mut v = Vec::new();
        let mut w = BitWriter::new(&mut v);
        write_tokens(&mut w, toks, table, usize::MAX);
        w.put(QPL_SW_TAIL.0, QPL_SW_TAIL.1);
        w.finish();
        v
    }

    /// Bits up to and including the end-of-block code.
    fn eob_end(toks: &[Token], table: &Table) -> usize {
        let mut v = Vec::new();
        let mut w = BitWriter::new(&mut v);
        write_tokens(&mut w, toks, table, usize::MAX);
        w.bit_len()
    }

    #[test]
    fn the_end_of_block_is_found_from_the_framing() {
        let k = Table::kernel_2024();
        let d = qpl_loadable_default_table();
        // Every padding length: drop tokens one by one.
        let all = tokens();
        for table in [&k, &d] {
            for n in 0..all.len() {
                let toks = &all[..n];
                let end = eob_end(toks, table);
                let plain = encode_canned_tokens(toks, table);
                // The plain framing comes first; the bits may also happen
                // to fit QPL's tail.
                let c = eob_end_candidates(table, &plain);
                assert!(c.len() <= 2 && c[0] == end, "{n}: {c:?}, want {end} first");
                let c = eob_end_candidates(table, &tailed(toks, table));
                assert!(c.contains(&end), "{n}: {c:?} lacks {end}");
                // A set padding bit fits no framing of the plain stream.
                let mut bad = plain.clone();
                if end % 8 != 0 {
                    *bad.last_mut().unwrap() |= 0x80;
                    assert!(!eob_end_candidates(table, &bad).contains(&end));
                }
            }
        }
        // The fixed code's end-of-block is seven zero bits: several candidates.
        let f = Table::fixed();
        let plain = encode_canned_tokens(&all, &f);
        let c = eob_end_candidates(&f, &plain);
        assert!(c.contains(&eob_end(&all, &f)) && c.len() > 1, "{c:?}");
    }

    #[test]
    fn the_sentinel_stream_is_the_page_then_the_sentinel() {
        let t = Table::kernel_2024();
        let toks = tokens();
        let plain = encode_canned_tokens(&toks, &t);
        let mut page = Vec::new();
        for tok in &toks {
            match *tok {
                Token::Literal(b) => page.push(b),
                Token::Match { length, distance } => {
                    for _ in 0..length {
                        page.push(page[page.len() - distance as usize]);
                    }
                }
            }
        }
        for table in [&t, &Table::fixed()] {
            let body = encode_canned_tokens(&toks, table);
            let s = sentinel_stream(table, &body, eob_end(&toks, table));
            let mut out = [0u8; 256];
            let n = cannery_codec::decode::inflate(&s, &mut out).unwrap();
            assert_eq!(&out[..n - 2], &page[..]);
            assert_eq!(out[n - 2..n], SENTINEL);
        }
        // Cut one bit short, the stream is no longer the page + sentinel.
        let s = sentinel_stream(&t, &plain, eob_end(&toks, &t) - 1);
        let mut out = [0u8; 256];
        let r = cannery_codec::decode::inflate(&s, &mut out);
        assert!(r
            .map(|n| out[..n] != [&page[..], &SENTINEL[..]].concat())
            .unwrap_or(true));
    }

    #[test]
    fn the_default_table_loads_unchanged_and_kernel_2024_only_decompresses() {
        let d = qpl_loadable_default_table();
        assert_eq!(Rule::QplLoadable.check(&d), Ok(()));
        assert_eq!(
            cannery_codec::table::rules::BitBudget::of(d.lengths()).total(),
            40
        );
        assert_eq!(d.litlen_codes()[END_OF_BLOCK as usize], 1);
        let mut q = Qpl::open().unwrap();
        q.load_unchanged(&d).unwrap();
        let caps = q.capabilities().clone();
        assert_eq!(caps.canned_compress_check(&d), Ok(()));
        assert_eq!(caps.canned_decompress_check(&d), Ok(()));
        let k = Table::kernel_2024();
        assert!(caps
            .canned_compress_check(&k)
            .unwrap_err()
            .contains("distance symbols 24..=29 have no code"));
        assert_eq!(caps.canned_decompress_check(&k), Ok(()));
        assert!(matches!(
            q.load_unchanged(&k),
            Err(EngineError::QplTableChanged { .. })
        ));
        // The fixed code is all coded but incomplete over 286 + 30 symbols.
        assert!(caps.canned_compress_check(&Table::fixed()).is_err());
        assert!(caps.canned_decompress_check(&Table::fixed()).is_ok());
        // Incomplete codes have no standard header.
        let mut l = *k.lengths();
        l.litlen[285] = 0;
        let inc = Table::from_lengths(&l.litlen, &l.dist).unwrap();
        assert!(caps.canned_decompress_check(&inc).is_err());
        let mut out = [0u8; 16];
        assert!(matches!(
            q.decompress(Mode::Canned, Some(&inc), &[0], &mut out),
            Err(EngineError::TableNotStandard { .. })
        ));
    }

    #[test]
    fn histogram_counts_are_powers_of_two() {
        assert_eq!(count_for(1), 1 << 14);
        assert_eq!(count_for(15), 1);
        assert_eq!(count_for(0), 0);
    }
}
