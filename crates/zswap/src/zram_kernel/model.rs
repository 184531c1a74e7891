//! A model of zram's accounting, apart from zswap's: what `mm_stat` will
//! say for a set of pages written to a fresh device. Same-filled pages are
//! a count (no memory); a page whose compressed length reaches zram's huge
//! size (`zs_huge_class_size`: the largest zsmalloc class that is not one
//! object per one-page zspage, less 7 bytes of handle) is stored whole,
//! 4096 bytes; every other page is one zsmalloc object of its compressed
//! length. `compr_data_size` sums the lengths (4096 for a huge page),
//! `mem_used_total` the whole zspages of a fresh, never-freed pool, from
//! the zswap model's [`crate::zsmalloc`] (classes, handle, merging, chain).

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::Outcome;
use cannery_engines::batch::Bound;
use cannery_engines::peer::PeerKind;
use cannery_engines::Engine;
use serde::Serialize;

use crate::zsmalloc::{Pool, Zsmalloc};

/// zram's huge size: a compressed page of this many bytes or more is
/// stored uncompressed (zram_write_page's `comp_len >= huge_class_size`).
pub fn huge_class_size(z: &Zsmalloc) -> usize {
    // As zs_create_pool: from the largest class down, the first that is
    // not one object in a one-page zspage, less (ZS_HANDLE_SIZE - 1).
    let mut size = PAGE_SIZE;
    while size >= Zsmalloc::MIN_ALLOC + Zsmalloc::HANDLE {
        let (pages, objs) = z.geometry(size - Zsmalloc::HANDLE);
        if pages != 1 && objs != 1 {
            return size - (Zsmalloc::HANDLE - 1);
        }
        size -= Zsmalloc::DELTA;
    }
    PAGE_SIZE
}

/// What the model predicts `mm_stat` will say.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ZramPrediction {
    /// Predicted `compr_data_size`.
    pub compr_data_size: u64,
    /// Predicted `mem_used_total`.
    pub mem_used_total: u64,
    /// Predicted `same_pages`.
    pub same_pages: u64,
    /// Predicted `huge_pages`.
    pub huge_pages: u64,
}

/// The compressor that models zram's `compressor` (with a dictionary or
/// not), where cannery has one: `lz4` (liblz4, as `LZ4_compress_fast` at
/// acceleration 1), `lz4` with a dictionary (`lz4-dict`, the backend's
/// calls), `lzo` (`kernel-lzo`, with the `lzo` feature).
pub fn model_of(compressor: &str, dictionary: bool) -> Option<PeerKind> {
    match (compressor, dictionary) {
        ("lz4", false) => Some(PeerKind::Lz4),
        ("lz4", true) => Some(PeerKind::Lz4Dict),
        ("lzo", false) => Some(PeerKind::KernelLzo),
        _ => None,
    }
}

/// Predicts `mm_stat` for `pages` (back to back) and `zero_pages` more
/// zero pages written to a fresh device compressing with `peer` (any page
/// compressor: a kernel compressor's model, or one zram does not have,
/// such as canned deflate, to compare on the same accounting).
pub fn predict<E: Engine>(
    pages: &[u8],
    zero_pages: u64,
    peer: &mut Bound<E>,
) -> Result<ZramPrediction, String> {
    let z = Zsmalloc::new();
    let huge = huge_class_size(&z);
    let mut pool = Pool::new();
    let mut p = ZramPrediction {
        same_pages: zero_pages,
        ..ZramPrediction::default()
    };
    let mut out = Vec::with_capacity(2 * PAGE_SIZE);
    for page in pages.chunks_exact(PAGE_SIZE) {
        if cannery_capture::same_filled(page).is_some() {
            p.same_pages += 1;
            continue;
        }
        let len = match peer
            .compress_page(page, &mut out)
            .map_err(|e| e.to_string())?
        {
            Outcome::Compressed(n) if n < huge => n,
            _ => {
                p.huge_pages += 1;
                PAGE_SIZE
            }
        };
        pool.add(len);
        p.compr_data_size += len as u64;
    }
    p.mem_used_total = pool.zspage_bytes() as u64;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_engines::peer::Peer;

    #[test]
    fn the_huge_size_is_zsmallocs() {
        let z = Zsmalloc::new();
        let h = huge_class_size(&z);
        // The largest class that is not one object per one-page zspage,
        // less 7 (the kernel's zs_huge_class_size); the next is huge.
        let (pages, objs) = z.geometry(h + 7 - Zsmalloc::HANDLE);
        assert!(pages != 1 && objs != 1, "{h}");
        let (pages, objs) = z.geometry(h + 7 + Zsmalloc::DELTA - Zsmalloc::HANDLE);
        assert!(pages == 1 || objs == 1, "{h}");
        assert!((3000..4096).contains(&h), "{h}");
    }

    #[test]
    fn same_filled_pages_are_counted_and_huge_ones_stored_whole() {
        let mut x = cannery_codec::rng::XorShift64::new(0x9E37_79B9_7F4A_7C15);
        let random: Vec<u8> = (0..PAGE_SIZE).map(|_| x.next_u64() as u8).collect();
        let mut text = vec![b'a'; PAGE_SIZE];
        text[100] = b'b';
        let pages = [
            vec![0u8; PAGE_SIZE],
            vec![9u8; PAGE_SIZE],
            random,
            text.clone(),
        ]
        .concat();
        let mut lz4 = Peer::new(PeerKind::Lz4, None).unwrap().bound();
        let p = predict(&pages, 3, &mut lz4).unwrap();
        assert_eq!(p.same_pages, 5);
        assert_eq!(p.huge_pages, 1);
        let small = lz4
            .engine
            .compress(&text, &mut Vec::new())
            .unwrap()
            .unwrap() as u64;
        assert_eq!(p.compr_data_size, 4096 + small);
        // One 4096-byte zspage for the huge page, one zspage of the small
        // object's class.
        let z = Zsmalloc::new();
        let (pages_small, _) = z.geometry(small as usize);
        assert_eq!(p.mem_used_total, 4096 * (1 + pages_small as u64));
    }
}
