//! Folio sizes and cutting a run of pages into folios (zswap stores a large
//! folio as one call, its pages compressed in batches that never cross it).
//!
//! Only the cut: which pages form a folio. Nothing here compresses, and
//! folio sizes are a repeating pattern, not a model of the page allocator.

use std::ops::Range;

/// Folio sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FolioSize {
    /// 4 KiB (one page).
    K4,
    /// 16 KiB.
    K16,
    /// 32 KiB.
    K32,
    /// 64 KiB.
    K64,
    /// Repeating 64k, 4k, 32k, 16k.
    Mixed,
}

impl FolioSize {
    /// Every size, in the order of [`FolioSize::NAMES`].
    pub const ALL: [FolioSize; 5] = [
        FolioSize::K4,
        FolioSize::K16,
        FolioSize::K32,
        FolioSize::K64,
        FolioSize::Mixed,
    ];
    /// Every size's [`FolioSize::name`].
    pub const NAMES: [&'static str; 5] = ["4k", "16k", "32k", "64k", "mixed"];

    /// The size of a [`FolioSize::name`].
    pub fn from_name(name: &str) -> Option<FolioSize> {
        Self::NAMES
            .iter()
            .position(|n| *n == name)
            .map(|i| Self::ALL[i])
    }

    /// The name used in reports and on the command line: `4k`, ..., `mixed`.
    pub fn name(self) -> &'static str {
        match self {
            FolioSize::K4 => "4k",
            FolioSize::K16 => "16k",
            FolioSize::K32 => "32k",
            FolioSize::K64 => "64k",
            FolioSize::Mixed => "mixed",
        }
    }

    /// Pages per folio, cycled.
    pub fn pattern(self) -> &'static [usize] {
        match self {
            FolioSize::K4 => &[1],
            FolioSize::K16 => &[4],
            FolioSize::K32 => &[8],
            FolioSize::K64 => &[16],
            FolioSize::Mixed => &[16, 1, 8, 4],
        }
    }
}

/// Cuts `pages` pages into folios of the pattern's sizes (the last may be short).
pub fn folios(size: FolioSize, pages: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    for &n in size.pattern().iter().cycle() {
        if at >= pages {
            break;
        }
        let end = (at + n).min(pages);
        out.push(at..end);
        at = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_to_its_size() {
        for f in FolioSize::ALL {
            assert_eq!(FolioSize::from_name(f.name()), Some(f));
        }
        assert_eq!(FolioSize::from_name("8k"), None);
    }

    #[test]
    fn folio_patterns() {
        assert_eq!(folios(FolioSize::K16, 9), vec![0..4, 4..8, 8..9]);
        assert_eq!(
            folios(FolioSize::Mixed, 40),
            vec![0..16, 16..17, 17..25, 25..29, 29..40]
        );
        assert_eq!(folios(FolioSize::K4, 2), vec![0..1, 1..2]);
    }
}
