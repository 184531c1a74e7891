//! Pages for the workspace's benchmarks and allocation tests.
//!
//! [`pages`] reads 4 KiB pages from the raw `.pages` file named by the
//! `CANNERY_BENCH_PAGES` environment variable when it is set, and otherwise
//! makes a fixed synthetic mix (deterministic, so runs compare): text-like
//! pages, pointer-like sparse pages, half-filled pages and one random
//! (incompressible) page in eight. The synthetic mix is not a workload
//! corpus; it only keeps every code path busy.

use std::io;

/// Size of a page (the capture crate's, the workspace's one definition).
pub use cannery_capture::PAGE_SIZE;

/// Deterministic pseudo-random bytes (the workspace's xorshift64*).
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
    cannery_codec::rng::XorShift64Star::from_state(seed | 1).bytes(len)
}

/// Synthetic page `i` of the mix.
pub fn synthetic_page(i: u64) -> Vec<u8> {
    let r = noise(i.wrapping_mul(0x9e37_79b9_7f4a_7c15) + 1, PAGE_SIZE);
    match i % 8 {
        0 | 3 | 5 => {
            const WORDS: [&[u8]; 8] = [
                b"struct ",
                b"folio ",
                b"return ",
                b"0x7ffd",
                b"\0\0\0\0",
                b"error ",
                b"page ",
                b"{\"id\":",
            ];
            let mut p = Vec::with_capacity(PAGE_SIZE + 8);
            let mut k = 0;
            while p.len() < PAGE_SIZE {
                p.extend_from_slice(WORDS[(r[k % PAGE_SIZE] & 7) as usize]);
                if r[(k + 1) % PAGE_SIZE] < 24 {
                    p.push(r[(k + 2) % PAGE_SIZE]);
                }
                k += 3;
            }
            p.truncate(PAGE_SIZE);
            p
        }
        1 | 4 => {
            // Pointer-like 8-byte words: a common high part, a varying low part.
            let mut p = vec![0u8; PAGE_SIZE];
            for (w, c) in p.chunks_exact_mut(8).zip(r.chunks_exact(8)) {
                if c[0] < 160 {
                    w.copy_from_slice(&[c[1] & 0xf8, c[2], 0x3c, 0x5a, 0xfd, 0x7f, 0, 0]);
                }
            }
            p
        }
        2 | 6 => {
            let mut p = r;
            p[PAGE_SIZE / 4..].fill(0);
            p
        }
        _ => r,
    }
}

/// `n` pages: from `CANNERY_BENCH_PAGES` if set (cycled if it holds fewer),
/// else synthetic.
pub fn pages(n: usize) -> io::Result<Vec<Vec<u8>>> {
    match std::env::var_os("CANNERY_BENCH_PAGES") {
        Some(path) => {
            let bytes = std::fs::read(&path)?;
            if bytes.is_empty() || bytes.len() % PAGE_SIZE != 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: length {} is not a non-zero multiple of 4096",
                        path.to_string_lossy(),
                        bytes.len()
                    ),
                ));
            }
            let all: Vec<&[u8]> = bytes.chunks_exact(PAGE_SIZE).collect();
            Ok((0..n).map(|i| all[i % all.len()].to_vec()).collect())
        }
        None => Ok((0..n as u64).map(synthetic_page).collect()),
    }
}

/// Up to `per_workload` pages from each workload of a corpus (the shipped
/// `corpora/fleet-snapshots` unless `CANNERY_BENCH_CORPUS` names another),
/// taking every k-th page so the whole capture is represented. Returns
/// (workload name, pages) pairs.
pub fn corpus_pages(per_workload: usize) -> io::Result<Vec<(String, Vec<Vec<u8>>)>> {
    let root = std::env::var("CANNERY_BENCH_CORPUS").unwrap_or_else(|_| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/../corpora/fleet-snapshots").to_string()
    });
    let corpus =
        cannery_capture::Corpus::open(std::path::Path::new(&root)).map_err(io::Error::other)?;
    let mut out = Vec::new();
    for w in &corpus.workloads {
        let all: Vec<Vec<u8>> = w
            .pages()
            .map_err(io::Error::other)?
            .map(|p| p.map(|p| p.data))
            .collect::<Result<_, _>>()
            .map_err(io::Error::other)?;
        let step = (all.len() / per_workload.max(1)).max(1);
        out.push((
            w.name.clone(),
            all.into_iter().step_by(step).take(per_workload).collect(),
        ));
    }
    Ok(out)
}
