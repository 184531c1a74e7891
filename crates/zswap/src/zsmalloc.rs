//! The zsmalloc pool model: x86-64 size classes for 4 KiB pages (32, 48,
//! ..., 4096, each object plus its 8-byte handle), merged as zs_create_pool
//! merges them, and a [`Pool`] that sums class sizes and whole zspages.
//!
//! Only accounting: no object is stored here (the replay keeps the bytes),
//! and frees, partly empty zspages and compaction are not modelled.

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
    /// Most pages in one zspage (CONFIG_ZSMALLOC_CHAIN_SIZE default).
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

    /// zsmalloc's get_pages_per_zspage: the zspage length (1..=8 pages)
    /// that wastes the least, by integer percent used.
    fn pages_per_zspage(size: usize) -> usize {
        let mut best = 1;
        let mut best_used = 0;
        for i in 1..=Self::CHAIN {
            let zspage = i * PAGE_SIZE;
            let used = (zspage - zspage % size) * 100 / zspage;
            if used > best_used {
                best_used = used;
                best = i;
            }
        }
        best
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
