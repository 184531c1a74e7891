//! Step 3 of capture: read the contents of resident pages through
//! `/proc/PID/mem` (opened once, through the attached process handle, so a
//! reused PID is never read). Ranges that cannot be read are retried page by
//! page and the failures reported, not fatal. Does not decide which pages to
//! read; see [`crate::pagemap`].

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use crate::PAGE_SIZE;

/// An open `/proc/PID/mem`.
#[derive(Debug)]
pub struct MemReader {
    file: File,
}

/// The result of reading one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageRead {
    /// The page was read into the buffer.
    Ok,
    /// The page could not be read (unmapped meanwhile, I/O error).
    Unreadable,
    /// The process has exited; nothing more can be read.
    Gone,
}

impl MemReader {
    /// Wrap an opened mem file.
    pub fn new(file: File) -> MemReader {
        MemReader { file }
    }

    /// Read `buf.len() / 4096` pages starting at `addr` into `buf`, filling
    /// `status` with one result per page.
    pub fn read_pages(&self, addr: u64, buf: &mut [u8], status: &mut Vec<PageRead>) {
        let pages = buf.len() / PAGE_SIZE;
        status.clear();
        match read_full(&self.file, buf, addr) {
            Ok(n) if n == buf.len() => {
                status.resize(pages, PageRead::Ok);
                return;
            }
            Ok(0) => {
                status.resize(pages, PageRead::Gone);
                return;
            }
            _ => {}
        }
        // Some page failed: go page by page.
        for i in 0..pages {
            let page = &mut buf[i * PAGE_SIZE..(i + 1) * PAGE_SIZE];
            let r = match read_full(&self.file, page, addr + (i * PAGE_SIZE) as u64) {
                Ok(n) if n == PAGE_SIZE => PageRead::Ok,
                Ok(0) => PageRead::Gone,
                Ok(_) => PageRead::Unreadable,
                Err(e) if e.raw_os_error() == Some(libc::ESRCH) => PageRead::Gone,
                Err(_) => PageRead::Unreadable,
            };
            status.push(r);
            if r == PageRead::Gone {
                status.resize(pages, PageRead::Gone);
                return;
            }
        }
    }
}

fn read_full(file: &File, buf: &mut [u8], addr: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], addr + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if got > 0 => {
                let _ = e;
                break;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
