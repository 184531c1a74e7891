//! Memory of our own to push through swap: a [`PageRegion`] holds copies of
//! corpus pages in private anonymous memory of this process (4 KiB pages,
//! no transparent huge pages), and can ask the kernel to page a range out
//! (`MADV_PAGEOUT`, which goes through zswap when it is enabled), say which
//! pages are swapped out (our own `/proc/self/pagemap`), and fault pages
//! back in one at a time.
//!
//! This is what `cannery zswap-kernel` measures the real zswap with. It
//! never touches another process's memory, and decides nothing about what
//! to measure: timing and counters are the caller's.

use std::fs::File;
use std::io;

use crate::pagemap::{PageMap, PM_PRESENT, PM_SWAP};
use crate::sys::RwMapping;
use crate::PAGE_SIZE;

/// Where a page of the region is, as our page map says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residence {
    /// In RAM.
    Present,
    /// Swapped out (in zswap, or on the swap device).
    Swapped,
    /// Neither (never touched, or dropped).
    Absent,
}

/// Corpus pages copied into anonymous memory of this process.
#[derive(Debug)]
pub struct PageRegion {
    map: RwMapping,
    pagemap: PageMap,
}

impl PageRegion {
    /// Copies `pages` (whole 4 KiB pages, at least one) into a fresh mapping.
    pub fn new(pages: &[u8]) -> io::Result<PageRegion> {
        if pages.is_empty() || pages.len() % PAGE_SIZE != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a region needs one or more whole 4096-byte pages",
            ));
        }
        let mut map = RwMapping::new(pages.len())?;
        map.as_mut_slice().copy_from_slice(pages);
        let pagemap = PageMap::new(File::open("/proc/self/pagemap")?);
        Ok(PageRegion { map, pagemap })
    }

    /// Pages held.
    pub fn pages(&self) -> usize {
        self.map.as_slice().len() / PAGE_SIZE
    }

    /// The region's bytes (reading a swapped-out page faults it in).
    pub fn bytes(&self) -> &[u8] {
        self.map.as_slice()
    }

    /// `MADV_PAGEOUT` on pages `first..first + count`: the kernel reclaims
    /// them now (to zswap or the swap device; pages it cannot reclaim stay).
    pub fn page_out(&self, first: usize, count: usize) -> io::Result<()> {
        self.map
            .advise(first * PAGE_SIZE, count * PAGE_SIZE, libc::MADV_PAGEOUT)
    }

    /// Reads one byte of page `index`, faulting it in if it is swapped out.
    pub fn touch(&self, index: usize) -> u8 {
        self.map.touch(index * PAGE_SIZE)
    }

    /// Where each page is now.
    pub fn residence(&self) -> io::Result<Vec<Residence>> {
        let mut entries = vec![0u64; self.pages()];
        let n = self.pagemap.entries(self.map.addr(), &mut entries)?;
        if n != entries.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the page map ended inside the region",
            ));
        }
        Ok(entries
            .iter()
            .map(|&e| {
                if e & PM_PRESENT != 0 {
                    Residence::Present
                } else if e & PM_SWAP != 0 {
                    Residence::Swapped
                } else {
                    Residence::Absent
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_copied_and_present() {
        let mut pages = vec![0u8; 3 * PAGE_SIZE];
        for (i, b) in pages.iter_mut().enumerate() {
            *b = (i * 7 % 251) as u8;
        }
        let r = PageRegion::new(&pages).unwrap();
        assert_eq!(r.pages(), 3);
        assert_eq!(r.bytes(), &pages[..]);
        assert_eq!(r.touch(1), pages[PAGE_SIZE]);
        assert!(r
            .residence()
            .unwrap()
            .iter()
            .all(|&p| p == Residence::Present));
    }

    #[test]
    fn partial_pages_and_ranges_outside_are_refused() {
        assert!(PageRegion::new(&[]).is_err());
        assert!(PageRegion::new(&[1u8; 100]).is_err());
        let r = PageRegion::new(&[1u8; PAGE_SIZE]).unwrap();
        assert_eq!(
            r.page_out(1, 1).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }
}
