//! Streams of raw pages from any input: [`page_stream`] gives the pages of
//! one input, whatever it is: a snapshot (through [`crate::corpus`]), or
//! raw pages from a file, a pipe or standard input (`-`), never more than
//! one page in memory; a partial last page is an error that says how long
//! it is. Files are opened through [`cannery_files::input::open_input`], so
//! a command never replaces what it reads.

#![forbid(unsafe_code)]

use crate::error::{Error, ErrorKind, Result};
use cannery_files::input::open_input;
use std::io::Read;
use std::path::Path;

/// Raw 4096-byte pages read from any reader until its end.
#[derive(Debug)]
pub struct RawPages<R> {
    inner: R,
    name: String,
    index: u64,
    done: bool,
}

impl<R: Read> RawPages<R> {
    /// Pages of `inner`; `name` says where they come from in errors.
    pub fn new(inner: R, name: impl Into<String>) -> RawPages<R> {
        RawPages {
            inner,
            name: name.into(),
            index: 0,
            done: false,
        }
    }
}

impl<R: Read> Iterator for RawPages<R> {
    type Item = Result<Vec<u8>>;

    fn next(&mut self) -> Option<Result<Vec<u8>>> {
        if self.done {
            return None;
        }
        let mut page = vec![0u8; crate::PAGE_SIZE];
        let mut got = 0;
        while got < page.len() {
            match self.inner.read(&mut page[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.done = true;
                    return Some(Err(Error::io(Path::new(&self.name), "cannot read", e)));
                }
            }
        }
        if got == 0 {
            self.done = true;
            return None;
        }
        if got < page.len() {
            self.done = true;
            return Some(Err(Error::new(
                ErrorKind::Truncated,
                format!(
                    "{}: page {} has {got} bytes; input must be whole 4096-byte pages",
                    self.name, self.index
                ),
            )));
        }
        self.index += 1;
        Some(Ok(page))
    }
}

/// A stream of pages.
pub type PageStream = Box<dyn Iterator<Item = Result<Vec<u8>>>>;

/// The pages of `path`: `-` is standard input (raw pages), a snapshot is
/// decoded, anything else (a `.pages` file, a FIFO, `/dev/stdin`) is read as
/// raw pages to its end.
pub fn page_stream(path: &Path) -> Result<PageStream> {
    if path == Path::new("-") {
        return Ok(Box::new(RawPages::new(
            std::io::stdin().lock(),
            "standard input",
        )));
    }
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "cannot open", e))?;
    if meta.is_file() && crate::snapshot::is_snapshot(path) {
        let reader = crate::corpus::open_pages(path)?;
        return Ok(Box::new(reader.map(|p| p.map(|p| p.data))));
    }
    let file = open_input(path, "cannot open")?;
    Ok(Box::new(RawPages::new(
        std::io::BufReader::new(file),
        path.display().to_string(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_pages_come_from_any_reader_and_a_partial_page_is_an_error() {
        let mut data = vec![1u8; 2 * crate::PAGE_SIZE];
        let pages: Vec<_> = RawPages::new(&data[..], "mem").collect();
        assert_eq!(pages.len(), 2);
        assert!(pages
            .iter()
            .all(|p| p.as_ref().unwrap().len() == crate::PAGE_SIZE));
        data.extend([0u8; 100]);
        let mut it = RawPages::new(&data[..], "mem");
        assert!(it.next().unwrap().is_ok() && it.next().unwrap().is_ok());
        let e = it.next().unwrap().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Truncated);
        assert!(e.to_string().contains("page 2 has 100 bytes"), "{e}");
        assert!(it.next().is_none());
    }
}
