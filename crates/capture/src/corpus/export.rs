//! Pages out of a corpus, for tools that read raw pages (`cannery
//! compress`, zram, a C harness): every page of the chosen workloads, or a
//! seeded uniform sample of N pages per workload, in corpus order, as raw
//! 4 KiB pages back to back or as JSON Lines records (workload, index,
//! region, the page in hex). Streams pages: one page in memory at a time,
//! plus the chosen indices. Writes to any `Write`; where the bytes land
//! (atomic file, stdout) is the caller's business.

#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::io::Write;

use serde::Serialize;

use super::layout::{Corpus, Workload};
use crate::error::{Error, ErrorKind, Result};
use crate::sample::SplitMix64;

/// What each exported page becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// The raw 4096 bytes, pages back to back (a `.pages` file).
    Pages,
    /// One JSON object per line: `workload`, `index` (the page's position
    /// in its workload), `region`, `data` (4096 bytes as lowercase hex).
    Records,
}

/// Which pages to export.
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    /// Only this workload (by name); all of them when `None`.
    pub workload: Option<String>,
    /// At most this many pages per workload, chosen uniformly at random
    /// (seeded); every page when `None`.
    pub sample: Option<u64>,
    /// The sampling seed (with the workload's name, so a workload's sample
    /// is the same whether it is exported alone or with others).
    pub seed: u64,
}

/// What one workload gave.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ExportedWorkload {
    /// Its name.
    pub name: String,
    /// Pages it holds.
    pub pages: u64,
    /// Pages exported.
    pub exported: u64,
}

/// What an export wrote.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ExportReport {
    /// Per workload, in corpus order.
    pub workloads: Vec<ExportedWorkload>,
    /// Pages written in all.
    pub pages: u64,
}

#[derive(Serialize)]
struct Record<'a> {
    workload: &'a str,
    index: u64,
    region: &'static str,
    data: String,
}

/// The workloads `opts` names: all, or the one asked for (an error names
/// the ones there are).
fn chosen<'a>(corpus: &'a Corpus, opts: &ExportOptions) -> Result<Vec<&'a Workload>> {
    match &opts.workload {
        None => Ok(corpus.workloads.iter().collect()),
        Some(name) => match corpus.workloads.iter().find(|w| &w.name == name) {
            Some(w) => Ok(vec![w]),
            None => Err(Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "no workload {name:?} in {} (it has: {})",
                    corpus.root.display(),
                    corpus
                        .workloads
                        .iter()
                        .map(|w| w.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        },
    }
}

/// `n` distinct indices below `total`, uniformly (Floyd's algorithm).
fn sample_indices(total: u64, n: u64, rng: &mut SplitMix64) -> BTreeSet<u64> {
    let mut chosen = BTreeSet::new();
    for j in total - n..total {
        let t = rng.below(j + 1);
        if !chosen.insert(t) {
            chosen.insert(j);
        }
    }
    chosen
}

/// Lowercase hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * bytes.len());
    for &b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// A stable 64-bit hash of a name (FNV-1a), to give each workload its own
/// sampling stream.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Writes the chosen pages of `corpus` to `out` as `emit` says; `progress`
/// hears (pages written, of how many) now and then.
pub fn export(
    corpus: &Corpus,
    opts: &ExportOptions,
    emit: Emit,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<ExportReport> {
    let workloads = chosen(corpus, opts)?;
    // First pass: how many pages each workload holds, and which are taken.
    let mut plans = Vec::new();
    for w in &workloads {
        let mut total = 0u64;
        for p in w.pages()? {
            p?;
            total += 1;
        }
        let keep = match opts.sample {
            Some(n) if n < total => {
                let mut rng = SplitMix64::new(opts.seed ^ name_hash(&w.name));
                Some(sample_indices(total, n, &mut rng))
            }
            _ => None,
        };
        plans.push((total, keep));
    }
    let to_write: u64 = plans
        .iter()
        .map(|(t, k)| k.as_ref().map_or(*t, |k| k.len() as u64))
        .sum();
    let io = |e: std::io::Error| Error::new(ErrorKind::Io, format!("writing the export: {e}"));
    let mut report = ExportReport {
        workloads: Vec::new(),
        pages: 0,
    };
    for (w, (total, keep)) in workloads.iter().zip(&plans) {
        let mut exported = 0u64;
        for (index, p) in w.pages()?.enumerate() {
            let p = p?;
            let index = index as u64;
            if keep.as_ref().is_some_and(|k| !k.contains(&index)) {
                continue;
            }
            match emit {
                Emit::Pages => out.write_all(&p.data).map_err(io)?,
                Emit::Records => {
                    let r = Record {
                        workload: &w.name,
                        index,
                        region: p.region.name(),
                        data: hex(&p.data),
                    };
                    serde_json::to_writer(&mut *out, &r)
                        .map_err(|e| io(std::io::Error::other(e)))?;
                    out.write_all(b"\n").map_err(io)?;
                }
            }
            exported += 1;
            report.pages += 1;
            if report.pages % 1024 == 0 || report.pages == to_write {
                progress(report.pages, to_write);
            }
        }
        report.workloads.push(ExportedWorkload {
            name: w.name.clone(),
            pages: *total,
            exported,
        });
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_two_lowercase_digits_per_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn floyd_gives_n_distinct_indices_in_range() {
        let mut rng = SplitMix64::new(7);
        for (total, n) in [(10, 10), (10, 0), (1000, 37), (5, 4)] {
            let s = sample_indices(total, n, &mut rng);
            assert_eq!(s.len() as u64, n);
            assert!(s.iter().all(|&i| i < total));
        }
    }

    #[test]
    fn the_sample_is_roughly_uniform() {
        // 2,000 draws of 10 of 100: each index about 200 times.
        let mut hits = [0u32; 100];
        let mut rng = SplitMix64::new(1);
        for _ in 0..2000 {
            for i in sample_indices(100, 10, &mut rng) {
                hits[i as usize] += 1;
            }
        }
        let (lo, hi) = (hits.iter().min().unwrap(), hits.iter().max().unwrap());
        assert!(*lo > 130 && *hi < 270, "{lo}..{hi}");
    }
}
