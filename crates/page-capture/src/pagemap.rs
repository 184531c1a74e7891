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
}
