//! Step 4 of capture: decide which read pages are worth storing.
//!
//! zswap stores zero-filled and same-value-filled pages without compressing
//! them (it checks the page as machine words, as [`same_filled`] does), so
//! such pages are counted, not stored. With deduplication on, a page whose
//! content (SHA-256) was already seen in this capture is counted as a
//! duplicate. Does not sample ([`crate::sample`]) and does not look for
//! secrets: that check runs only on pages chosen for storing
//! ([`crate::capture`]), as it is the slowest step.

#![forbid(unsafe_code)]

use sha2::{Digest, Sha256};
use std::collections::HashSet;

/// If every 64-bit word of `page` is the same, that word (0 for a zero
/// page); otherwise `None`. Pages whose length is not a multiple of 8 bytes
/// (and empty ones) are never same-filled.
///
/// This is zswap's test (`mm/zswap.c`): the page is compared as machine
/// words (`unsigned long`, 8 bytes on the 64-bit machines that have IAA)
/// and the word is kept in native byte order, as zswap stores it. The one
/// definition of the workspace: the trainer re-exports it
/// (`cannery_trainer::pages::same_filled`) and the CLI's zswap simulation
/// uses it.
pub fn same_filled(page: &[u8]) -> Option<u64> {
    if page.is_empty() || page.len() % 8 != 0 {
        return None;
    }
    let first = u64::from_ne_bytes(page[..8].try_into().ok()?);
    page.chunks_exact(8)
        .all(|w| u64::from_ne_bytes(w.try_into().expect("8-byte chunk")) == first)
        .then_some(first)
}

/// What the filter decided for one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// All zero bytes.
    Zero,
    /// One repeated non-zero 64-bit value.
    SameFilled(u64),
    /// Same content as an earlier page (only when dedup is on).
    Duplicate,
    /// A candidate for storing.
    Keep,
}

/// The page filter; keeps the dedup set.
#[derive(Debug, Default)]
pub struct Filter {
    dedup: Option<HashSet<[u8; 16]>>,
}

impl Filter {
    /// A filter; `dedup` turns on content deduplication.
    pub fn new(dedup: bool) -> Filter {
        Filter {
            dedup: dedup.then(HashSet::new),
        }
    }

    /// Classify one 4 KiB page.
    pub fn check(&mut self, page: &[u8]) -> Verdict {
        match same_filled(page) {
            Some(0) => return Verdict::Zero,
            Some(v) => return Verdict::SameFilled(v),
            None => {}
        }
        if let Some(seen) = &mut self.dedup {
            let digest = Sha256::digest(page);
            let mut key = [0u8; 16];
            key.copy_from_slice(&digest[..16]);
            if !seen.insert(key) {
                return Verdict::Duplicate;
            }
        }
        Verdict::Keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_filled_pages() {
        assert_eq!(same_filled(&[0u8; 4096]), Some(0));
        let mut p = [0u8; 4096];
        for w in p.chunks_exact_mut(8) {
            w.copy_from_slice(&0x1234_5678_9abc_def0u64.to_ne_bytes());
        }
        assert_eq!(same_filled(&p), Some(0x1234_5678_9abc_def0));
        p[4095] ^= 1;
        assert_eq!(same_filled(&p), None);
        assert_eq!(same_filled(&[0xAB; 4096]), Some(0xABAB_ABAB_ABAB_ABAB));
        // Native byte order, as zswap keeps the word.
        let words = 0x1122_3344_5566_7788u64.to_ne_bytes().repeat(512);
        assert_eq!(same_filled(&words), Some(0x1122_3344_5566_7788));
        // Not whole words: never same-filled, even if every byte agrees.
        assert_eq!(same_filled(&[0u8; 7]), None);
        assert_eq!(same_filled(&[0xAB; 4095]), None);
        assert_eq!(same_filled(&[]), None);
    }

    #[test]
    fn dedup_counts_second_copy() {
        let mut f = Filter::new(true);
        let mut p = vec![0u8; 4096];
        p[10] = 1;
        assert_eq!(f.check(&p), Verdict::Keep);
        assert_eq!(f.check(&p), Verdict::Duplicate);
        let mut f = Filter::new(false);
        assert_eq!(f.check(&p), Verdict::Keep);
        assert_eq!(f.check(&p), Verdict::Keep);
    }
}
