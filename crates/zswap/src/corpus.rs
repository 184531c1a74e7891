//! A corpus read for replay: every page of every workload, in order, back
//! to back in memory (at most a given number), with what the captures
//! counted but did not store: the zero and same-filled pages, raw and in
//! proportion to the pages read (for the effective ratio). Reading is
//! `cannery_capture`'s; this module only gathers.

use std::path::Path;

use cannery_capture::corpus::{open_pages, Corpus};
use cannery_codec::constants::PAGE_SIZE;

/// A corpus in memory, ready for [`crate::run`].
#[derive(Clone, Debug)]
pub struct ReplayCorpus {
    /// All pages of all workloads, in order, back to back.
    pub data: Vec<u8>,
    /// Workload names.
    pub workloads: Vec<String>,
    /// Files read.
    pub files: usize,
    /// Zero and same-filled pages the captures counted but did not store.
    pub omitted_same_filled: u64,
    /// Those pages in proportion to the pages read (each file's
    /// `PageCounts::unstored_same_filled`, scaled to the part of it read).
    pub unstored_same_filled: f64,
}

impl ReplayCorpus {
    /// Reads the corpus at `path` (a name under `corpora/` too), at most
    /// `max_pages` pages of each workload (its first ones); an error if it
    /// holds none.
    pub fn load(path: &Path, max_pages: Option<usize>) -> cannery_capture::Result<ReplayCorpus> {
        let corpus = Corpus::open(path)?;
        let limit = max_pages.unwrap_or(usize::MAX);
        let mut c = ReplayCorpus {
            data: Vec::new(),
            workloads: Vec::new(),
            files: 0,
            omitted_same_filled: 0,
            unstored_same_filled: 0.0,
        };
        for w in &corpus.workloads {
            c.workloads.push(w.name.clone());
            let mut taken = 0usize;
            for f in &w.files {
                if taken >= limit {
                    break;
                }
                let reader = open_pages(f)?;
                let header = reader.header();
                let counts = header.counts;
                // Raw files: the pages in holes of a sparse file (else 0).
                let unstored = counts.unstored_same_filled();
                c.omitted_same_filled += counts.zero + counts.same_filled;
                c.files += 1;
                let mut read = 0u64;
                for page in reader {
                    if taken >= limit {
                        break;
                    }
                    c.data.extend_from_slice(&page?.data);
                    read += 1;
                    taken += 1;
                }
                c.unstored_same_filled += unstored * read as f64 / counts.stored.max(read) as f64;
            }
        }
        if c.data.is_empty() {
            return Err(cannery_capture::Error::new(
                cannery_capture::ErrorKind::InvalidInput,
                format!("the corpus {} has no pages", path.display()),
            ));
        }
        Ok(c)
    }

    /// Pages held.
    pub fn pages(&self) -> usize {
        self.data.len() / PAGE_SIZE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_read_up_to_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.pages");
        std::fs::write(&f, vec![3u8; 3 * PAGE_SIZE]).unwrap();
        let c = ReplayCorpus::load(&f, None).unwrap();
        assert_eq!((c.pages(), c.files, c.unstored_same_filled), (3, 1, 0.0));
        assert_eq!(ReplayCorpus::load(&f, Some(2)).unwrap().pages(), 2);
        let empty = dir.path().join("e.pages");
        std::fs::write(&empty, b"").unwrap();
        assert!(ReplayCorpus::load(&empty, None).is_err());
        // The limit is per workload.
        let root = dir.path().join("two");
        for (w, n) in [("a", 3), ("b", 1)] {
            std::fs::create_dir_all(root.join(w)).unwrap();
            std::fs::write(root.join(w).join("x.pages"), vec![1u8; n * PAGE_SIZE]).unwrap();
        }
        let c = ReplayCorpus::load(&root, Some(2)).unwrap();
        assert_eq!((c.pages(), c.workloads.len()), (3, 2));
    }
}
