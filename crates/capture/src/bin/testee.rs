//! Test helper for the capture tests (not a user tool). Modes:
//!
//! * `hold`: maps memory with known contents, prints
//!   `READY region=HEX dontdump=HEX shared=HEX guard=HEX filemap=HEX`
//!   (filemap: a private file mapping whose page 0 was written, page 1 only
//!   read; see [`map_file_private`]), answers `ping`
//!   lines with `pong`, exits at end of input. Region layout (64 pages):
//!   0..8 distinct patterns ([`pattern`]), 8..12 zero (written), 12..16
//!   same-filled, 16..20 copies of 0..4, 20..24 only read (zero page), 24..64
//!   never touched. Two extra threads block meanwhile.
//! * `sleep-env`: prints its environment as sorted `K=V` lines, fills 16
//!   pages, sleeps until killed.
//! * `half-hot`: maps 256 pages of distinct patterns, prints
//!   `READY region=HEX`, then reads the first 128 pages in a loop until
//!   killed (the last 128 stay untouched: the cold-page test's workload).
//! * `hot-cold COLD_MIB HOT_MIB`: maps a cold set (written once, then
//!   left alone) and a hot set (every page read every 20 ms), each page a
//!   distinct pattern starting with `CNRYCOLD` or `CNRYHOT_` and its index,
//!   prints `READY cold=N hot=M` (pages) and runs until killed: the reclaim
//!   cold-capture test's workload.
//! * `exit`: exits at once.
//! * `try-capture PID`: tries one capture sample of PID and prints `OK` or
//!   `ERR <kind> <message>`.

use cannery_capture::capture::{CaptureOptions, Capturer, PageSink};
use cannery_capture::sample::SplitMix64;
use cannery_capture::{RegionKind, PAGE_SIZE};
use std::io::{BufRead, Write};

/// Content of distinct test page `i`.
fn pattern(i: u64) -> Vec<u8> {
    let mut g = SplitMix64::new(i + 1);
    let mut v = Vec::with_capacity(PAGE_SIZE);
    while v.len() < PAGE_SIZE {
        v.extend_from_slice(&g.next_u64().to_le_bytes());
    }
    v
}

fn map(pages: usize, prot: libc::c_int, flags: libc::c_int) -> *mut u8 {
    // SAFETY: anonymous mapping with no address hint; checked for failure.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            pages * PAGE_SIZE,
            prot,
            flags | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED, "mmap failed");
    p as *mut u8
}

fn page<'a>(base: *mut u8, i: usize) -> &'a mut [u8] {
    // SAFETY: callers pass an index inside a live read-write mapping made by
    // `map` that is never unmapped; the slices do not overlap in use.
    unsafe { std::slice::from_raw_parts_mut(base.add(i * PAGE_SIZE), PAGE_SIZE) }
}

/// A private read-write mapping of a 2-page temporary file: page 0 is
/// written (a copy-on-write anonymous page), page 1 only read (a page-cache
/// page).
fn map_file_private() -> *mut u8 {
    use std::os::fd::AsRawFd;
    let path = std::env::temp_dir().join(format!("cannery-testee-{}.bin", std::process::id()));
    let mut content = pattern(400);
    content.extend(pattern(401));
    std::fs::write(&path, &content).expect("write temp file");
    let file = std::fs::File::open(&path).expect("open temp file");
    let _ = std::fs::remove_file(&path);
    // SAFETY: private mapping of a file we opened, no address hint; checked.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            2 * PAGE_SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE,
            file.as_raw_fd(),
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED, "mmap file failed");
    let p = p as *mut u8;
    page(p, 0)[0] ^= 0xff;
    // SAFETY: reading inside the live mapping.
    std::hint::black_box(unsafe { std::ptr::read_volatile(p.add(PAGE_SIZE)) });
    p
}

fn hold() {
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    let region = map(64, rw, libc::MAP_PRIVATE);
    for i in 0..8 {
        page(region, i).copy_from_slice(&pattern(i as u64));
    }
    for i in 8..12 {
        let p = page(region, i);
        p[0] = 1;
        p[0] = 0;
        // Keep the writes.
        std::hint::black_box(&p[0]);
    }
    for i in 12..16 {
        let word = 0xA5A5_0000_0000_0000u64 + i as u64;
        for w in page(region, i).chunks_exact_mut(8) {
            w.copy_from_slice(&word.to_ne_bytes());
        }
    }
    for i in 16..20 {
        page(region, i).copy_from_slice(&pattern((i - 16) as u64));
    }
    for i in 20..24 {
        // SAFETY: reading inside the mapping maps the shared zero page.
        std::hint::black_box(unsafe { std::ptr::read_volatile(region.add(i * PAGE_SIZE)) });
    }
    let dontdump = map(4, rw, libc::MAP_PRIVATE);
    for i in 0..4 {
        page(dontdump, i).copy_from_slice(&pattern(100 + i as u64));
    }
    // SAFETY: madvise on our own live mapping.
    let r = unsafe {
        libc::madvise(
            dontdump as *mut libc::c_void,
            4 * PAGE_SIZE,
            libc::MADV_DONTDUMP,
        )
    };
    assert_eq!(r, 0, "madvise");
    let shared = map(2, rw, libc::MAP_SHARED);
    for i in 0..2 {
        page(shared, i).copy_from_slice(&pattern(200 + i as u64));
    }
    let guard = map(4, libc::PROT_NONE, libc::MAP_PRIVATE);
    let filemap = map_file_private();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
    let started = std::sync::Arc::new(std::sync::Barrier::new(3));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let rx = rx.clone();
            let started = started.clone();
            std::thread::spawn(move || {
                started.wait();
                let _ = rx.lock().map(|r| r.recv());
            })
        })
        .collect();
    started.wait();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "READY region={:x} dontdump={:x} shared={:x} guard={:x} filemap={:x}",
        region as usize, dontdump as usize, shared as usize, guard as usize, filemap as usize
    )
    .unwrap();
    out.flush().unwrap();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim() == "ping" {
            writeln!(out, "pong").unwrap();
            out.flush().unwrap();
        }
    }
    drop(tx);
    for t in threads {
        let _ = t.join();
    }
}

fn sleep_env() {
    let mut vars: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
    vars.sort();
    let mut out = std::io::stdout().lock();
    for v in vars {
        writeln!(out, "{v}").unwrap();
    }
    out.flush().unwrap();
    let mem = map(16, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE);
    for i in 0..16 {
        page(mem, i).copy_from_slice(&pattern(300 + i as u64));
    }
    loop {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

struct Null;
impl PageSink for Null {
    fn begin_process(&mut self, _: u32, _: u32, _: &str) -> cannery_capture::Result<()> {
        Ok(())
    }
    fn page(&mut self, _: u64, _: RegionKind, _: &[u8]) -> cannery_capture::Result<()> {
        Ok(())
    }
}

fn try_capture(pid: u32) {
    let mut c = Capturer::new(CaptureOptions::default());
    match c.sample(pid, None, &mut Null) {
        Ok(r) => println!("OK {}", r.counts.stored),
        Err(e) => println!("ERR {:?} {e}", e.kind()),
    }
}

fn half_hot() {
    const PAGES: usize = 256;
    let p = map(PAGES, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE);
    for i in 0..PAGES {
        let page = pattern(i as u64);
        // SAFETY: page `i` of the PAGES-page mapping made above.
        unsafe { std::ptr::copy_nonoverlapping(page.as_ptr(), p.add(i * PAGE_SIZE), PAGE_SIZE) };
    }
    println!("READY region={:x}", p as u64);
    std::io::stdout().flush().unwrap();
    let mut sum = 0u64;
    loop {
        for i in 0..PAGES / 2 {
            // SAFETY: a byte of page `i < PAGES` of the mapping.
            sum = sum.wrapping_add(unsafe { std::ptr::read_volatile(p.add(i * PAGE_SIZE)) } as u64);
        }
        std::hint::black_box(sum);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// The first bytes of the cold and hot pages of `hot-cold`.
const COLD_MARK: &[u8; 8] = b"CNRYCOLD";
const HOT_MARK: &[u8; 8] = b"CNRYHOT_";

fn hot_cold(cold_mib: usize, hot_mib: usize) {
    let (cold, hot) = (cold_mib << 8, hot_mib << 8);
    let fill = |n: usize, mark: &[u8; 8], seed: u64| {
        let p = map(n, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE);
        for i in 0..n {
            let mut v = pattern(seed + i as u64);
            v[..8].copy_from_slice(mark);
            v[8..16].copy_from_slice(&(i as u64).to_le_bytes());
            page(p, i).copy_from_slice(&v);
        }
        p
    };
    let _c = fill(cold, COLD_MARK, 1 << 32);
    let h = fill(hot, HOT_MARK, 2 << 32);
    println!("READY cold={cold} hot={hot}");
    std::io::stdout().flush().unwrap();
    let mut sum = 0u64;
    loop {
        for i in 0..hot {
            // SAFETY: a byte of page `i < hot` of the hot mapping.
            sum = sum
                .wrapping_add(unsafe { std::ptr::read_volatile(h.add(i * PAGE_SIZE + 9)) } as u64);
        }
        std::hint::black_box(sum);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("hold") => hold(),
        Some("sleep-env") => sleep_env(),
        Some("exit") => {}
        Some("half-hot") => half_hot(),
        Some("hot-cold") => hot_cold(
            args[2].parse().expect("cold MiB"),
            args[3].parse().expect("hot MiB"),
        ),
        Some("try-capture") => try_capture(args[2].parse().expect("pid")),
        _ => {
            eprintln!("usage: cannery-capture-testee hold|sleep-env|half-hot|hot-cold C H|exit|try-capture PID");
            std::process::exit(2);
        }
    }
}
