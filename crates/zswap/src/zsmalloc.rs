//! The zsmalloc pool model: x86-64 size classes for 4 KiB pages (32, 48,
//! ..., 4096, each object plus its 8-byte handle), zspage lengths chosen
//! and classes merged as zs_create_pool does, and a [`Pool`] that sums
//! class sizes and whole zspages.
//!
//! Read from Linux 6.12.117's `mm/zsmalloc.c` (Debian linux-source-6.12;
//! the running kernel here is 6.18 with `CONFIG_ZSMALLOC_CHAIN_SIZE=8`):
//! the class of a request is `get_size_class_index(size + ZS_HANDLE_SIZE)`
//! clamped to the last class (lines 507-521); the zspage length is
//! `calculate_zspage_chain_size` (2099-2119); classes are built from the
//! largest down and a class with the same pages and objects per zspage as
//! the one above it shares that class (`can_merge`, 1129-1137; loop at
//! 2155-2205). `zs_malloc` (1359-1410) takes a free slot of a zspage the
//! class already has, or allocates a whole new zspage and adds all its
//! pages to `pages_allocated` (line 1402), which is what zswap's
//! `pool_total_size` reports (`zswap_total_pages`, mm/zswap.c:487-498).
//! So a pool that only grows holds, per class, ⌈objects / objects per
//! zspage⌉ whole zspages, the last one partly empty.
//!
//! Only accounting: no object is stored here (the replay keeps the bytes),
//! and frees, partly empty zspages left by frees and compaction are not
//! modelled.

use cannery_codec::constants::PAGE_SIZE;

/// zsmalloc's size classes for x86-64 with 4 KiB pages (see the crate doc).
#[derive(Clone, Debug)]
pub struct Zsmalloc {
    /// Size of the (possibly merged) class each class index uses.
    class_size: Vec<usize>,
    /// Pages per zspage and objects per zspage of that class.
    geometry: Vec<(usize, usize)>,
}

impl Zsmalloc {
    /// Smallest class.
    pub const MIN_ALLOC: usize = 32;
    /// Step between classes (PAGE_SIZE >> 8).
    pub const DELTA: usize = 16;
    /// Bytes zs_malloc adds to every object for its handle.
    pub const HANDLE: usize = 8;
    /// Most pages in one zspage (`ZS_MAX_PAGES_PER_ZSPAGE`, line 124:
    /// `CONFIG_ZSMALLOC_CHAIN_SIZE`, 8 by default and on this kernel).
    pub const CHAIN: usize = 8;
    /// Number of class indices: 32, 48, ..., 4096.
    pub const CLASSES: usize = (PAGE_SIZE - Self::MIN_ALLOC) / Self::DELTA + 1;

    /// The class table, built as zs_create_pool builds it.
    pub fn new() -> Zsmalloc {
        let mut class_size = vec![0; Self::CLASSES];
        let mut geometry = vec![(0, 0); Self::CLASSES];
        let mut prev: Option<(usize, usize, usize)> = None; // (size, pages, objs)
        for i in (0..Self::CLASSES).rev() {
            let size = (Self::MIN_ALLOC + i * Self::DELTA).min(PAGE_SIZE);
            let pages = Self::pages_per_zspage(size);
            let objs = pages * PAGE_SIZE / size;
            match prev {
                Some((psize, ppages, pobjs)) if ppages == pages && pobjs == objs => {
                    class_size[i] = psize;
                    geometry[i] = (ppages, pobjs);
                }
                _ => {
                    class_size[i] = size;
                    geometry[i] = (pages, objs);
                    prev = Some((size, pages, objs));
                }
            }
        }
        Zsmalloc {
            class_size,
            geometry,
        }
    }

    /// zsmalloc's `calculate_zspage_chain_size` (Linux 6.3 and later;
    /// 6.12.117 `mm/zsmalloc.c:2099-2119`): a power-of-two class gets one
    /// page; any other the zspage length, 1..=[`Self::CHAIN`] pages, with
    /// the fewest bytes left over at its end, the shortest on a tie. Before
    /// 6.3, `get_pages_per_zspage` chose by integer percent used, up to 4
    /// pages: class 144 then took 3 pages (85 objects, 48 bytes left over),
    /// now 7 (199 objects, 16 bytes).
    pub fn pages_per_zspage(size: usize) -> usize {
        if size.is_power_of_two() {
            return 1;
        }
        (1..=Self::CHAIN)
            .min_by_key(|&i| (i * PAGE_SIZE % size, i))
            .expect("CHAIN ≥ 1")
    }

    /// Class index of an object of `len` bytes (a compressed page, or 4096 raw).
    pub fn index(&self, len: usize) -> usize {
        let size = len + Self::HANDLE;
        let idx = if size > Self::MIN_ALLOC {
            (size - Self::MIN_ALLOC).div_ceil(Self::DELTA)
        } else {
            0
        };
        idx.min(Self::CLASSES - 1)
    }

    /// Bytes an object of `len` bytes occupies in the pool.
    pub fn class_size(&self, len: usize) -> usize {
        self.class_size[self.index(len)]
    }

    /// (pages per zspage, objects per zspage) of the class for `len`.
    pub fn geometry(&self, len: usize) -> (usize, usize) {
        self.geometry[self.index(len)]
    }
}

impl Default for Zsmalloc {
    fn default() -> Self {
        Zsmalloc::new()
    }
}

/// Objects stored per class, and the sums the report needs.
#[derive(Clone, Debug)]
pub struct Pool {
    model: Zsmalloc,
    /// Objects per class index (merged classes count under their own index).
    objects: Vec<usize>,
    /// Sum of the class sizes of the objects.
    pub bytes: usize,
    /// Sum of the objects' own lengths.
    pub payload: usize,
}

impl Pool {
    /// An empty pool.
    pub fn new() -> Pool {
        Pool {
            model: Zsmalloc::new(),
            objects: vec![0; Zsmalloc::CLASSES],
            bytes: 0,
            payload: 0,
        }
    }

    /// Accounts an object of `len` bytes.
    pub fn add(&mut self, len: usize) {
        let class = self.model.class_size(len);
        // Count under the index of the class actually used, so merged
        // classes share zspages.
        self.objects[self.model.index(class - Zsmalloc::HANDLE)] += 1;
        self.bytes += class;
        self.payload += len;
    }

    /// Memory of a perfectly compacted pool: whole zspages per class.
    pub fn zspage_bytes(&self) -> usize {
        self.objects
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| {
                let (pages, objs) = self.model.geometry[i];
                n.div_ceil(objs) * pages * PAGE_SIZE
            })
            .sum()
    }
}

impl Default for Pool {
    fn default() -> Self {
        Pool::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zsmalloc_classes() {
        let z = Zsmalloc::new();
        assert_eq!(Zsmalloc::CLASSES, 255);
        // len + 8 rounded up to 32 + 16k.
        assert_eq!(z.class_size(1), 32);
        assert_eq!(z.class_size(24), 32);
        assert_eq!(z.class_size(25), 48);
        assert_eq!(z.class_size(40), 48);
        assert_eq!(z.class_size(41), 64);
        assert_eq!(z.class_size(100), 112);
        // 112: 7 pages hold 256 objects exactly; 128: 1 page holds 32.
        assert_eq!(z.geometry(100), (7, 256));
        assert_eq!(z.geometry(120), (1, 32));
        // Raw pages and anything above 4088 bytes: the 4096 class.
        assert_eq!(z.class_size(4088), 4096);
        assert_eq!(z.class_size(PAGE_SIZE), 4096);
        // 4016 would waste 80 bytes per page in every zspage length, so it
        // holds one object per page like 4096, and is merged into it.
        assert_eq!(z.class_size(4000), 4096);
    }

    /// Zspage lengths worked out by hand from `calculate_zspage_chain_size`
    /// (module doc): the bytes left at the end of i pages are i·4096 mod size.
    #[test]
    fn zspage_lengths_follow_calculate_zspage_chain_size() {
        // Powers of two: one page, whatever a longer chain would waste.
        for size in [32, 64, 128, 256, 512, 1024, 2048, 4096] {
            assert_eq!(Zsmalloc::pages_per_zspage(size), 1, "{size}");
        }
        // 144: 1..=8 pages leave 64, 128, 48, 112, 32, 96, 16, 80 bytes.
        // (Before 6.3, by percent used, 3 pages.)
        assert_eq!(Zsmalloc::pages_per_zspage(144), 7);
        // 208: 144, 80, 16, 160, 96, 32, 176, 112.
        assert_eq!(Zsmalloc::pages_per_zspage(208), 3);
        // 352: 224, 96, 320, 192, 64, 288, 160, 32 (by percent: 5 pages).
        assert_eq!(Zsmalloc::pages_per_zspage(352), 8);
        // 112: 7 pages hold 256 objects with nothing left.
        assert_eq!(Zsmalloc::pages_per_zspage(112), 7);
        // 3632: 464, 928, ..., 3248 (464 more per page), then 80 at 8
        // pages, which hold 9 objects.
        assert_eq!(Zsmalloc::pages_per_zspage(3632), 8);
        let z = Zsmalloc::new();
        assert_eq!(z.geometry(144 - 8), (7, 199));
        assert_eq!(z.geometry(208 - 8), (3, 59));
        assert_eq!(z.geometry(352 - 8), (8, 93));
        // The largest class that is not huge (one object per one-page
        // zspage) is 3632: zs_huge_class_size() = 3632 - 7 = 3625.
        assert_eq!(z.class_size(3632 - 8), 3632);
        assert_eq!(z.geometry(3632 - 8), (8, 9));
        assert_eq!(z.class_size(3632 - 7), 4096);
        // After merging, 119 distinct classes remain (123 with the old
        // percent rule).
        let mut distinct = z.class_size.clone();
        distinct.dedup();
        assert_eq!(distinct.len(), 119);
    }

    #[test]
    fn merged_classes_are_never_smaller_than_the_request() {
        let z = Zsmalloc::new();
        for len in 1..=PAGE_SIZE {
            let c = z.class_size(len);
            assert!(c >= (len + Zsmalloc::HANDLE).min(PAGE_SIZE), "len {len}");
            assert!(c <= PAGE_SIZE && c % 16 == 0, "len {len}");
            assert!(
                c >= z.class_size(len.saturating_sub(1).max(1)),
                "monotone at {len}"
            );
        }
    }

    #[test]
    fn zspage_bytes_rounds_up_to_whole_zspages() {
        let mut p = Pool::new();
        p.add(100); // class 112: 7 pages per zspage
        p.add(100);
        p.add(PAGE_SIZE);
        assert_eq!(p.bytes, 112 * 2 + 4096);
        assert_eq!(p.zspage_bytes(), 7 * PAGE_SIZE + PAGE_SIZE);
    }
}
