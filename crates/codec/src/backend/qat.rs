//! The `qat` backend (cargo feature `qat`): QATzip through bindings that
//! bindgen generates at build time from the installed `qatzip.h`.
//!
//! One session, raw deflate (`QZ_DEFLATE_RAW`), dynamic Huffman headers,
//! software backup enabled. QAT cannot compress with a caller's table
//! (docs/canned-format.md §6.3), so it compresses in dynamic mode only; it
//! decompresses fixed, dynamic and canned streams, the latter with the
//! table's header put in front ([`super::canned_to_deflate`]). Whether
//! QAT hardware or QATzip's zlib fallback ran is read per job from the
//! extended return code (`QZ_SW_EXECUTION`) and reported by
//! [`Backend::last_path`]. Requests below QATzip's input threshold go to
//! software by design. This is the only module (with `qpl`) allowed to use
//! `unsafe`.

use super::{
    as_deflate, check_page, outcome_of, Backend, BackendError, Capabilities, ExecPath, ALL_MODES,
};
use crate::constants::PAGE_SIZE;
use crate::encode::Outcome;
use crate::mode::Mode;
use crate::table::rules::Rule;
use crate::table::Table;

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
    include!(concat!(env!("OUT_DIR"), "/qat_bindings.rs"));
}

/// `QZ_SW_EXECUTION_MASK` from qatzip.h: set in `ext_rc` when software ran the job.
const SW_EXECUTION_MASK: u64 = 1 << 4;

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

fn qz_err(call: &'static str, code: i32) -> BackendError {
    BackendError::Qat {
        call,
        code,
        name: code_name(code),
    }
}

/// QATzip as a backend.
pub struct Qat {
    caps: Capabilities,
    /// Boxed: QATzip keeps the session's address.
    sess: Box<ffi::QzSession_T>,
    last: ExecPath,
}

impl std::fmt::Debug for Qat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Qat")
            .field("caps", &self.caps)
            .finish_non_exhaustive()
    }
}

impl Qat {
    /// Opens a raw-deflate QATzip session (hardware if present, else its
    /// software fallback).
    pub fn open() -> Result<Qat, BackendError> {
        // SAFETY: QzSession_T is a plain C struct; QATzip expects it zeroed.
        let mut sess: Box<ffi::QzSession_T> = Box::new(unsafe { std::mem::zeroed() });
        // SAFETY: `sess` is a valid, zeroed session that outlives the backend.
        let rc = unsafe { ffi::qzInit(&mut *sess, 1) };
        let (path, note) = match rc {
            0 | 1 => (ExecPath::Hardware, None),
            11..=13 => (
                ExecPath::Software,
                Some(format!(
                    "no QAT hardware ({}); QATzip's software fallback runs",
                    code_name(rc)
                )),
            ),
            _ => return Err(qz_err("qzInit", rc)),
        };
        // SAFETY: params is a plain C struct filled in by qzGetDefaultsDeflate.
        let mut params: ffi::QzSessionParamsDeflate_T = unsafe { std::mem::zeroed() };
        // SAFETY: `params` is a valid out-pointer.
        let rc = unsafe { ffi::qzGetDefaultsDeflate(&mut params) };
        if rc != 0 {
            return Err(qz_err("qzGetDefaultsDeflate", rc));
        }
        params.data_fmt = ffi::QZ_DEFLATE_RAW;
        params.huffman_hdr = ffi::QZ_DYNAMIC_HDR;
        params.common_params.direction = ffi::QZ_DIR_BOTH;
        params.common_params.sw_backup = 1;
        // SAFETY: `sess` was initialised by qzInit; `params` is valid.
        let rc = unsafe { ffi::qzSetupSessionDeflate(&mut *sess, &mut params) };
        if rc != 0 && !(11..=13).contains(&rc) {
            return Err(qz_err("qzSetupSessionDeflate", rc));
        }
        Ok(Qat {
            caps: Capabilities {
                compress: vec![Mode::Dynamic],
                decompress: ALL_MODES.to_vec(),
                path,
                path_note: note,
                canned_compress_rules: &[],
                canned_decompress_rules: &[Rule::Standard],
            },
            sess,
            last: path,
        })
    }
}

impl Drop for Qat {
    fn drop(&mut self) {
        // SAFETY: the session was set up in `open` and is torn down once.
        unsafe {
            ffi::qzTeardownSession(&mut *self.sess);
            ffi::qzClose(&mut *self.sess);
        }
    }
}

impl Backend for Qat {
    fn name(&self) -> &'static str {
        "qat"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn last_path(&self) -> ExecPath {
        self.last
    }

    fn compress(
        &mut self,
        mode: Mode,
        _table: Option<&Table>,
        page: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Outcome, BackendError> {
        check_page(page)?;
        self.caps.check_compress(self.name(), mode)?;
        out.clear();
        out.resize(2 * PAGE_SIZE + 1024, 0);
        let mut src_len = page.len() as u32;
        let mut dst_len = out.len() as u32;
        let mut ext: u64 = 0;
        // SAFETY: src/dst pointers and lengths describe live buffers; the
        // session is set up.
        let rc = unsafe {
            ffi::qzCompressExt(
                &mut *self.sess,
                page.as_ptr(),
                &mut src_len,
                out.as_mut_ptr(),
                &mut dst_len,
                1,
                &mut ext,
            )
        };
        if rc != 0 {
            return Err(qz_err("qzCompress", rc));
        }
        if src_len as usize != page.len() {
            // QATzip issue #104: OK without consuming all input.
            return Err(BackendError::Rejected {
                backend: "qat",
                message: format!("qzCompress consumed {src_len} of {} bytes", page.len()),
            });
        }
        self.last = if ext & SW_EXECUTION_MASK != 0 {
            ExecPath::Software
        } else {
            ExecPath::Hardware
        };
        out.truncate(dst_len as usize);
        Ok(outcome_of(out))
    }

    fn decompress(
        &mut self,
        mode: Mode,
        table: Option<&Table>,
        data: &[u8],
        out: &mut [u8],
    ) -> Result<usize, BackendError> {
        let data = as_deflate(mode, table, data)?;
        let mut src_len = data.len() as u32;
        let mut dst_len = out.len() as u32;
        let mut ext: u64 = 0;
        // SAFETY: src/dst pointers and lengths describe live buffers; the
        // session is set up.
        let rc = unsafe {
            ffi::qzDecompressExt(
                &mut *self.sess,
                data.as_ptr(),
                &mut src_len,
                out.as_mut_ptr(),
                &mut dst_len,
                &mut ext,
            )
        };
        match rc {
            0 => {}
            -3 | 15 => {
                return Err(BackendError::OutputLimit {
                    backend: "qat",
                    limit: out.len(),
                })
            }
            _ => return Err(qz_err("qzDecompress", rc)),
        }
        self.last = if ext & SW_EXECUTION_MASK != 0 {
            ExecPath::Software
        } else {
            ExecPath::Hardware
        };
        Ok(dst_len as usize)
    }
}
