//! QPL's decompression routes, as the `qpl` backend's module documentation
//! describes them: raw inflate for fixed and dynamic streams, and for canned
//! streams the kernel driver's route (the table's header ‖ the body up to
//! its end-of-block code ‖ a final fixed block with a sentinel, accepted
//! only if QPL ends exactly on the sentinel), plus QPL's own canned decoder
//! for tables it loads unchanged. Compression is in the parent module.

use super::{ffi, Qpl};
use crate::backend::EngineError;
use cannery_codec::bitio::BitWriter;
use cannery_codec::constants::END_OF_BLOCK;
use cannery_codec::huffman::reverse_bits;
use cannery_codec::table::Table;

/// The two bytes of the final fixed block put after a canned body's
/// end-of-block code; their fixed codes are 8 bits (literals 0..=143).
pub(super) const SENTINEL: [u8; 2] = [0x5a, 0x0f];

/// Where the last end-of-block code of canned stream `body` may end, in
/// bits from the start of `body`, going by canned framing only: the code,
/// then 0..=7 zero bits (IAA hardware, our encoder), or the code, QPL's
/// 10-bit empty final fixed block and 0..=7 zero bits (QPL's software path).
/// The bits after the code's last 1 bit are zero padding, so one candidate
/// per framing usually remains; an end-of-block code of all zero bits (e.g.
/// the fixed code's) leaves up to eight. Empty if no framing fits.
pub(super) fn eob_end_candidates(table: &Table, body: &[u8]) -> Vec<usize> {
    let total = body.len() * 8;
    let eob_len = table.lengths().litlen[END_OF_BLOCK as usize] as usize;
    if eob_len == 0 {
        return Vec::new();
    }
    // Trailing zero bits of the stream (bits are sent LSB-first).
    let zeros = match body.iter().rposition(|&b| b != 0) {
        Some(i) => (body.len() - 1 - i) * 8 + body[i].leading_zeros() as usize,
        None => total,
    };
    let bit = |i: usize| (body[i / 8] >> (i % 8)) & 1;
    let mut ends = Vec::new();
    // End-of-block code then padding: the code's value is sent MSB-first, so
    // its last bits are its trailing zeros.
    let code = table.litlen_codes()[END_OF_BLOCK as usize];
    if code != 0 {
        let t = code.trailing_zeros() as usize;
        if zeros >= t && zeros - t <= 7 && total - (zeros - t) >= eob_len {
            ends.push(total - (zeros - t));
        }
    } else {
        for pad in 0..=7 {
            if pad + eob_len <= zeros {
                ends.push(total - pad);
            }
        }
    }
    // QPL's tail: bits 1, 1, then eight zeros, then 0..=7 zero bits.
    if (8..=15).contains(&zeros) && total >= zeros + 2 + eob_len && bit(total - zeros - 2) == 1 {
        ends.push(total - zeros - 2);
    }
    ends
}

/// The raw deflate stream QPL decodes for a canned body whose end-of-block
/// code ends at bit `end`: the table's header with BFINAL cleared, the body's
/// first `end` bits, then a final fixed block holding [`SENTINEL`].
pub(super) fn sentinel_stream(table: &Table, body: &[u8], end: usize) -> Vec<u8> {
    let h = table.header();
    let mut out = Vec::with_capacity(h.bytes.len() + body.len() + 4);
    let mut w = BitWriter::new(&mut out);
    if table.is_fixed_code() {
        // BFINAL=0, BTYPE=01.
        w.put(0b010, 3);
    } else {
        let mut head = h.bytes.clone();
        head[0] &= !1;
        w.put_bytes_bits(&head, h.bits);
    }
    w.put_bytes_bits(body, end);
    w.put(0b011, 3);
    for b in SENTINEL {
        w.put(reverse_bits(0x30 + b as u16, 8) as u32, 8);
    }
    // Fixed end-of-block: seven zero bits.
    w.put(0, 7);
    w.finish();
    out
}

impl Qpl {
    /// Inflates one raw deflate stream (FIRST | LAST, stop at the final
    /// block's end-of-block code) into `out`; returns the bytes produced.
    /// QPL's software path reports success on streams that end early, and
    /// counts every input byte as read, so callers check the end themselves.
    pub(super) fn inflate_raw(
        &mut self,
        data: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EngineError> {
        let mut input = data.to_vec();
        let limit = out.len();
        let job = self.job.reset()?;
        job.op = ffi::qpl_op_decompress;
        job.flags = ffi::QPL_FLAG_FIRST | ffi::QPL_FLAG_LAST;
        job.decomp_end_processing = ffi::qpl_stop_and_check_for_bfinal_eob as u8;
        job.next_in_ptr = input.as_mut_ptr();
        job.available_in = input.len() as u32;
        job.next_out_ptr = out.as_mut_ptr();
        job.available_out = limit as u32;
        self.job.execute()?;
        // SAFETY: the job is initialised and no longer borrowed mutably.
        Ok(unsafe { (*self.job.ptr()).total_out } as usize)
    }

    /// Canned decompression through the table's deflate header (see the
    /// module doc): tries each framing [`eob_end_candidates`] allows and
    /// returns the first whose QPL output ends with the sentinel.
    pub(super) fn decompress_by_header(
        &mut self,
        table: &Table,
        data: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EngineError> {
        if !table.is_standard() && !table.is_fixed_code() {
            return Err(EngineError::TableNotStandard {
                table_id: table.id(),
            });
        }
        let ends = eob_end_candidates(table, data);
        let limit = out.len();
        let mut scratch = vec![0u8; limit + SENTINEL.len()];
        let mut first_err = None;
        for &end in &ends {
            let stream = sentinel_stream(table, data, end);
            let err = match self.inflate_raw(&stream, &mut scratch) {
                Ok(n) if n >= SENTINEL.len() && scratch[n - SENTINEL.len()..n] == SENTINEL => {
                    let n = n - SENTINEL.len();
                    out[..n].copy_from_slice(&scratch[..n]);
                    return Ok(n);
                }
                Ok(n) => EngineError::Rejected {
                    backend: "qpl",
                    message: format!(
                        "qpl did not decode the stream to its end-of-block code at bit {end} \
                         ({n} bytes out, without the sentinel block that follows it)"
                    ),
                },
                Err(EngineError::Qpl { code, .. }) if code == ffi::QPL_STS_MORE_OUTPUT_NEEDED => {
                    EngineError::OutputLimit {
                        backend: "qpl",
                        limit,
                    }
                }
                Err(e) => e,
            };
            first_err.get_or_insert(err);
        }
        Err(first_err.unwrap_or_else(|| EngineError::Rejected {
            backend: "qpl",
            message: "the stream does not end in the table's end-of-block code and zero \
                      padding (nor qpl's empty final fixed block)"
                .into(),
        }))
    }

    /// Canned decompression by QPL's own canned mode (`QPL_FLAG_CANNED_MODE`
    /// with the table loaded through the histogram route): only for tables
    /// QPL loads unchanged ([`Rule::QplLoadable`]).
    pub fn decompress_with_qpl_table(
        &mut self,
        table: &Table,
        data: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EngineError> {
        let huff = self.table(Some(table))?;
        let mut input = data.to_vec();
        let limit = out.len();
        let job = self.job.reset()?;
        job.op = ffi::qpl_op_decompress;
        job.flags = ffi::QPL_FLAG_FIRST | ffi::QPL_FLAG_LAST | ffi::QPL_FLAG_CANNED_MODE;
        job.huffman_table = huff;
        job.next_in_ptr = input.as_mut_ptr();
        job.available_in = input.len() as u32;
        job.next_out_ptr = out.as_mut_ptr();
        job.available_out = limit as u32;
        match self.job.execute() {
            Ok(()) => {}
            Err(EngineError::Qpl { code, .. }) if code == ffi::QPL_STS_MORE_OUTPUT_NEEDED => {
                return Err(EngineError::OutputLimit {
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
