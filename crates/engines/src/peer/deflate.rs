//! The three outside deflate libraries, each wrapped once: zlib (through
//! flate2), miniz_oxide and libdeflate (through libdeflater), one page at a
//! time, raw deflate, with the level as a parameter. Both the peer
//! compressors ([`super::Peer`]) and the codec's reference backends
//! (`backend::{zlib, miniz, libdeflate}`) call these, so each library's API
//! is used in one place.
//!
//! Decompression writes into the caller's buffer (its length is the limit)
//! and says why it failed in the terms backends report: output full,
//! input ended early, or the library's own complaint. Nothing here knows
//! about modes, tables or zswap's 4096-byte rule.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use libdeflater::{CompressionLvl, Compressor, DecompressionError, Decompressor};
use miniz_oxide::deflate::core::{
    compress, create_comp_flags_from_zip_params, CompressionStrategy, CompressorOxide, TDEFLFlush,
    TDEFLStatus,
};
use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

/// Why a stream did not inflate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InflateFailure {
    /// The output buffer filled before the stream ended.
    OutputFull,
    /// The input ended before the final block did.
    Truncated,
    /// The library's message.
    Rejected(String),
}

/// zlib's raw deflate of `page` at `level` (0..=9) into `out` (cleared).
pub fn zlib_deflate(level: u32, page: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut c = Compress::new(Compression::new(level), false);
    out.clear();
    // Worst case for a page: stored blocks, a few bytes per 16 KiB.
    out.reserve(2 * page.len() + 64);
    match c.compress_vec(page, out, FlushCompress::Finish) {
        Ok(Status::StreamEnd) => Ok(()),
        Ok(status) => Err(format!("deflate stopped with {status:?}")),
        Err(e) => Err(e.to_string()),
    }
}

/// zlib's inflate of raw deflate `data` into `out`; the bytes produced.
pub fn zlib_inflate(data: &[u8], out: &mut [u8]) -> Result<usize, InflateFailure> {
    let mut d = Decompress::new(false);
    let status = d
        .decompress(data, out, FlushDecompress::Finish)
        .map_err(|e| InflateFailure::Rejected(e.to_string()))?;
    match status {
        Status::StreamEnd => Ok(d.total_out() as usize),
        // Finish without reaching the end: the output is full or the input ran out.
        _ if d.total_out() as usize == out.len() => Err(InflateFailure::OutputFull),
        _ => Err(InflateFailure::Truncated),
    }
}

/// miniz_oxide's raw deflate of `page` at `level` (0..=10) into `out`
/// (cleared); `fixed` forces static (fixed-code) blocks.
pub fn miniz_deflate(level: u8, fixed: bool, page: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let strategy = if fixed {
        CompressionStrategy::Fixed
    } else {
        CompressionStrategy::Default
    };
    let flags = create_comp_flags_from_zip_params(level.into(), -15, strategy as i32);
    let mut c = CompressorOxide::new(flags);
    out.clear();
    out.resize(2 * page.len() + 64, 0);
    let (status, read, written) = compress(&mut c, page, out, TDEFLFlush::Finish);
    if status != TDEFLStatus::Done || read != page.len() {
        return Err(format!(
            "compressor stopped with {status:?} after {read} bytes"
        ));
    }
    out.truncate(written);
    Ok(())
}

/// miniz_oxide's inflate of raw deflate `data` into `out`; the bytes produced.
pub fn miniz_inflate(data: &[u8], out: &mut [u8]) -> Result<usize, InflateFailure> {
    let mut d = DecompressorOxide::new();
    let (status, _read, written) = decompress(
        &mut d,
        data,
        out,
        0,
        inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
    );
    match status {
        TINFLStatus::Done => Ok(written),
        TINFLStatus::HasMoreOutput => Err(InflateFailure::OutputFull),
        TINFLStatus::FailedCannotMakeProgress | TINFLStatus::NeedsMoreInput => {
            Err(InflateFailure::Truncated)
        }
        other => Err(InflateFailure::Rejected(format!("{other:?}"))),
    }
}

/// libdeflate's compressor and decompressor at one level (1..=12); they
/// keep their allocations between pages.
pub struct Libdeflate {
    c: Compressor,
    d: Decompressor,
}

impl std::fmt::Debug for Libdeflate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Libdeflate").finish_non_exhaustive()
    }
}

impl Libdeflate {
    /// At `level` (1..=12).
    pub fn new(level: i32) -> Result<Libdeflate, String> {
        let lvl = CompressionLvl::new(level).map_err(|e| format!("level {level}: {e:?}"))?;
        Ok(Libdeflate {
            c: Compressor::new(lvl),
            d: Decompressor::new(),
        })
    }

    /// Raw deflate of `page` into `out` (cleared).
    pub fn deflate(&mut self, page: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        out.clear();
        out.resize(self.c.deflate_compress_bound(page.len()), 0);
        let n = self
            .c
            .deflate_compress(page, out)
            .map_err(|e| e.to_string())?;
        out.truncate(n);
        Ok(())
    }

    /// Inflate of raw deflate `data` into `out`; the bytes produced.
    pub fn inflate(&mut self, data: &[u8], out: &mut [u8]) -> Result<usize, InflateFailure> {
        self.d.deflate_decompress(data, out).map_err(|e| match e {
            DecompressionError::InsufficientSpace => InflateFailure::OutputFull,
            DecompressionError::BadData => InflateFailure::Rejected("bad data".into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Vec<u8> {
        (0..4096u32).map(|i| ((i / 64) ^ (i % 7)) as u8).collect()
    }

    #[test]
    fn each_library_reads_the_others_streams() {
        let p = page();
        let mut ld = Libdeflate::new(6).unwrap();
        let mut streams = vec![Vec::new(), Vec::new(), Vec::new(), Vec::new()];
        zlib_deflate(6, &p, &mut streams[0]).unwrap();
        miniz_deflate(6, false, &p, &mut streams[1]).unwrap();
        miniz_deflate(6, true, &p, &mut streams[2]).unwrap();
        ld.deflate(&p, &mut streams[3]).unwrap();
        for s in &streams {
            let mut back = vec![0u8; 4096];
            assert_eq!(zlib_inflate(s, &mut back), Ok(4096));
            assert_eq!(back, p);
            assert_eq!(miniz_inflate(s, &mut back), Ok(4096));
            assert_eq!(ld.inflate(s, &mut back), Ok(4096));
            assert_eq!(back, p);
        }
    }

    #[test]
    fn failures_are_told_apart() {
        let p = page();
        let mut s = Vec::new();
        zlib_deflate(6, &p, &mut s).unwrap();
        let mut small = vec![0u8; 100];
        assert_eq!(
            zlib_inflate(&s, &mut small),
            Err(InflateFailure::OutputFull)
        );
        assert_eq!(
            miniz_inflate(&s, &mut small),
            Err(InflateFailure::OutputFull)
        );
        let mut ld = Libdeflate::new(1).unwrap();
        assert_eq!(ld.inflate(&s, &mut small), Err(InflateFailure::OutputFull));
        let mut back = vec![0u8; 4096];
        assert_eq!(
            zlib_inflate(&s[..s.len() / 2], &mut back),
            Err(InflateFailure::Truncated)
        );
        assert!(Libdeflate::new(13).is_err());
    }
}
