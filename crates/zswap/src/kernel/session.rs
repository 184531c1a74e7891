//! A `zswap-kernel` session: check what is needed ([`preflight`]), set the
//! machine up when asked (`--setup`: zswap enabled, `vm.page-cluster` 0 so
//! each fault swaps in one page, a temporary swap file when the free swap
//! is short), then for each compressor (set through the guard) and each
//! workload, one [`measure`](fn@super::measure) and, on request, the simulator's [`predict`].
//! Every change goes through one [`Restore`] guard and is undone before the
//! report is returned, whether the session finished, failed or was
//! interrupted.

use std::path::PathBuf;

use cannery_codec::constants::PAGE_SIZE;

use super::measure::{self, measure, predict, SameFilledRule};
use super::report::{KernelReport, KernelRow};
use super::KernelError;
use cannery_machine::setup;
use cannery_machine::{Restore, System, PAGE_CLUSTER, PARAMETERS};

/// Spare swap beyond the largest workload.
const SWAP_MARGIN: u64 = 64 << 20;

pub use cannery_machine::setup::Need;

/// The needs as lines: what, then the fix indented.
pub fn render_needs(needs: &[Need]) -> String {
    cannery_machine::setup::render_needs("cannot measure the kernel's zswap here:", needs)
}

/// The settings of a session.
#[derive(Clone, Debug)]
pub struct SessionOptions {
    /// Kernel compressor names, measured in this order.
    pub compressors: Vec<String>,
    /// Pages per `MADV_PAGEOUT` call.
    pub batch: usize,
    /// Make the setup (and undo it): enable zswap, page-cluster 0, a swap
    /// file when the free swap is short.
    pub setup: bool,
    /// Where `setup` may create its swap file (must not exist).
    pub swap_file: PathBuf,
    /// Predict each measurement with the simulator.
    pub compare_sim: bool,
}

/// One workload of a session.
#[derive(Clone, Debug)]
pub struct SessionWorkload {
    /// Its name.
    pub name: String,
    /// Its pages, back to back.
    pub pages: Vec<u8>,
    /// A canned table for it: the simulator then also predicts what IAA's
    /// canned mode (cannery's `fast` parse, IAA stream format) would store.
    pub table: Option<cannery_codec::Table>,
}

/// The swap space a session needs: the largest workload plus a margin.
pub fn swap_needed(largest_workload_pages: usize) -> u64 {
    (largest_workload_pages * PAGE_SIZE) as u64 + SWAP_MARGIN
}

/// What is missing to measure workloads of at most `largest` pages; empty
/// when the session can run. With `setup`, zswap being off and swap being
/// short are not missing (the session provides them).
pub fn preflight(system: &System, setup: bool, largest: usize) -> Vec<Need> {
    let mut needs = Vec::new();
    needs.extend(setup::root_need(
        system,
        "zswap's settings, its debugfs counters and MADV_PAGEOUT accounting need it",
        "cannery zswap-kernel …",
    ));
    if !system.has_zswap() {
        needs.push(Need {
            what: format!("zswap: this kernel has none (no /{PARAMETERS})"),
            fix: "boot a kernel built with CONFIG_ZSWAP=y".into(),
        });
        return needs;
    }
    if !setup && !system.debugfs_mounted() {
        needs.push(Need {
            what: "debugfs, where zswap's counters are".into(),
            fix: "mount -t debugfs none /sys/kernel/debug   (or pass --setup, which unmounts it afterwards)".into(),
        });
    }
    let enabled = system.zswap_enabled().unwrap_or(false);
    if !setup && !enabled {
        needs.push(Need {
            what: "zswap is disabled".into(),
            fix: format!(
                "echo Y > /{PARAMETERS}/enabled   (or pass --setup, which undoes it afterwards)"
            ),
        });
    }
    if !setup {
        needs.extend(setup::swap_need(
            system,
            swap_needed(largest),
            "zswap only sees pages on their way to swap",
        ));
    }
    if let (Ok(total), Ok(pct)) = (system.mem_total(), system.parameter("max_pool_percent")) {
        if let Ok(pct) = pct.parse::<u64>() {
            let limit = total / 100 * pct;
            if (largest * PAGE_SIZE) as u64 > limit {
                needs.push(Need {
                    what: format!(
                        "room in the pool: max_pool_percent={pct} allows {} MiB, a workload has {} MiB",
                        limit >> 20,
                        (largest * PAGE_SIZE) >> 20
                    ),
                    fix: "pass --max-pages, or raise /sys/module/zswap/parameters/max_pool_percent".into(),
                });
            }
        }
    }
    needs
}

/// Attempts at one measurement when another process's swapping got mixed in.
const ATTEMPTS: usize = 5;

/// [`measure`], again (up to [`ATTEMPTS`] times) when another process's
/// swapping was mixed into the counters.
fn measure_retrying(
    system: &System,
    pages: &[u8],
    batch: usize,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<measure::Measurement, KernelError> {
    let mut attempt = 1;
    loop {
        match measure(system, pages, batch, stop) {
            Err(KernelError::Busy(why)) if attempt < ATTEMPTS => {
                progress(&format!("  attempt {attempt} discarded: {why}"));
                attempt += 1;
            }
            other => return other,
        }
    }
}

/// Measures each workload (`(name, pages)`) under each compressor. `stop`
/// is polled between page-out calls; `progress` gets one line per step.
/// Every setting changed is restored before this returns; a failure to
/// restore is in [`KernelReport::restore_failures`] (and, on an error
/// return, printed to stderr by the guard).
pub fn run_session(
    system: &System,
    corpus: &str,
    workloads: &[SessionWorkload],
    opts: &SessionOptions,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<KernelReport, KernelError> {
    let largest = workloads
        .iter()
        .map(|w| w.pages.len() / PAGE_SIZE)
        .max()
        .unwrap_or(0);
    let needs = preflight(system, opts.setup, largest);
    if !needs.is_empty() {
        return Err(KernelError::Missing(needs));
    }
    let mut guard = Restore::begin(system, "zswap-kernel")?;
    if opts.setup {
        setup::swap_and_zswap(
            &mut guard,
            swap_needed(largest),
            &opts.swap_file,
            true,
            progress,
        )
        .map_err(KernelError::io("--setup"))?;
    }
    let page_cluster = system.read(PAGE_CLUSTER).unwrap_or_default();
    let counters = system.counters().map_err(KernelError::io(
        "reading zswap's counters (they appear once zswap has been enabled)",
    ))?;
    let rule = SameFilledRule::of(&counters);
    let mut rows = Vec::new();
    for compressor in &opts.compressors {
        let switched = guard
            .set(&format!("{PARAMETERS}/compressor"), compressor)
            .map_err(|e| KernelError::Io {
                what: format!(
                    "choosing compressor {compressor} (the kernel's compressors: {})",
                    system.compressors().unwrap_or_default().join(", ")
                ),
                source: e,
            })?;
        // A new compressor gets a new pool: entries zswap holds now are in
        // the old ones and share no zspage with ours. Without a switch, any
        // entry is in our pool.
        let foreign_elsewhere = if switched {
            system
                .counters()
                .map_err(KernelError::io("reading zswap's counters"))?
                .get("stored_pages")
        } else {
            0
        };
        // A model this build lacks (kernel-lzo without the `lzo` feature)
        // means no prediction, not a failed session.
        let model = measure::model_of(compressor)
            .filter(|k| cannery_engines::peer::Peer::new(k.clone(), None).is_ok());
        for SessionWorkload { name, pages, .. } in workloads {
            progress(&format!(
                "{compressor}: {name} ({} pages)",
                pages.len() / PAGE_SIZE
            ));
            let measured = measure_retrying(system, pages, opts.batch, stop, progress)?;
            let predicted = match (&model, opts.compare_sim) {
                (Some(m), true) => Some(predict(pages, m, rule).map_err(KernelError::Model)?),
                _ => None,
            };
            let shared = measured.stored_before > foreign_elsewhere;
            rows.push(KernelRow::new(
                compressor, name, measured, predicted, shared,
            ));
        }
    }
    let changed = guard.describe();
    let restore_failures = guard.restore();
    let mut canned = Vec::new();
    for w in workloads {
        if let Some(table) = &w.table {
            use cannery_codec::{Format, Level, Mode};
            use cannery_engines::backend::software::Software;
            let mut enc = Software::bound(Mode::Canned, Format::Iaa, Level::Fast, Some(table))
                .map_err(|e| KernelError::Model(e.to_string()))?;
            // cannery's mode name for a named table at the fast parse.
            let name = format!(
                "canned:{}",
                table.name.clone().unwrap_or_else(|| table.id())
            );
            let p = measure::predict_with(&w.pages, &name, rule, &mut enc)
                .map_err(KernelError::Model)?;
            canned.push((w.name.clone(), p));
        }
    }
    Ok(KernelReport {
        kernel_release: system.kernel_release(),
        corpus: corpus.to_string(),
        batch: opts.batch,
        page_cluster,
        same_filled_rule: rule,
        settings_restored: changed,
        restore_failures,
        rows,
        canned,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree(enabled: &str, swap_kib: u64) -> (tempfile::TempDir, System) {
        let d = tempfile::tempdir().unwrap();
        let s = System::at(d.path());
        fs::create_dir_all(s.path(PARAMETERS)).unwrap();
        fs::create_dir_all(s.path("sys/kernel/debug/zswap")).unwrap();
        fs::create_dir_all(s.path("proc/self")).unwrap();
        fs::write(s.path(&format!("{PARAMETERS}/enabled")), enabled).unwrap();
        fs::write(s.path(&format!("{PARAMETERS}/max_pool_percent")), "20").unwrap();
        fs::write(s.path("proc/self/status"), "Name:\tx\nUid:\t0\t0\t0\t0\n").unwrap();
        fs::write(s.path("proc/meminfo"), "MemTotal: 8000000 kB\n").unwrap();
        fs::write(
            s.path("proc/swaps"),
            format!("Filename Type Size Used Priority\n/swap file {swap_kib} 0 -2\n"),
        )
        .unwrap();
        (d, s)
    }

    #[test]
    fn a_ready_machine_needs_nothing() {
        let (_d, s) = tree("Y", 1 << 20);
        assert_eq!(preflight(&s, false, 1000), []);
    }

    #[test]
    fn each_missing_piece_is_named_with_its_fix() {
        let (_d, s) = tree("N", 0);
        fs::write(s.path("proc/self/status"), "Uid:\t1000\t1000\t1000\t1000\n").unwrap();
        let needs = preflight(&s, false, 1000);
        let text = render_needs(&needs);
        assert_eq!(needs.len(), 3, "{text}");
        assert!(text.contains("root"));
        assert!(text.contains("echo Y > /sys/module/zswap/parameters/enabled"));
        assert!(text.contains("mkswap") && text.contains("swapon"));
        // --setup provides zswap and swap itself; root it cannot.
        assert_eq!(preflight(&s, true, 1000).len(), 1);
    }

    #[test]
    fn a_kernel_without_zswap_or_debugfs_is_told_so() {
        let (_d, s) = tree("Y", 1 << 20);
        fs::remove_dir_all(s.path("sys/kernel/debug/zswap")).unwrap();
        assert!(preflight(&s, false, 10)[0].fix.contains("mount -t debugfs"));
        // --setup mounts it (and unmounts it afterwards).
        assert!(preflight(&s, true, 10).is_empty());
        fs::remove_dir_all(s.path("sys/module")).unwrap();
        let needs = preflight(&s, false, 10);
        assert!(needs[0].what.contains("has none"), "{needs:?}");
    }

    #[test]
    fn a_workload_larger_than_the_pool_limit_is_refused() {
        let (_d, s) = tree("Y", 100 << 20);
        // 20 % of 8,000,000 kB is about 1.5 GiB: 500,000 pages do not fit.
        let needs = preflight(&s, false, 500_000);
        assert!(
            needs.iter().any(|n| n.what.contains("max_pool_percent")),
            "{needs:?}"
        );
    }
}
