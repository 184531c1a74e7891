//! Cold pages: which of a process's pages were not touched for a while,
//! through the kernel's idle page tracking (`/sys/kernel/mm/page_idle/bitmap`,
//! Documentation/admin-guide/mm/idle_page_tracking.rst). One bit per page
//! frame, read and written in aligned 8-byte words: writing a 1 marks the
//! frame idle (and clears its accessed bits in every page table mapping
//! it); reading returns 1 for frames still idle, after checking those
//! accessed bits. A page accessed in between (by a CPU, read or write)
//! reads back 0: hot.
//!
//! Used by `cannery capture --cold-after DURATION`: mark the target's
//! pages idle, wait, capture only those still idle. The page frame numbers
//! come from the target's page map (root only).
//!
//! Kernels without `CONFIG_IDLE_PAGE_TRACKING` have no bitmap, and then
//! there is no substitute here: `/proc/PID/clear_refs` followed by
//! `/proc/kpageflags` does not work, because kpageflags' REFERENCED bit is
//! the page's `PG_referenced` flag, which a CPU's access does not set
//! (only the page tables' accessed bit, which kpageflags does not show).
//! Measured on Linux 6.18: 1,024 pages read in a loop for 2 s after
//! `clear_refs` all showed REFERENCED clear.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind, Result};

/// Where the kernel exposes the idle bitmap.
pub const PAGE_IDLE_BITMAP: &str = "/sys/kernel/mm/page_idle/bitmap";

/// The method a cold-page capture used, as snapshots record it.
pub const METHOD: &str = "page_idle";

/// The open idle bitmap.
#[derive(Debug)]
pub struct IdleBitmap {
    file: File,
    path: PathBuf,
}

impl IdleBitmap {
    /// Opens the bitmap at `path` for reading and writing; a clear error
    /// when the kernel has none or we may not use it.
    pub fn open(path: &Path) -> Result<IdleBitmap> {
        match OpenOptions::new().read(true).write(true).open(path) {
            Ok(file) => Ok(IdleBitmap {
                file,
                path: path.to_path_buf(),
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "cold-page capture needs the kernel's idle page tracking ({}), which this \
                     kernel lacks (CONFIG_IDLE_PAGE_TRACKING). clear_refs with /proc/kpageflags \
                     cannot stand in: kpageflags' referenced bit is PG_referenced, which CPU \
                     accesses do not set",
                    path.display()
                ),
            )),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Err(Error::new(
                ErrorKind::PermissionDenied,
                format!(
                    "cold-page capture needs root: {} is root's only",
                    path.display()
                ),
            )),
            Err(e) => Err(Error::io(path, "cannot open", e)),
        }
    }

    /// Marks the frames `pfns` idle.
    pub fn mark(&self, pfns: &[u64]) -> Result<()> {
        for (word, bits) in words(pfns) {
            self.file
                .write_at(&bits.to_le_bytes(), word * 8)
                .map_err(|e| Error::io(&self.path, "cannot write", e))?;
        }
        Ok(())
    }

    /// For each frame of `pfns`, whether it is still idle (untouched since
    /// [`IdleBitmap::mark`]).
    pub fn idle(&self, pfns: &[u64]) -> Result<Vec<bool>> {
        let mut read = BTreeMap::new();
        for (word, _) in words(pfns) {
            let mut b = [0u8; 8];
            self.file
                .read_exact_at(&mut b, word * 8)
                .map_err(|e| Error::io(&self.path, "cannot read", e))?;
            read.insert(word, u64::from_le_bytes(b));
        }
        Ok(pfns
            .iter()
            .map(|&p| read.get(&(p / 64)).is_some_and(|w| w >> (p % 64) & 1 == 1))
            .collect())
    }
}

/// The bitmap words covering `pfns`, each with the bits of those frames set.
fn words(pfns: &[u64]) -> BTreeMap<u64, u64> {
    let mut m = BTreeMap::new();
    for &p in pfns {
        *m.entry(p / 64).or_insert(0u64) |= 1 << (p % 64);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_map_to_bits_of_aligned_words() {
        let w = words(&[0, 1, 63, 64, 130]);
        assert_eq!(w.get(&0), Some(&(1 | 2 | 1 << 63)));
        assert_eq!(w.get(&1), Some(&1));
        assert_eq!(w.get(&2), Some(&(1 << 2)));
    }

    #[test]
    fn marks_and_reads_go_to_the_right_words() {
        // A plain file stands in for the bitmap: what is written reads back,
        // as if no page was touched.
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bitmap");
        std::fs::write(&p, vec![0u8; 64]).unwrap();
        let b = IdleBitmap::open(&p).unwrap();
        b.mark(&[3, 64, 200]).unwrap();
        assert_eq!(
            b.idle(&[3, 4, 64, 65, 200]).unwrap(),
            [true, false, true, false, true]
        );
        // A "touched" frame: the kernel clears its bit.
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[8] = 0;
        std::fs::write(&p, bytes).unwrap();
        assert_eq!(b.idle(&[64, 200]).unwrap(), [false, true]);
    }

    #[test]
    fn a_kernel_without_the_bitmap_is_told_why() {
        let e = IdleBitmap::open(Path::new("/nonexistent/page_idle/bitmap")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported);
        assert!(e.to_string().contains("CONFIG_IDLE_PAGE_TRACKING"), "{e}");
        assert!(e.to_string().contains("kpageflags"), "{e}");
    }
}
