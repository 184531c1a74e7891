//! The `qpl` backend (cargo feature `qpl`): Intel QPL through bindings that
//! bindgen generates at build time from the installed headers.
//!
//! It runs on IAA hardware when QPL can initialise a hardware job (an IAA
//! work queue is enabled and usable), else on QPL's software path, and
//! reports which ([`Backend::last_path`], [`Capabilities::path_note`]).
//! Fixed mode = no table, no dynamic flag (BTYPE=01); dynamic mode =
//! `QPL_FLAG_DYNAMIC_HUFFMAN`; canned mode = `QPL_FLAG_CANNED_MODE` with a
//! QPL table built from our code lengths through the histogram route
//! (count 2^(15 − length) per symbol, canned-format.md §7). The lengths QPL
//! ends up with are read back from the header of a static-mode compression
//! and must equal ours, or loading the table fails
//! ([`BackendError::QplTableChanged`]) — QPL codes every symbol and applies
//! its 56-bit rule, so some valid tables cannot be loaded unchanged.
//!
//! Every job starts from a freshly initialised job structure, so outputs do
//! not depend on earlier pages. All QPL statuses map to
//! [`BackendError::Qpl`] with QPL's own name and description. This is the
//! only module (with `qat`) allowed to use `unsafe`.

use super::{check_page, Backend, BackendError, Capabilities, ExecPath, ALL_MODES};
use crate::constants::{NUM_DIST, NUM_LITLEN, PAGE_SIZE};
use crate::decode::read_block_header;
use crate::encode::Outcome;
use crate::mode::Mode;
use crate::table::rules::Rule;
use crate::table::{Alphabet, CodeLengths, Table};

#[allow(
    non_camel_case_types,
    non_snake_case,
    non_upper_case_globals,
    dead_code,
    unsafe_op_in_unsafe_fn,
    clippy::all,
    missing_docs
)]
mod ffi {
    include!(concat!(env!("OUT_DIR"), "/qpl_bindings.rs"));
}

#[allow(clippy::unnecessary_cast)]
mod status {
    use super::ffi;
    include!(concat!(env!("OUT_DIR"), "/qpl_status.rs"));
}

/// Maps a QPL status to `Ok` or a readable error.
fn check(call: &'static str, code: ffi::qpl_status) -> Result<(), BackendError> {
    if code == ffi::QPL_STS_OK {
        return Ok(());
    }
    let (name, text) = status::status_name(code);
    Err(BackendError::Qpl {
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
struct Job {
    /// The job bytes, 8-byte aligned (QPL's job holds pointers and u64s).
    mem: Vec<u64>,
    path: ffi::qpl_path_t,
}

impl Job {
    /// Allocates and initialises a job for `path`.
    fn new(path: ffi::qpl_path_t) -> Result<Job, BackendError> {
        let mut size: u32 = 0;
        // SAFETY: `size` is a valid out-pointer for the call's duration.
        check("qpl_get_job_size", unsafe {
            ffi::qpl_get_job_size(path, &mut size)
        })?;
        let mut job = Job {
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
    fn reset(&mut self) -> Result<&mut ffi::qpl_job, BackendError> {
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
    fn execute(&mut self) -> Result<(), BackendError> {
        // SAFETY: the caller set every pointer in the job to buffers that
        // live until this call returns (see `compress`/`decompress`).
        check("qpl_execute_job", unsafe {
            ffi::qpl_execute_job(self.ptr())
        })
    }
}

impl Drop for Job {
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
    job: Job,
    canned: Option<(CodeLengths, HuffTable)>,
}

impl std::fmt::Debug for Qpl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Qpl")
            .field("caps", &self.caps)
            .finish_non_exhaustive()
    }
}

impl Qpl {
    /// Opens QPL on the hardware path if a job can be initialised there,
    /// else on the software path.
    pub fn open() -> Result<Qpl, BackendError> {
        Qpl::open_path(None)
    }

    /// Opens QPL on the software path only (no hardware even if present).
    pub fn open_software() -> Result<Qpl, BackendError> {
        Qpl::open_path(Some(ExecPath::Software))
    }

    fn open_path(only: Option<ExecPath>) -> Result<Qpl, BackendError> {
        let (job, path, note) = match only {
            Some(ExecPath::Software) => (
                Job::new(ffi::qpl_path_software)?,
                ExecPath::Software,
                Some("software path requested".to_string()),
            ),
            _ => match Job::new(ffi::qpl_path_hardware) {
                Ok(job) => (job, ExecPath::Hardware, None),
                Err(e) => (
                    Job::new(ffi::qpl_path_software)?,
                    ExecPath::Software,
                    Some(format!("hardware path unavailable: {e}")),
                ),
            },
        };
        Ok(Qpl {
            caps: Capabilities {
                compress: ALL_MODES.to_vec(),
                decompress: ALL_MODES.to_vec(),
                path,
                path_note: note,
                canned_compress_rules: &[Rule::QplLoadable],
                canned_decompress_rules: &[Rule::QplLoadable],
            },
            job,
            canned: None,
        })
    }

    /// Builds (or reuses) the QPL table for `table`, checking that QPL kept
    /// our code lengths.
    fn table(&mut self, table: Option<&Table>) -> Result<ffi::qpl_huffman_table_t, BackendError> {
        let t = table.ok_or(BackendError::TableRequired)?;
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

    fn load_table(&mut self, t: &Table) -> Result<HuffTable, BackendError> {
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
        let h = HuffTable(raw);
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
    fn read_back(&mut self, table: ffi::qpl_huffman_table_t) -> Result<CodeLengths, BackendError> {
        // Highly compressible, so QPL writes a coded block, not a stored one.
        let mut input = vec![b'a'; PAGE_SIZE];
        let mut out = vec![0u8; PAGE_SIZE];
        let job = self.job.reset()?;
        job.op = ffi::qpl_op_compress;
        job.level = ffi::qpl_default_level;
        job.flags = ffi::QPL_FLAG_FIRST | ffi::QPL_FLAG_LAST | ffi::QPL_FLAG_OMIT_VERIFY;
        job.huffman_table = table;
        job.next_in_ptr = input.as_mut_ptr();
        job.available_in = input.len() as u32;
        job.next_out_ptr = out.as_mut_ptr();
        job.available_out = out.len() as u32;
        self.job.execute()?;
        // SAFETY: the job is initialised and no longer borrowed mutably.
        let n = unsafe { (*self.job.ptr()).total_out } as usize;
        let h = read_block_header(&out[..n.min(out.len())])?;
        let mut l = CodeLengths {
            litlen: [0; NUM_LITLEN],
            dist: [0; NUM_DIST],
        };
        l.litlen.copy_from_slice(&h.litlen[..NUM_LITLEN]);
        l.dist.copy_from_slice(&h.dist[..NUM_DIST]);
        Ok(l)
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
fn compare_lengths(t: &Table, got: &CodeLengths) -> Result<(), BackendError> {
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
    Err(BackendError::QplTableChanged {
        alphabet,
        symbol,
        ours: o,
        qpl: q,
        hint,
    })
}

impl Backend for Qpl {
    fn name(&self) -> &'static str {
        "qpl"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn compress(
        &mut self,
        mode: Mode,
        table: Option<&Table>,
        page: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Outcome, BackendError> {
        check_page(page)?;
        let huff = match mode {
            Mode::Canned => self.table(table)?,
            _ => std::ptr::null_mut(),
        };
        // QPL's job takes a mutable input pointer but does not write through it.
        let mut input = page.to_vec();
        out.clear();
        out.resize(PAGE_SIZE, 0);
        let job = self.job.reset()?;
        job.op = ffi::qpl_op_compress;
        job.level = ffi::qpl_default_level;
        job.flags = ffi::QPL_FLAG_FIRST | ffi::QPL_FLAG_LAST;
        match mode {
            Mode::Fixed => {}
            Mode::Dynamic => job.flags |= ffi::QPL_FLAG_DYNAMIC_HUFFMAN,
            Mode::Canned => {
                job.flags |= ffi::QPL_FLAG_CANNED_MODE;
                job.huffman_table = huff;
            }
        }
        job.next_in_ptr = input.as_mut_ptr();
        job.available_in = input.len() as u32;
        job.next_out_ptr = out.as_mut_ptr();
        job.available_out = out.len() as u32;
        match self.job.execute() {
            Ok(()) => {}
            Err(BackendError::Qpl { code, .. })
                if code == ffi::QPL_STS_MORE_OUTPUT_NEEDED
                    || code == ffi::QPL_STS_DST_IS_SHORT_ERR =>
            {
                return Ok(Outcome::Incompressible)
            }
            Err(e) => return Err(e),
        }
        // SAFETY: the job is initialised and no longer borrowed mutably.
        let n = unsafe { (*self.job.ptr()).total_out } as usize;
        out.truncate(n);
        Ok(super::outcome_of(out))
    }

    fn decompress(
        &mut self,
        mode: Mode,
        table: Option<&Table>,
        data: &[u8],
        out: &mut [u8],
    ) -> Result<usize, BackendError> {
        let huff = match mode {
            Mode::Canned => self.table(table)?,
            _ => std::ptr::null_mut(),
        };
        let mut input = data.to_vec();
        let limit = out.len();
        let job = self.job.reset()?;
        job.op = ffi::qpl_op_decompress;
        job.flags = ffi::QPL_FLAG_FIRST | ffi::QPL_FLAG_LAST;
        if mode == Mode::Canned {
            job.flags |= ffi::QPL_FLAG_CANNED_MODE;
            job.huffman_table = huff;
        }
        job.next_in_ptr = input.as_mut_ptr();
        job.available_in = input.len() as u32;
        job.next_out_ptr = out.as_mut_ptr();
        job.available_out = limit as u32;
        match self.job.execute() {
            Ok(()) => {}
            Err(BackendError::Qpl { code, .. }) if code == ffi::QPL_STS_MORE_OUTPUT_NEEDED => {
                return Err(BackendError::OutputLimit {
                    backend: "qpl",
                    limit,
                })
            }
            Err(e) => return Err(e),
        }
        // SAFETY: the job is initialised and no longer borrowed mutably.
        Ok(unsafe { (*self.job.ptr()).total_out } as usize)
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

    #[test]
    fn histogram_counts_are_powers_of_two() {
        assert_eq!(count_for(1), 1 << 14);
        assert_eq!(count_for(15), 1);
        assert_eq!(count_for(0), 0);
    }
}
