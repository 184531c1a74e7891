//! `zram-kernel --compare`: one table per workload, on the same held-out
//! pages, of what each way of compressing memory stores: the kernel's zram
//! (measured), canned deflate with the workload's own table at the fast
//! and default parses and with kernel-2024, and zstd -1 with and without
//! the workload's dictionary (each through zram's accounting in
//! [`super::model`]: same-filled pages free, huge pages whole, zsmalloc),
//! and the kernel's zswap from a saved `zswap-kernel --json` report (its
//! own pages: zswap-kernel measures every page, or `--max-pages`).

use std::fmt::Write as _;

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::{Format, Level, Mode, Table};
use cannery_engines::backend::software::Software;
use cannery_engines::peer::{Peer, PeerKind};
use cannery_lab::tabular::{Align, Grid, Style};
use cannery_lab::units::kib;
use serde::{Deserialize, Serialize};

use super::model::predict;
use super::report::ZramRow;
use super::ZramWorkload;

/// One way of compressing one workload's pages.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CompareRow {
    /// The workload.
    pub workload: String,
    /// `simulated`, `kernel zswap`, `kernel zram` or `software`.
    pub source: String,
    /// The mode (cannery's mode names; zram's compressors, `+dict` with
    /// the workload's dictionary).
    pub mode: String,
    /// Pages stored (same-filled ones included).
    pub pages: u64,
    /// Compressed bytes (a huge page 4096), where known.
    pub data_bytes: Option<u64>,
    /// Memory the pool holds.
    pub memory_bytes: Option<u64>,
}

/// What a workload is compared with besides the kernel: its own table,
/// kernel-2024, and its dictionary.
pub struct CompareInputs<'a> {
    /// The workload.
    pub workload: &'a ZramWorkload,
    /// Its own table (from `--tables`).
    pub table: Option<&'a Table>,
    /// Its dictionary's bytes.
    pub dictionary: Option<&'a [u8]>,
}

/// The rows of a workload not measured in the kernel: canned deflate with
/// its table (fast, default) and kernel-2024, zstd -1 with and without its
/// dictionary, all through zram's accounting.
pub fn simulated_rows(x: &CompareInputs<'_>) -> Result<Vec<CompareRow>, String> {
    let w = x.workload;
    let pages = (w.pages.len() / PAGE_SIZE) as u64 + w.zero_pages;
    let mut rows = Vec::new();
    let mut push = |source: &str, mode: String, p: super::ZramPrediction| {
        rows.push(CompareRow {
            workload: w.name.clone(),
            source: source.into(),
            mode,
            pages,
            data_bytes: Some(p.compr_data_size),
            memory_bytes: Some(p.mem_used_total),
        })
    };
    let canned = |t: &Table, l: Level| {
        Software::bound(Mode::Canned, Format::Iaa, l, Some(t)).map_err(|e| e.to_string())
    };
    if let Some(t) = x.table {
        for (l, name) in [
            (Level::Fast, "canned-fast"),
            (Level::Default, "canned-default"),
        ] {
            push(
                "simulated",
                name.into(),
                predict(&w.pages, w.zero_pages, &mut canned(t, l)?)?,
            );
        }
    }
    let k = Table::builtin("kernel-2024").ok_or("no built-in kernel-2024 table")?;
    push(
        "simulated",
        "canned:kernel-2024".into(),
        predict(&w.pages, w.zero_pages, &mut canned(&k, Level::Fast)?)?,
    );
    let mut kinds = vec![PeerKind::Zstd(1)];
    if x.dictionary.is_some() {
        kinds.push(PeerKind::ZstdDict(1));
    }
    for kind in kinds {
        let peer = Peer::new(kind.clone(), x.dictionary).map_err(|e| e.to_string())?;
        let mut peer = peer.bound();
        push(
            "software",
            kind.to_string(),
            predict(&w.pages, w.zero_pages, &mut peer)?,
        );
    }
    Ok(rows)
}

/// The kernel zram rows of a session.
pub fn zram_rows(rows: &[ZramRow]) -> Vec<CompareRow> {
    rows.iter()
        .map(|r| CompareRow {
            workload: r.workload.clone(),
            source: "kernel zram".into(),
            mode: r.mode(),
            pages: r.pages,
            data_bytes: Some(r.mm_stat.compr_data_size),
            memory_bytes: Some(r.mm_stat.mem_used_total),
        })
        .collect()
}

#[derive(Deserialize)]
struct SavedZswap {
    rows: Vec<SavedRow>,
}

#[derive(Deserialize)]
struct SavedRow {
    compressor: String,
    workload: String,
    measured: SavedMeasurement,
}

#[derive(Deserialize)]
struct SavedMeasurement {
    pages: u64,
    pool_bytes: i64,
}

/// The kernel zswap rows of a saved `zswap-kernel --json` report: its
/// pool growth as memory (no compressed size is counted there).
pub fn zswap_rows(json: &str) -> Result<Vec<CompareRow>, String> {
    let saved: SavedZswap =
        serde_json::from_str(json).map_err(|e| format!("not a zswap-kernel --json report: {e}"))?;
    Ok(saved
        .rows
        .into_iter()
        .map(|r| CompareRow {
            workload: r.workload,
            source: "kernel zswap".into(),
            mode: r.compressor,
            pages: r.measured.pages,
            data_bytes: None,
            memory_bytes: u64::try_from(r.measured.pool_bytes).ok(),
        })
        .collect())
}

/// The kernel zswap rows measured now on the same pages (deflate and lzo,
/// `zswap-kernel` without `--setup`): `Err` says why not (what the machine
/// lacks, or the measurement's error), for the caller to report.
pub fn measure_zswap(
    system: &cannery_machine::System,
    corpus: &str,
    workloads: &[ZramWorkload],
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<CompareRow>, String> {
    use crate::kernel::session::render_needs;
    use crate::kernel::{preflight, run_session, SessionOptions, SessionWorkload};
    let sessions: Vec<SessionWorkload> = workloads
        .iter()
        .map(|w| SessionWorkload {
            name: w.name.clone(),
            pages: w.pages.clone(),
            table: None,
        })
        .collect();
    let largest = workloads.iter().map(|w| w.pages.len() / PAGE_SIZE).max();
    let needs = preflight(system, false, largest.unwrap_or(0));
    if !needs.is_empty() {
        // zram-kernel has no --setup: name the way it does have.
        let text = render_needs(&needs)
            .replace("   (or pass --setup, which undoes it afterwards)", "")
            .replace("   (or pass --setup, which unmounts it afterwards)", "")
            .replace(
                "\n      (or pass --setup, which makes a temporary swap file and removes it afterwards)",
                "",
            );
        return Err(format!(
            "{text}\n  or measure zswap on its own (`cannery zswap-kernel --setup --corpus C \
             --json -o zswap.json`: every page of C, or its --max-pages) and pass \
             --zswap-report zswap.json"
        ));
    }
    let opts = SessionOptions {
        compressors: vec!["deflate".into(), "lzo".into()],
        batch: 32,
        setup: false,
        swap_file: std::path::PathBuf::new(),
        compare_sim: false,
    };
    let report =
        run_session(system, corpus, &sessions, &opts, stop, progress).map_err(|e| e.to_string())?;
    if report.mismatches() > 0 {
        return Err(format!(
            "{} pages came back from zswap different",
            report.mismatches()
        ));
    }
    zswap_rows(&serde_json::to_string(&report).map_err(|e| e.to_string())?)
}

/// Every row of the comparison, workload by workload: the kernel's zram
/// rows of `measured`, the simulated and software rows of `inputs`, and
/// the zswap rows of a saved report.
pub fn compare(
    measured: &[ZramRow],
    inputs: &[CompareInputs<'_>],
    zswap_json: Option<&str>,
) -> Result<Vec<CompareRow>, String> {
    let zram = zram_rows(measured);
    let zswap = zswap_json.map(zswap_rows).transpose()?.unwrap_or_default();
    let mut rows = Vec::new();
    for x in inputs {
        let name = &x.workload.name;
        rows.extend(zram.iter().filter(|r| &r.workload == name).cloned());
        rows.extend(zswap.iter().filter(|r| &r.workload == name).cloned());
        rows.extend(simulated_rows(x)?);
    }
    Ok(rows)
}

/// The comparison as a table (text or markdown), rows grouped by workload
/// in the order given.
pub fn render(rows: &[CompareRow], style: Style) -> String {
    let mut g = Grid::new(&[
        ("workload", Align::Left),
        ("source", Align::Left),
        ("mode", Align::Left),
        ("pages", Align::Right),
        ("data KiB", Align::Right),
        ("memory KiB", Align::Right),
        ("data ratio", Align::Right),
        ("memory ratio", Align::Right),
    ]);
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.workload.as_str()) {
            names.push(&r.workload);
        }
    }
    let ratio = |pages: u64, b: Option<u64>| {
        b.filter(|&b| b > 0).map_or("-".into(), |b| {
            format!("{:.3}", (pages * PAGE_SIZE as u64) as f64 / b as f64)
        })
    };
    for name in names {
        for r in rows.iter().filter(|r| r.workload == name) {
            g.row(vec![
                r.workload.clone(),
                r.source.clone(),
                r.mode.clone(),
                r.pages.to_string(),
                r.data_bytes.map_or("-".into(), |b| kib(b as i64)),
                r.memory_bytes.map_or("-".into(), |b| kib(b as i64)),
                ratio(r.pages, r.data_bytes),
                ratio(r.pages, r.memory_bytes),
            ]);
        }
    }
    let mut s = String::new();
    let _ = write!(s, "{}", g.render(style));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_is_on_the_same_pages_and_zswap_is_read_back() {
        let page: Vec<u8> = (0..PAGE_SIZE).map(|i| (i / 7 % 13) as u8 + b'a').collect();
        let w = ZramWorkload {
            name: "w".into(),
            pages: [page.clone(), page.clone(), vec![0; PAGE_SIZE]].concat(),
            zero_pages: 2,
            dictionary: None,
        };
        let k = Table::builtin("kernel-2024").unwrap();
        let rows = simulated_rows(&CompareInputs {
            workload: &w,
            table: Some(&k),
            dictionary: Some(&page),
        })
        .unwrap();
        let modes: Vec<&str> = rows.iter().map(|r| r.mode.as_str()).collect();
        assert_eq!(
            modes,
            [
                "canned-fast",
                "canned-default",
                "canned:kernel-2024",
                "zstd-1",
                "zstd-1-dict"
            ]
        );
        for r in &rows {
            assert_eq!(r.pages, 5, "{r:?}");
            assert!(r.memory_bytes.unwrap() >= r.data_bytes.unwrap(), "{r:?}");
        }
        // A dictionary holding the very page leaves almost nothing to store.
        assert!(rows[4].data_bytes < rows[3].data_bytes);
        let z = zswap_rows(
            r#"{"rows":[{"compressor":"deflate","workload":"w","measured":{"pages":3,"pool_bytes":8192}}]}"#,
        )
        .unwrap();
        assert_eq!(z[0].memory_bytes, Some(8192));
        assert!(zswap_rows("{}").is_err());
        let all: Vec<CompareRow> = rows.into_iter().chain(z).collect();
        let text = render(&all, Style::Text);
        assert!(
            text.contains("kernel zswap") && text.contains("1.500"),
            "{text}"
        );
    }
}
