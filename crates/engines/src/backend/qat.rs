//! The `qat` backend (cargo feature `qat`): QATzip through bindings that
//! bindgen generates at build time from the installed `qatzip.h`, with
//! `libqatzip` loaded at run time (so a build with the feature runs, and
//! says the library is missing, where it is absent).
//!
//! One session, raw deflate (`QZ_DEFLATE_RAW`), dynamic Huffman headers,
//! software backup enabled, decompression that stops at the end of a
//! stream. QAT cannot compress with a caller's table
//! (docs/canned-format.md §6.3), so it compresses in dynamic mode only; it
//! decompresses fixed, dynamic and canned streams, the latter as the
//! table's header and the stream's body, without the tail after its
//! end-of-block code ([`super::canned_bits_to_deflate`]): QATzip would read
//! QPL's empty final block after it as another stream. A stream QATzip does
//! not see the end of is an error (a stream cut short is not a short page),
//! and after it, or after any error, the session starts again: QATzip's
//! software path would go on reading the next stream as its continuation.
//!
//! Three states, told apart when the backend opens: a QAT device
//! (`hw_session_status` is `QZ_OK`: path `hardware`); QATzip with no device
//! (`QZ_NO_HW` and kin: path `software`, every job QATzip's own software
//! deflate, which is zlib, not the accelerator); no library (the backend is
//! unavailable, with the reason). With a device, each job's path is read
//! from its extended return code (`QZ_SW_EXECUTION`: QATzip sends requests
//! below its input threshold to software by design) and reported by
//! [`Engine::last_path`]. QATzip's own log lines are switched off: the
//! states above say what they said. Its `unsafe` is the FFI's (the
//! codec's others: `qpl`, the decoder's fast loop).

use super::{
    as_deflate, canned_bits_to_deflate, outcome_of, Capabilities, Direction, Engine, EngineError,
    ExecPath, Job, ALL_MODES,
};
use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::decode::CannedDecoder;
use cannery_codec::encode::Outcome;
use cannery_codec::mode::Mode;
use cannery_codec::table::rules::Rule;
use cannery_codec::table::Table;

bindgen_module!("qat_bindings.rs");

/// `QZ_SW_EXECUTION_MASK` from qatzip.h: set in `ext_rc` when software ran the job.
const SW_EXECUTION_MASK: u64 = 1 << 4;

/// Where the loader looks for libqatzip, in order: the runtime library by
/// soname, the development link, and the directory the build found it in.
fn library_candidates() -> Vec<String> {
    vec![
        "libqatzip.so.3".into(),
        "libqatzip.so".into(),
        format!("{}/libqatzip.so", env!("CANNERY_QATZIP_LIB_DIR")),
    ]
}

/// libqatzip, loaded once per process; the error says what was tried.
fn library() -> Result<&'static ffi::QatZipLib, String> {
    static LIB: std::sync::OnceLock<Result<ffi::QatZipLib, String>> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        let mut tried = Vec::new();
        for name in library_candidates() {
            // SAFETY: loading libqatzip runs its (and qatlib's) ELF
            // initialisers, which take no arguments and have no
            // preconditions; every symbol is resolved here, with the
            // signatures bindgen read from the same library's qatzip.h.
            match unsafe { ffi::QatZipLib::new(&name) } {
                Ok(lib) => return Ok(lib),
                Err(e) => tried.push(format!("{name}: {e}")),
            }
        }
        Err(format!(
            "libqatzip could not be loaded ({}); install QATzip and qatlib \
             (README: \"QAT\"), or add their lib directory to LD_LIBRARY_PATH",
            tried.join("; ")
        ))
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// The path a session's `hw_session_status` means, or the error it is.
fn path_of_status(status: i64) -> Result<(ExecPath, Option<String>), i32> {
    match status {
        0 | 1 => Ok((ExecPath::Hardware, None)),
        // A device, and no software engine to fall back on.
        -105 => Ok((
            ExecPath::Hardware,
            Some("QAT device; QATzip has no software backup (QZ_NO_SW_AVAIL)".into()),
        )),
        11..=14 => Ok((
            ExecPath::Software,
            Some(format!(
                "QATzip present, no usable QAT device ({}): every job runs QATzip's \
                 software fallback (zlib deflate), not the accelerator",
                code_name(status as i32)
            )),
        )),
        other => Err(other as i32),
    }
}

/// The C name of a QATzip return code.
fn code_name(code: i32) -> &'static str {
    match code {
        0 => "QZ_OK",
        1 => "QZ_DUPLICATE",
        2 => "QZ_FORCE_SW",
        -1 => "QZ_PARAMS",
        -2 => "QZ_FAIL",
        -3 => "QZ_BUF_ERROR",
        -4 => "QZ_DATA_ERROR",
        -5 => "QZ_TIMEOUT",
        -100 => "QZ_INTEG",
        11 => "QZ_NO_HW",
        12 => "QZ_NO_MDRV",
        13 => "QZ_NO_INST_ATTACH",
        14 => "QZ_LOW_MEM",
        15 => "QZ_LOW_DEST_MEM",
        16 => "QZ_UNSUPPORTED_FMT",
        100 => "QZ_NONE",
        -101 => "QZ_NOSW_NO_HW",
        -102 => "QZ_NOSW_NO_MDRV",
        -103 => "QZ_NOSW_NO_INST_ATTACH",
        -104 => "QZ_NOSW_LOW_MEM",
        -105 => "QZ_NO_SW_AVAIL",
        -116 => "QZ_NOSW_UNSUPPORTED_FMT",
        -117 => "QZ_POST_PROCESS_ERROR",
        -118 => "QZ_METADATA_OVERFLOW",
        -119 => "QZ_OUT_OF_RANGE",
        -200 => "QZ_NOT_SUPPORTED",
        _ => "unknown",
    }
}

fn qz_err(call: &'static str, code: i32) -> EngineError {
    EngineError::Qat {
        call,
        code,
        name: code_name(code),
    }
}

/// Starts a raw-deflate session in `sess` (zeroed, or torn down and
/// closed): `qzInit`, then `qzSetupSessionDeflateExt` with dynamic headers,
/// software backup, and decompression that stops at the end of a stream
/// (without it QATzip reads the bytes after a final block as another
/// stream) and says whether it got there (`qzGetDeflateEndOfStream`, which
/// only the extended setup supports).
fn start_session(
    lib: &'static ffi::QatZipLib,
    sess: &mut ffi::QzSession_T,
) -> Result<(), EngineError> {
    // SAFETY: `sess` is a valid session struct, zeroed or closed, that
    // outlives the session (the backend boxes it).
    let rc = unsafe { lib.qzInit(sess, 1) };
    // The codes a session can work with are those that name a path.
    if path_of_status(i64::from(rc)).is_err() {
        return Err(qz_err("qzInit", rc));
    }
    // SAFETY: params is a plain C struct filled in by qzGetDefaultsDeflateExt.
    let mut params: ffi::QzSessionParamsDeflateExt_T = unsafe { std::mem::zeroed() };
    // SAFETY: `params` is a valid out-pointer.
    let rc = unsafe { lib.qzGetDefaultsDeflateExt(&mut params) };
    if rc != 0 {
        return Err(qz_err("qzGetDefaultsDeflateExt", rc));
    }
    params.deflate_params.data_fmt = ffi::QZ_DEFLATE_RAW;
    params.deflate_params.huffman_hdr = ffi::QZ_DYNAMIC_HDR;
    params.deflate_params.common_params.direction = ffi::QZ_DIR_BOTH;
    params.deflate_params.common_params.sw_backup = 1;
    params.stop_decompression_stream_end = 1;
    params.zlib_format = 0;
    // SAFETY: `sess` was initialised by qzInit; `params` is valid.
    let rc = unsafe { lib.qzSetupSessionDeflateExt(sess, &mut params) };
    if path_of_status(i64::from(rc)).is_err() {
        return Err(qz_err("qzSetupSessionDeflateExt", rc));
    }
    Ok(())
}

/// QATzip as a backend.
pub struct Qat {
    lib: &'static ffi::QatZipLib,
    caps: Capabilities,
    /// Boxed: QATzip keeps the session's address.
    sess: Box<ffi::QzSession_T>,
    last: ExecPath,
    /// The decoder of the last canned table, by table id: it finds where a
    /// canned stream's body ends ([`Qat::canned_as_deflate`]).
    canned: Option<(String, CannedDecoder)>,
}

impl Qat {
    /// Opens a raw-deflate QATzip session: on a QAT device if there is
    /// one, else in QATzip's software fallback (said in the path note).
    /// Unavailable when libqatzip cannot be loaded.
    pub fn open() -> Result<Qat, EngineError> {
        let lib = library().map_err(|reason| EngineError::Unavailable {
            backend: "qat",
            reason,
        })?;
        // SAFETY: a plain setter of QATzip's global log level.
        unsafe { lib.qzSetLogLevel(ffi::LOG_NONE) };
        // SAFETY: QzSession_T is a plain C struct; QATzip expects it zeroed.
        let mut sess: Box<ffi::QzSession_T> = Box::new(unsafe { std::mem::zeroed() });
        start_session(lib, &mut sess)?;
        // Both calls answer QZ_OK with sw_backup even without a device, and
        // a job's extended return code does not flag software either (seen
        // with QATzip 1.3.1): the session status, set by the setup, is
        // what says which engine will run.
        let (path, note) = path_of_status(sess.hw_session_stat as i64)
            .map_err(|code| qz_err("qzSetupSessionDeflate (session status)", code))?;
        // QATzip 1.3.1 answers its version-list calls with "not supported
        // yet", so the version is the one the build found.
        let built = format!("built against QATzip {}", env!("CANNERY_QATZIP_VERSION"));
        let note = Some(match note {
            Some(n) => format!("{n}; {built}"),
            None => built,
        });
        Ok(Qat {
            lib,
            caps: Capabilities {
                name: "qat",
                compress: vec![Mode::Dynamic],
                decompress: ALL_MODES.to_vec(),
                path,
                path_note: note,
                canned_compress_rules: &[],
                canned_decompress_rules: &[Rule::Standard],
            },
            sess,
            last: path,
            canned: None,
        })
    }
}

impl Qat {
    /// Canned stream `canned` as raw deflate that ends where its final block
    /// ends. QATzip reads on past a final block, taking the bytes after it
    /// for another stream: a canned stream's own tail (QPL's software path
    /// ends its streams with an empty final fixed block after the table's
    /// block, which the deflate header marks final) would come out as
    /// garbage or a data error. So only the body goes after the header,
    /// found by our decoder; a stream it rejects goes whole, for QATzip to
    /// judge the same bits.
    fn canned_as_deflate(
        &mut self,
        table: &Table,
        canned: &[u8],
        limit: usize,
    ) -> Result<Vec<u8>, EngineError> {
        let id = table.id();
        let decoder = match &mut self.canned {
            Some((known, d)) if *known == id => d,
            slot => &slot.insert((id, CannedDecoder::new(table))).1,
        };
        let bits = decoder.body_bits(canned, limit).unwrap_or(canned.len() * 8);
        canned_bits_to_deflate(table, canned, bits)
    }

    /// One qzCompressExt (as the last block) or qzDecompressExt call of
    /// `src` into `dst`: its return code, the bytes it read and wrote, and
    /// its extended return code.
    fn call(&mut self, way: Direction, src: &[u8], dst: &mut [u8]) -> (i32, usize, usize, u64) {
        let mut src_len = u32::try_from(src.len()).unwrap_or(u32::MAX);
        let mut dst_len = u32::try_from(dst.len()).unwrap_or(u32::MAX);
        let mut ext: u64 = 0;
        let (sess, s, d) = (&mut *self.sess, src.as_ptr(), dst.as_mut_ptr());
        // SAFETY: `s` and `d` are live buffers of at least `src_len` and
        // `dst_len` bytes for the call's duration; the session is set up.
        let rc = unsafe {
            match way {
                Direction::Compress => {
                    self.lib
                        .qzCompressExt(sess, s, &mut src_len, d, &mut dst_len, 1, &mut ext)
                }
                Direction::Decompress => {
                    self.lib
                        .qzDecompressExt(sess, s, &mut src_len, d, &mut dst_len, &mut ext)
                }
            }
        };
        (rc, src_len as usize, dst_len as usize, ext)
    }

    /// Whether the last decompression reached the end of its deflate stream
    /// (the end of a final block).
    fn stream_ended(&mut self) -> bool {
        let mut end: u8 = 0;
        // SAFETY: the session is set up; `end` is a valid out-pointer.
        let rc = unsafe { self.lib.qzGetDeflateEndOfStream(&mut *self.sess, &mut end) };
        rc == 0 && end == 1
    }

    /// Tears the session down and starts it again, in the same boxed struct.
    fn restart(&mut self) -> Result<(), EngineError> {
        // SAFETY: the session was set up (in `open` or the last restart);
        // it is torn down and closed once here, then zeroed, as `qzInit`
        // expects it.
        unsafe {
            self.lib.qzTeardownSession(&mut *self.sess);
            self.lib.qzClose(&mut *self.sess);
            *self.sess = std::mem::zeroed();
        }
        start_session(self.lib, &mut self.sess)
    }

    /// The engine that ran a job: software in the fallback state, else
    /// what its extended return code says.
    fn job_path(&self, ext: u64) -> ExecPath {
        if self.caps.path == ExecPath::Software || ext & SW_EXECUTION_MASK != 0 {
            ExecPath::Software
        } else {
            ExecPath::Hardware
        }
    }
}

impl Drop for Qat {
    fn drop(&mut self) {
        // SAFETY: the session was set up in `open` and is torn down once.
        unsafe {
            self.lib.qzTeardownSession(&mut *self.sess);
            self.lib.qzClose(&mut *self.sess);
        }
    }
}

impl Engine for Qat {
    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn last_path(&self) -> ExecPath {
        self.last
    }

    fn compress_job(&mut self, job: Job<'_>, out: &mut Vec<u8>) -> Result<Outcome, EngineError> {
        let page = job.data;
        out.clear();
        out.resize(2 * PAGE_SIZE + 1024, 0);
        let (rc, src_len, dst_len, ext) = self.call(Direction::Compress, page, out);
        if rc != 0 {
            return Err(qz_err("qzCompress", rc));
        }
        if src_len != page.len() {
            // QATzip issue #104: OK without consuming all input.
            return Err(EngineError::Rejected {
                backend: "qat",
                message: format!("qzCompress consumed {src_len} of {} bytes", page.len()),
            });
        }
        self.last = self.job_path(ext);
        out.truncate(dst_len);
        Ok(outcome_of(out))
    }

    fn decompress_job(&mut self, job: Job<'_>, out: &mut [u8]) -> Result<usize, EngineError> {
        let data = match (job.mode, job.table) {
            (Mode::Canned, Some(t)) => {
                std::borrow::Cow::Owned(self.canned_as_deflate(t, job.data, out.len())?)
            }
            _ => as_deflate(job.mode, job.table, job.data)?,
        };
        if data.is_empty() {
            // QATzip answers QZ_OK with no output; a stream has a final block.
            return Err(EngineError::Rejected {
                backend: "qat",
                message: "empty stream (no final block)".into(),
            });
        }
        let (rc, src_len, dst_len, ext) = self.call(Direction::Decompress, &data, out);
        let ended = self.stream_ended();
        if rc != 0 || !ended {
            // QATzip's software path keeps its inflate state after a stream
            // that did not end, to go on with the next call's input, and
            // after an error, for good (every later call fails too): the
            // next stream must start on a fresh session.
            self.restart()?;
        }
        match rc {
            0 => {}
            -3 | 15 => {
                return Err(EngineError::OutputLimit {
                    backend: "qat",
                    limit: out.len(),
                })
            }
            _ => return Err(qz_err("qzDecompress", rc)),
        }
        // QATzip answers QZ_OK for a stream it has not seen the end of:
        // the output filled first, or the input ran out (a stream cut short
        // is not a short page).
        if !ended {
            return Err(if dst_len == out.len() {
                EngineError::OutputLimit {
                    backend: "qat",
                    limit: out.len(),
                }
            } else {
                EngineError::Rejected {
                    backend: "qat",
                    message: format!(
                        "the stream ends before its final block ({src_len} of {} bytes \
                         read, {dst_len} produced)",
                        data.len()
                    ),
                }
            });
        }
        if src_len < data.len() {
            return Err(EngineError::Rejected {
                backend: "qat",
                message: format!(
                    "{} bytes after the final block (qzDecompress read {src_len} of {})",
                    data.len() - src_len,
                    data.len()
                ),
            });
        }
        self.last = self.job_path(ext);
        Ok(dst_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every return code qatzip.h defines, with its C name: the names the
    /// backend reports must be the header's.
    #[test]
    fn every_code_is_named_as_the_header_names_it() {
        macro_rules! codes {
            ($($c:ident),* $(,)?) => { [$((ffi::$c as i32, stringify!($c))),*] };
        }
        let codes = codes![
            QZ_OK,
            QZ_DUPLICATE,
            QZ_FORCE_SW,
            QZ_PARAMS,
            QZ_FAIL,
            QZ_BUF_ERROR,
            QZ_DATA_ERROR,
            QZ_TIMEOUT,
            QZ_INTEG,
            QZ_NO_HW,
            QZ_NO_MDRV,
            QZ_NO_INST_ATTACH,
            QZ_LOW_MEM,
            QZ_LOW_DEST_MEM,
            QZ_UNSUPPORTED_FMT,
            QZ_NONE,
            QZ_NOSW_NO_HW,
            QZ_NOSW_NO_MDRV,
            QZ_NOSW_NO_INST_ATTACH,
            QZ_NOSW_LOW_MEM,
            QZ_NO_SW_AVAIL,
            QZ_NOSW_UNSUPPORTED_FMT,
            QZ_POST_PROCESS_ERROR,
            QZ_METADATA_OVERFLOW,
            QZ_OUT_OF_RANGE,
            QZ_NOT_SUPPORTED,
        ];
        for (code, name) in codes {
            assert_eq!(code_name(code), name, "code {code}");
        }
        assert_eq!(code_name(12345), "unknown");
        assert_eq!(SW_EXECUTION_MASK, ffi::QZ_SW_EXECUTION_MASK as u64);
    }

    #[test]
    fn session_status_decides_the_path_and_never_claims_hardware_without_it() {
        assert_eq!(path_of_status(0), Ok((ExecPath::Hardware, None)));
        for code in [
            ffi::QZ_NO_HW,
            ffi::QZ_NO_MDRV,
            ffi::QZ_NO_INST_ATTACH,
            ffi::QZ_LOW_MEM,
        ] {
            let (path, note) = path_of_status(code as i64).unwrap();
            assert_eq!(path, ExecPath::Software);
            let note = note.unwrap();
            assert!(note.contains(code_name(code as i32)) && note.contains("not the accelerator"));
        }
        // A device without a software backup is still the device.
        assert_eq!(
            path_of_status(ffi::QZ_NO_SW_AVAIL as i64).unwrap().0,
            ExecPath::Hardware
        );
        // No software and no hardware, or a failure: an error, never a path.
        for code in [ffi::QZ_NOSW_NO_HW, ffi::QZ_FAIL, ffi::QZ_NOSW_NO_MDRV] {
            assert_eq!(path_of_status(code as i64), Err(code));
        }
    }
}
