//! The Linux kernel's software compressors as zswap runs them, for the
//! simulator to predict what the real zswap stores (`cannery zswap-kernel
//! --compare-sim` checks the prediction against the kernel's counters).
//!
//! - `kernel-deflate`: the crypto API's `deflate` (crypto/deflate.c): zlib
//!   raw deflate with `DEFLATE_DEF_WINBITS` 11 (a 2 KiB window), level
//!   `Z_DEFAULT_COMPRESSION` (6), `DEFLATE_DEF_MEMLEVEL` = the kernel's
//!   `MAX_MEM_LEVEL`, which its include/linux/zconf.h sets to 8 (not zlib's
//!   9), default strategy, one page per call. Run here through the system
//!   zlib (flate2) with exactly those parameters. The kernel's zlib is its
//!   own old copy (lib/zlib_deflate, from zlib 1.1.3) and does not always
//!   parse as zlib 1.2 does: measured on 60 node-service pages, 11 land in
//!   another 16-byte size class in the kernel than here, either way. So
//!   this is a close model, not the kernel's bytes; `--compare-sim` states
//!   the pool error it leads to. Decoded by zlib.
//! - `kernel-lzo` (feature `lzo`): LZO1X-1 as the kernel's
//!   lib/lzo/lzo1x_compress.c, through the `rust-lzo` crate, a translation
//!   of that file (GPL-2.0, hence a feature that is off by default). The
//!   kernel's `lzo-rle` variant is not modelled.

use flate2::{Compress, Compression, FlushCompress, Status};

/// The crypto API's deflate level (`Z_DEFAULT_COMPRESSION`).
pub const KERNEL_DEFLATE_LEVEL: u32 = 6;
/// Its window: 2^11 bytes, raw deflate.
pub const KERNEL_DEFLATE_WINDOW_BITS: u8 = 11;

/// zlib set up as the kernel's crypto `deflate` (flate2's zlib streams use
/// memory level 8, the kernel's `MAX_MEM_LEVEL`), reused page after page.
pub struct KernelDeflate {
    stream: Compress,
}

impl std::fmt::Debug for KernelDeflate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KernelDeflate")
    }
}

impl KernelDeflate {
    /// A stream with the kernel's parameters.
    pub fn new() -> Result<KernelDeflate, String> {
        Ok(KernelDeflate {
            stream: Compress::new_with_window_bits(
                Compression::new(KERNEL_DEFLATE_LEVEL),
                false,
                KERNEL_DEFLATE_WINDOW_BITS,
            ),
        })
    }

    /// Compresses `page` into `out` (cleared first).
    pub fn deflate(&mut self, page: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        out.clear();
        out.reserve(page.len() + page.len() / 1000 + 64);
        self.stream.reset();
        match self.stream.compress_vec(page, out, FlushCompress::Finish) {
            Ok(Status::StreamEnd) => Ok(()),
            Ok(status) => Err(format!("deflate stopped with {status:?}")),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// LZO1X-1 as the kernel's lzo1x_compress.c (feature `lzo`): `page` into
/// `out` (at least `rust_lzo::worst_compress(page.len())` bytes); the bytes
/// written.
#[cfg(feature = "lzo")]
pub fn kernel_lzo(page: &[u8], out: &mut [u8]) -> Result<usize, String> {
    if out.len() < rust_lzo::worst_compress(page.len()) {
        return Err(format!("{} bytes of room for lzo's worst case", out.len()));
    }
    let mut ctx = rust_lzo::LZOContext::new();
    let (done, err) = ctx.compress_to_slice(page, out);
    if err != rust_lzo::LZOError::OK {
        return Err("lzo1x_1_compress failed".into());
    }
    Ok(done.len())
}

/// LZO1X decompression (the kernel's lzo1x_decompress_safe).
#[cfg(feature = "lzo")]
pub fn kernel_lzo_decompress(data: &[u8], out: &mut [u8]) -> Result<usize, String> {
    let (done, err) = rust_lzo::LZOContext::decompress_to_slice(data, out);
    if err != rust_lzo::LZOError::OK {
        return Err("lzo1x_decompress_safe rejected the stream".into());
    }
    Ok(done.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Vec<u8> {
        (0..4096u32)
            .map(|i| ((i / 7) % 13) as u8 ^ (i % 3) as u8)
            .collect()
    }

    #[test]
    fn kernel_deflate_is_raw_deflate_with_a_2k_window_that_zlib_reads() {
        let mut k = KernelDeflate::new().unwrap();
        let mut out = Vec::new();
        for _ in 0..2 {
            k.deflate(&page(), &mut out).unwrap();
            let mut back = vec![0u8; 4096];
            let n = super::super::deflate::zlib_inflate(&out, &mut back).unwrap();
            assert_eq!(&back[..n], &page()[..]);
        }
        // The 2 KiB window: a repeat 3000 bytes back is out of reach, so
        // a page that is one random 2.5 KiB block repeated does not halve.
        let mut x = 0x9e3779b97f4a7c15u64;
        let block: Vec<u8> = (0..2560)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        let mut far = block.clone();
        far.extend_from_slice(&block[..4096 - 2560]);
        k.deflate(&far, &mut out).unwrap();
        let mut zlib15 = Vec::new();
        super::super::deflate::zlib_deflate(6, &far, &mut zlib15).unwrap();
        assert!(
            out.len() > 4000,
            "kernel window cannot reach back 2560 bytes: {}",
            out.len()
        );
        assert!(zlib15.len() < 2800, "a 32 KiB window can: {}", zlib15.len());
    }

    #[cfg(feature = "lzo")]
    #[test]
    fn kernel_lzo_round_trips() {
        let mut room = vec![0u8; rust_lzo::worst_compress(4096)];
        let n = kernel_lzo(&page(), &mut room).unwrap();
        let out = room[..n].to_vec();
        assert!(out.len() < 4096);
        assert!(
            kernel_lzo(&page(), &mut room[..n]).is_err(),
            "too little room is an error"
        );
        let mut back = vec![0u8; 4096];
        assert_eq!(kernel_lzo_decompress(&out, &mut back).unwrap(), 4096);
        assert_eq!(back, page());
    }
}
