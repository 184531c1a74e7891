//! Step 2 of capture: ask `/proc/PID/pagemap` which pages of a mapping are
//! resident, so that only those are read and nothing is faulted in.
//!
//! A page is taken when it is present in RAM and not a file or shared page
//! (bit 61 clear): that is a private anonymous page, including the
//! copy-on-write pages of private file mappings. Swapped-out pages (bit 62),
//! never-touched pages (no entry) and pages still mapped to the shared zero
//! page or to the file's page cache (bit 61) are not taken. This module reads
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

/// True for a resident private anonymous page, the kind zswap compresses.
pub fn is_private_resident(entry: u64) -> bool {
    entry & PM_PRESENT != 0 && entry & PM_FILE == 0
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

/// Maximal runs `(first index, length)` of consecutive taken entries.
pub fn resident_runs(entries: &[u64]) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < entries.len() {
        if is_private_resident(entries[i]) {
            let start = i;
            while i < entries.len() && is_private_resident(entries[i]) {
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
        let e = [p, p, 0, PM_SWAP, p, PM_PRESENT | PM_FILE, p];
        assert_eq!(resident_runs(&e), vec![(0, 2), (4, 1), (6, 1)]);
    }
}
