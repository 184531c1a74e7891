//! Step 3 of capture: read the contents of resident pages.
//!
//! Runs of pages are read with `process_vm_readv` (one copy, the fastest
//! path), and the process is checked through its pidfd after each read: if it
//! is still alive, its PID cannot have been reused during the read, so the
//! bytes are its own; if it has exited, the bytes are discarded. Where
//! `process_vm_readv` is not allowed, and for retrying a run page by page
//! when part of it fails, `/proc/PID/mem` is used (opened once through the
//! attached process handle, so it is bound to that process). Pages that
//! cannot be read are reported, not fatal. Does not decide which pages to
//! read; see [`crate::pagemap`].

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use crate::sys;
use crate::target::Target;
use crate::PAGE_SIZE;

/// Reads pages of one attached process.
#[derive(Debug)]
pub struct MemReader<'t> {
    file: File,
    target: &'t Target,
    vm_readv: std::cell::Cell<bool>,
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

impl<'t> MemReader<'t> {
    /// A reader for `target`, given its opened `/proc/PID/mem`.
    pub fn new(file: File, target: &'t Target) -> MemReader<'t> {
        MemReader {
            file,
            target,
            vm_readv: std::cell::Cell::new(true),
        }
    }

    /// `process_vm_readv` of the whole run; `None` if not usable.
    fn vm_read(&self, addr: u64, buf: &mut [u8]) -> Option<io::Result<usize>> {
        if !self.vm_readv.get() {
            return None;
        }
        match sys::process_vm_readv(self.target.pid(), addr, buf) {
            Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::ENOSYS)) => {
                // Not allowed here (e.g. seccomp, LSM): use /proc/PID/mem.
                self.vm_readv.set(false);
                None
            }
            r => Some(r),
        }
    }

    /// Read `buf.len() / 4096` pages starting at `addr` into `buf`, filling
    /// `status` with one result per page.
    pub fn read_pages(&self, addr: u64, buf: &mut [u8], status: &mut Vec<PageRead>) {
        let pages = buf.len() / PAGE_SIZE;
        status.clear();
        match self.vm_read(addr, buf) {
            Some(Ok(n)) if n == buf.len() => {
                // Alive after the read: the PID was not reused meanwhile.
                let r = if self.target.is_alive() {
                    PageRead::Ok
                } else {
                    PageRead::Gone
                };
                status.resize(pages, r);
                return;
            }
            Some(Err(e)) if e.raw_os_error() == Some(libc::ESRCH) => {
                status.resize(pages, PageRead::Gone);
                return;
            }
            // Partial read or other failure: the /proc/PID/mem path sorts
            // out page by page which pages are readable.
            _ => {}
        }
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
