//! Step 2 of capture: ask `/proc/PID/pagemap` which pages of a mapping are
//! resident, so that only those are read and nothing is faulted in.
//!
//! A page is taken when it is present in RAM and not a file or shared page
//! (bit 61 clear): that is a private anonymous page, including the
//! copy-on-write pages of private file mappings. Swapped-out pages (bit 62),
//! never-touched pages (no entry) and pages of the file's page cache (bit 61)
//! are not taken. Pages only ever read are mapped to the kernel's shared zero
//! page, which the page map reports as present and anonymous; when the page
//! frame numbers are visible (root / CAP_SYS_ADMIN) the zero page's frame is
//! learnt once ([`zero_page_pfn`]) and such pages are not taken either
//! (otherwise they are read and counted as zero pages). This module reads
//! only the page map, never page contents.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Page is present in RAM.
pub const PM_PRESENT: u64 = 1 << 63;
/// Page is swapped out.
pub const PM_SWAP: u64 = 1 << 62;
/// Page is a file page or shared anonymous page (or the zero page).
pub const PM_FILE: u64 = 1 << 61;
/// Page is exclusively mapped.
pub const PM_EXCLUSIVE: u64 = 1 << 56;

/// Page frame number bits of an entry (0 when hidden from unprivileged readers).
pub const PM_PFN_MASK: u64 = (1 << 55) - 1;

/// True for a resident private anonymous page, the kind zswap compresses.
pub fn is_private_resident(entry: u64) -> bool {
    entry & PM_PRESENT != 0 && entry & PM_FILE == 0
}

/// The page frame number of the kernel's shared zero page, if page frame
/// numbers are visible to this process. Learnt once by reading a fresh
/// anonymous page of our own and looking it up in our page map.
pub fn zero_page_pfn() -> Option<u64> {
    static PFN: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *PFN.get_or_init(|| {
        let size = crate::PAGE_SIZE;
        let map = crate::sys::AnonMapping::new_read_only(size).ok()?;
        // A read fault maps the shared zero page.
        map.touch();
        let entry = File::open("/proc/self/pagemap").ok().and_then(|f| {
            let mut e = [0u64; 1];
            PageMap::new(f)
                .entries(map.addr(), &mut e)
                .ok()
                .map(|_| e[0])
        });
        drop(map);
        let entry = entry?;
        let pfn = entry & PM_PFN_MASK;
        (entry & PM_PRESENT != 0 && pfn != 0).then_some(pfn)
    })
}

/// True for an entry to capture: resident, private, and not the zero page.
pub fn is_capturable(entry: u64, zero_pfn: Option<u64>) -> bool {
    is_private_resident(entry) && zero_pfn != Some(entry & PM_PFN_MASK)
}

/// An open `/proc/PID/pagemap`.
#[derive(Debug)]
pub struct PageMap {
    file: File,
}

impl PageMap {
    /// Wrap an opened pagemap file.
    pub fn new(file: File) -> PageMap {
        PageMap { file }
    }

    /// Fill `out` with the entries of the pages starting at virtual address
    /// `addr` (page aligned). Returns how many entries were read; 0 means the
    /// process has gone.
    pub fn entries(&self, addr: u64, out: &mut [u64]) -> io::Result<usize> {
        let mut bytes = vec![0u8; out.len() * 8];
        let offset = (addr / crate::PAGE_SIZE as u64) * 8;
        let mut got = 0;
        while got < bytes.len() {
            match self.file.read_at(&mut bytes[got..], offset + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        let n = got / 8;
        for (i, e) in out.iter_mut().take(n).enumerate() {
            *e = u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        }
        Ok(n)
    }
}

/// Bits of a swap entry's type in the frame field (`MAX_SWAPFILES_SHIFT`);
/// the offset is in the bits above.
pub const SWAP_TYPE_BITS: u32 = 5;

/// The swap type and offset of an entry that is swapped out (bit 62 set,
/// bit 63 clear); `None` for any other entry. The type and offset are
/// only visible to root (CAP_SYS_ADMIN): unprivileged readers get zeros.
/// Bit 62 also marks migration, hardware-poison and marker entries: check
/// the type against the active swap areas ([`SwapAreas`]).
pub fn swap_entry(entry: u64) -> Option<(u32, u64)> {
    if entry & PM_SWAP == 0 || entry & PM_PRESENT != 0 {
        return None;
    }
    let frame = entry & PM_PFN_MASK;
    Some((
        (frame & ((1 << SWAP_TYPE_BITS) - 1)) as u32,
        frame >> SWAP_TYPE_BITS,
    ))
}

/// The active swap areas by swap type: the kernel numbers them in the
/// order `/proc/swaps` lists them (the lowest free slot on `swapon`), so
/// type `t` is the `t`-th line's area, of that many pages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SwapAreas {
    /// Pages of each area, by type.
    pub pages: Vec<u64>,
}

impl SwapAreas {
    /// Areas of these sizes in bytes, in `/proc/swaps` order.
    pub fn from_sizes(bytes: impl IntoIterator<Item = u64>) -> SwapAreas {
        SwapAreas {
            pages: bytes
                .into_iter()
                .map(|b| b / crate::PAGE_SIZE as u64)
                .collect(),
        }
    }

    /// True when `entry` is a page swapped out to an active swap area: a
    /// swap entry whose type names an area and whose offset lies inside it
    /// (offset 0 is the area's header, never a page).
    pub fn holds(&self, entry: u64) -> bool {
        swap_entry(entry).is_some_and(|(t, off)| {
            self.pages
                .get(t as usize)
                .is_some_and(|&n| off >= 1 && off < n)
        })
    }
}

/// Pages named by process and address.
pub type PageSet = std::collections::HashSet<(u32, u64)>;

/// Runs of the pages from `addr` on that `only` names for `pid`, whose
/// entry is resident or swapped out (not unmapped meanwhile).
pub fn listed_runs(pid: u32, addr: u64, entries: &[u64], only: &PageSet) -> Vec<(usize, usize)> {
    let take = |i: usize| {
        entries[i] & (PM_PRESENT | PM_SWAP) != 0
            && only.contains(&(pid, addr + (i * crate::PAGE_SIZE) as u64))
    };
    let mut runs = Vec::new();
    let mut i = 0;
    while i < entries.len() {
        if take(i) {
            let start = i;
            while i < entries.len() && take(i) {
                i += 1;
            }
            runs.push((start, i - start));
        } else {
            i += 1;
        }
    }
    runs
}

/// Maximal runs `(first index, length)` of consecutive capturable entries.
pub fn resident_runs(entries: &[u64], zero_pfn: Option<u64>) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < entries.len() {
        if is_capturable(entries[i], zero_pfn) {
            let start = i;
            while i < entries.len() && is_capturable(entries[i], zero_pfn) {
                i += 1;
            }
            runs.push((start, i - start));
        } else {
            i += 1;
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs() {
        let p = PM_PRESENT | 5;
        let e = [p, p, 0, PM_SWAP, p, PM_PRESENT | PM_FILE, p, PM_PRESENT | 9];
        assert_eq!(resident_runs(&e, None), vec![(0, 2), (4, 1), (6, 2)]);
        assert_eq!(resident_runs(&e, Some(9)), vec![(0, 2), (4, 1), (6, 1)]);
    }

    /// A swap entry as the kernel's page map writes it:
    /// `type | offset << MAX_SWAPFILES_SHIFT` in bits 0..55, bit 62 set.
    fn swapped(ty: u64, off: u64) -> u64 {
        PM_SWAP | ty | (off << 5)
    }

    #[test]
    fn swap_entries_decode_type_and_offset() {
        assert_eq!(swap_entry(swapped(1, 4758)), Some((1, 4758)));
        assert_eq!(
            swap_entry(swapped(0, (1 << 50) - 1)),
            Some((0, (1 << 50) - 1))
        );
        // Exclusive and soft-dirty flags do not change the entry.
        assert_eq!(
            swap_entry(swapped(2, 7) | PM_EXCLUSIVE | (1 << 55)),
            Some((2, 7))
        );
        assert_eq!(swap_entry(PM_PRESENT | 77), None);
        assert_eq!(swap_entry(0), None);
        // Both bits set is not a valid swap entry.
        assert_eq!(swap_entry(PM_PRESENT | PM_SWAP | 3), None);
        assert!(!is_private_resident(swapped(0, 1)));
    }

    #[test]
    fn only_entries_of_active_swap_areas_are_swapped_pages() {
        // Two areas: 256 MiB and 8 pages.
        let areas = SwapAreas::from_sizes([256 << 20, 8 * 4096]);
        assert!(areas.holds(swapped(0, 1)));
        assert!(areas.holds(swapped(0, 65535)));
        assert!(!areas.holds(swapped(0, 65536)), "past the end of area 0");
        assert!(!areas.holds(swapped(0, 0)), "offset 0 is the header");
        assert!(areas.holds(swapped(1, 7)));
        assert!(!areas.holds(swapped(1, 8)));
        // A migration entry uses a type above every swap area (31, 30, …).
        assert!(!areas.holds(swapped(31, 5)));
        assert!(!areas.holds(swapped(2, 5)));
        // Without root the type and offset read as zero: never a swapped page.
        assert!(!areas.holds(PM_SWAP));
        assert!(!areas.holds(PM_PRESENT | 5));
        assert!(!SwapAreas::default().holds(swapped(0, 1)));
    }

    #[test]
    fn listed_pages_are_taken_resident_or_swapped_and_others_not() {
        let base = 0x10_0000u64;
        let at = |i: u64| base + i * crate::PAGE_SIZE as u64;
        let only: PageSet = [(7, at(0)), (7, at(1)), (7, at(3)), (7, at(4)), (8, at(5))]
            .into_iter()
            .collect();
        let swapped = PM_SWAP | (9 << 5);
        // Page 4 is listed but gone (no entry); page 5 belongs to pid 8;
        // page 2 is resident but not listed.
        let entries = [swapped, PM_PRESENT | 3, PM_PRESENT | 4, swapped, 0, swapped];
        assert_eq!(listed_runs(7, base, &entries, &only), [(0, 2), (3, 1)]);
        assert_eq!(listed_runs(8, base, &entries, &only), [(5, 1)]);
    }
}
