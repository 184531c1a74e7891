//! lz4 with a dictionary the way the kernel's zram lz4 backend
//! (`drivers/block/zram/backend_lz4.c`) uses it: before every page,
//! `LZ4_loadDict` of the whole dictionary into the stream (liblz4 keeps
//! its last 64 KiB), then `LZ4_compress_fast_continue` with the level as
//! acceleration; decompression by `LZ4_decompress_safe_usingDict`. Through
//! liblz4 as `lz4-sys` builds it (lz4_flex's dictionary mode is another
//! encoder).

#![allow(unsafe_code)]

use std::os::raw::{c_char, c_int};
use std::ptr::NonNull;

use lz4_sys::{LZ4StreamEncode, LZ4_compressBound, LZ4_createStream, LZ4_freeStream};

extern "C" {
    // Exported by the liblz4 that lz4-sys compiles and links (1.10.0).
    fn LZ4_loadDict(stream: *mut LZ4StreamEncode, dict: *const c_char, size: c_int) -> c_int;
    fn LZ4_compress_fast_continue(
        stream: *mut LZ4StreamEncode,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        acceleration: c_int,
    ) -> c_int;
    fn LZ4_decompress_safe_usingDict(
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        dict: *const c_char,
        dict_size: c_int,
    ) -> c_int;
}

/// The largest dictionary the kernel's lz4 backend accepts: `LZ4_loadDict`
/// keeps at most 64 KiB and the backend refuses a file whose size it did
/// not keep whole.
pub const MAX_DICTIONARY: usize = 64 * 1024;

/// One lz4 stream with its dictionary.
pub struct Lz4Dict {
    stream: NonNull<LZ4StreamEncode>,
    dict: Vec<u8>,
    acceleration: i32,
}

// SAFETY: the stream is owned by this value alone and only used through
// `&mut self`; liblz4 streams have no thread affinity.
unsafe impl Send for Lz4Dict {}

impl Lz4Dict {
    /// A stream for `dict` (at most [`MAX_DICTIONARY`] bytes, as the
    /// kernel requires) at `acceleration` (1: the kernel's default).
    pub fn new(dict: &[u8], acceleration: i32) -> Result<Lz4Dict, String> {
        if dict.len() > MAX_DICTIONARY {
            return Err(format!(
                "a {}-byte dictionary: the kernel's lz4 takes at most {MAX_DICTIONARY}",
                dict.len()
            ));
        }
        // SAFETY: LZ4_createStream takes no arguments; NULL is handled.
        let stream = NonNull::new(unsafe { LZ4_createStream() })
            .ok_or("LZ4_createStream failed (out of memory)")?;
        Ok(Lz4Dict {
            stream,
            dict: dict.to_vec(),
            acceleration,
        })
    }

    /// Compresses `page` into `out` (at least `LZ4_compressBound` of the
    /// page's length); returns the bytes written.
    pub fn compress(&mut self, page: &[u8], out: &mut [u8]) -> Result<usize, String> {
        let n = c_int::try_from(page.len()).map_err(|_| "page too large")?;
        // SAFETY: LZ4_compressBound is a pure function of its argument.
        let bound = unsafe { LZ4_compressBound(n) };
        if out.len() < bound as usize {
            return Err(format!(
                "{} bytes of room for lz4's bound of {bound}",
                out.len()
            ));
        }
        // SAFETY: the stream is live (freed only on drop); `dict` outlives
        // the call and its length is given; `MAX_DICTIONARY` fits c_int.
        let loaded = unsafe {
            LZ4_loadDict(
                self.stream.as_ptr(),
                self.dict.as_ptr().cast(),
                self.dict.len() as c_int,
            )
        };
        if loaded != self.dict.len() as c_int {
            return Err(format!(
                "LZ4_loadDict kept {loaded} of {} bytes",
                self.dict.len()
            ));
        }
        // SAFETY: `page` and `out` are valid for the lengths given (`out`
        // is at least the bound long, checked above); the dictionary the
        // stream refers to (`self.dict`) is alive and unmoved during the call.
        let r = unsafe {
            LZ4_compress_fast_continue(
                self.stream.as_ptr(),
                page.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                n,
                bound,
                self.acceleration,
            )
        };
        if r <= 0 {
            return Err(format!("LZ4_compress_fast_continue returned {r}"));
        }
        Ok(r as usize)
    }

    /// Decompresses `data` into `out`; returns the bytes produced.
    pub fn decompress(&self, data: &[u8], out: &mut [u8]) -> Result<usize, String> {
        let n = c_int::try_from(data.len()).map_err(|_| "stream too large")?;
        let cap = c_int::try_from(out.len()).map_err(|_| "output too large")?;
        // SAFETY: `data`, `out` and `dict` are valid for the lengths given;
        // liblz4's safe decoder never writes past `cap`.
        let r = unsafe {
            LZ4_decompress_safe_usingDict(
                data.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                n,
                cap,
                self.dict.as_ptr().cast(),
                self.dict.len() as c_int,
            )
        };
        if r < 0 {
            return Err(format!("LZ4_decompress_safe_usingDict returned {r}"));
        }
        Ok(r as usize)
    }
}

impl Drop for Lz4Dict {
    fn drop(&mut self) {
        // SAFETY: the stream came from LZ4_createStream and is freed once.
        unsafe { LZ4_freeStream(self.stream.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dictionary_shortens_pages_like_it_and_round_trips() {
        let dict: Vec<u8> = (0..8192u32)
            .flat_map(|i| i.wrapping_mul(2_654_435_761).to_le_bytes())
            .collect();
        let dict = &dict[..32 * 1024];
        // A page made of dictionary pieces: without the dictionary it does
        // not compress, with it nearly all of it is matches.
        let page: Vec<u8> = (0..4)
            .flat_map(|i| dict[i * 5000..i * 5000 + 1024].to_vec())
            .collect();
        let mut with = Lz4Dict::new(dict, 1).unwrap();
        let mut room = vec![0u8; 4200];
        let n = with.compress(&page, &mut room).unwrap();
        let out = room[..n].to_vec();
        assert!(out.len() < 100, "{}", out.len());
        // Twice: each page starts from the dictionary alone, not the last page.
        let n = with.compress(&page, &mut room).unwrap();
        assert_eq!(out, room[..n]);
        // Less room than lz4's bound is refused before lz4 runs.
        assert!(with.compress(&page, &mut room[..4096]).is_err());
        let mut back = vec![0u8; 4096];
        assert_eq!(with.decompress(&out, &mut back).unwrap(), 4096);
        assert_eq!(back, page);
        // Without the dictionary the same stream does not decode to the page.
        let mut plain = vec![0u8; 4096];
        let r = lz4::block::decompress_to_buffer(&out, Some(4096), &mut plain);
        assert!(r.is_err() || plain != page);
        assert!(Lz4Dict::new(&vec![0u8; MAX_DICTIONARY + 1], 1).is_err());
    }
}
