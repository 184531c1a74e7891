//! A `zram-kernel` session: check what is needed ([`preflight`]), add a
//! zram device of our own through the restore guard, then for each
//! workload and each [`Variant`] (compressor, with or without the
//! workload's dictionary) one measurement: reset, `comp_algorithm`,
//! `algorithm_params`, `disksize`, O_DIRECT page writes, `mm_stat`, every
//! page read back, compared and timed, reset. The guard resets and removes
//! the device before the report is returned, whether the session
//! finished, failed or was interrupted.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cannery_codec::constants::PAGE_SIZE;
use cannery_lab::figures::percentile;
use cannery_machine::{PageIo, Restore, System};

use cannery_engines::peer::Peer;

use super::model::{self, ZramPrediction};
use super::report::{ZramReport, ZramRow};
use super::{Need, ZramError};

/// The compressors that take a dictionary through `algorithm_params`.
pub const DICTIONARY_COMPRESSORS: [&str; 3] = ["lz4", "lz4hc", "zstd"];
/// The largest dictionary the kernel's lz4 and lz4hc backends load
/// (`LZ4_loadDict` keeps at most 64 KiB and the backend checks the size).
pub const LZ4_DICT_MAX: u64 = 64 * 1024;

/// How long to wait for `/dev/zramN` after `hot_add`.
const NODE_WAIT: Duration = Duration::from_secs(5);

/// The settings of a session.
#[derive(Clone, Debug, Default)]
pub struct ZramOptions {
    /// Compressors to measure, in order; `None`: every one the device offers.
    pub compressors: Option<Vec<String>>,
    /// `level=` for `algorithm_params` (lz4's acceleration, zstd's level).
    pub level: Option<i32>,
}

/// One workload of a session.
#[derive(Clone, Debug)]
pub struct ZramWorkload {
    /// Its name.
    pub name: String,
    /// Its pages, back to back (same-filled ones included).
    pub pages: Vec<u8>,
    /// Zero pages written after them: the same-filled pages its capture
    /// counted without storing, in these pages' share.
    pub zero_pages: u64,
    /// Its dictionary (a `train` output), loaded with `dict=`.
    pub dictionary: Option<PathBuf>,
}

/// One configuration of the device: a compressor, with or without the
/// workload's dictionary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variant {
    /// The compressor (`comp_algorithm`).
    pub compressor: String,
    /// Load the workload's dictionary.
    pub dictionary: bool,
}

impl Variant {
    /// The variants measured: each compressor without a dictionary, then
    /// with one where it takes one and one is given (and the kernel has
    /// `algorithm_params`).
    pub fn all(compressors: &[String], dictionary: bool, params: bool) -> Vec<Variant> {
        let mut v = Vec::new();
        for c in compressors {
            v.push(Variant {
                compressor: c.clone(),
                dictionary: false,
            });
            if dictionary && params && DICTIONARY_COMPRESSORS.contains(&c.as_str()) {
                v.push(Variant {
                    compressor: c.clone(),
                    dictionary: true,
                });
            }
        }
        v
    }
}

/// What `algorithm_params` is set to for a variant (`None`: left unset).
pub fn algorithm_params(
    compressor: &str,
    level: Option<i32>,
    dictionary: Option<&std::path::Path>,
) -> Option<String> {
    if level.is_none() && dictionary.is_none() {
        return None;
    }
    let mut s = format!("algo={compressor}");
    if let Some(l) = level {
        s += &format!(" level={l}");
    }
    if let Some(d) = dictionary {
        s += &format!(" dict={}", d.display());
    }
    Some(s)
}

/// What is missing to run a session; empty when it can run. `device` is a
/// zram device whose `comp_algorithm` and `algorithm_params` are read
/// (any existing one before the session, ours after `hot_add`).
pub fn preflight(
    system: &System,
    device: Option<u32>,
    opts: &ZramOptions,
    workloads: &[ZramWorkload],
) -> Vec<Need> {
    let mut needs = Vec::new();
    if system.effective_uid().ok() != Some(0) {
        needs.push(Need {
            what: "root: adding a zram device and writing to it need it".into(),
            fix: "run as root, e.g. sudo cannery zram-kernel …".into(),
        });
    }
    if !system.has_zram_control() {
        needs.push(Need {
            what: "zram with hot_add: no /sys/class/zram-control".into(),
            fix: "modprobe zram   (or boot a kernel built with CONFIG_ZRAM)".into(),
        });
        return needs;
    }
    let Some(id) = device else {
        return needs;
    };
    let offered = system.zram_algorithms(id).map(|a| a.0).unwrap_or_default();
    for c in opts.compressors.iter().flatten() {
        if !offered.contains(c) {
            needs.push(Need {
                what: format!(
                    "compressor {c}: this kernel's zram offers {}",
                    offered.join(", ")
                ),
                fix: format!(
                    "choose among those, or boot a kernel built with CONFIG_ZRAM_BACKEND_{}",
                    c.to_uppercase().replace('-', "_")
                ),
            });
        }
    }
    let dicts = workloads.iter().any(|w| w.dictionary.is_some());
    let params = system.zram_has_algorithm_params(id);
    if !params && (dicts || opts.level.is_some()) {
        needs.push(Need {
            what: "algorithm_params (a level or a dictionary for zram's compressor): this kernel has none".into(),
            fix: "boot Linux 6.12 or later, or measure without dictionaries (no --tables) and without --level".into(),
        });
    }
    let lz4 = opts
        .compressors
        .as_ref()
        .map_or(offered.iter().any(|c| c.starts_with("lz4")), |cs| {
            cs.iter().any(|c| c.starts_with("lz4"))
        });
    for w in workloads {
        let Some(d) = &w.dictionary else { continue };
        match std::fs::metadata(d) {
            Ok(m) if lz4 && m.len() > LZ4_DICT_MAX => needs.push(Need {
                what: format!(
                    "{}: {} bytes; zram's lz4 backends load at most {LZ4_DICT_MAX}",
                    d.display(),
                    m.len()
                ),
                fix: "train again (`cannery train` writes dictionaries of at most 64 KiB)".into(),
            }),
            Ok(_) => {}
            Err(e) => needs.push(Need {
                what: format!("the dictionary {}: {e}", d.display()),
                fix: "cannery train --corpus … -o DIR, then --tables DIR".into(),
            }),
        }
    }
    needs
}

/// Measures each workload under each variant on a zram device of our own.
/// `stop` is polled between pages; `progress` gets one line per
/// measurement. The device is reset and removed before this returns; a
/// failure to do so is in [`ZramReport::restore_failures`] (and, on an
/// error return, printed to stderr by the guard).
pub fn run_session(
    system: &System,
    corpus: &str,
    part: &str,
    workloads: &[ZramWorkload],
    opts: &ZramOptions,
    stop: &dyn Fn() -> bool,
    progress: &mut dyn FnMut(&str),
) -> Result<ZramReport, ZramError> {
    let existing = system.zram_devices();
    let needs = preflight(system, existing.first().copied(), opts, workloads);
    if !needs.is_empty() {
        return Err(ZramError::Missing(needs));
    }
    let mut guard = Restore::begin(system, "zram-kernel")?;
    let id = guard
        .add_zram_device()
        .map_err(ZramError::io("adding a zram device"))?;
    progress(&format!("added /dev/zram{id}"));
    let needs = preflight(system, Some(id), opts, workloads);
    if !needs.is_empty() {
        return Err(ZramError::Missing(needs));
    }
    let (offered, _) = system
        .zram_algorithms(id)
        .map_err(ZramError::io(format!("reading zram{id}'s comp_algorithm")))?;
    let compressors = opts.compressors.clone().unwrap_or(offered);
    let params = system.zram_has_algorithm_params(id);
    let mut rows = Vec::new();
    for w in workloads {
        for v in Variant::all(&compressors, w.dictionary.is_some(), params) {
            let dict = if v.dictionary {
                w.dictionary.as_deref()
            } else {
                None
            };
            progress(&format!(
                "{}{}: {} ({} pages + {} zero)",
                v.compressor,
                if v.dictionary { " + dictionary" } else { "" },
                w.name,
                w.pages.len() / PAGE_SIZE,
                w.zero_pages
            ));
            let mut row = measure(system, id, w, &v.compressor, opts.level, dict, stop)?;
            // The model knows the default level only.
            if opts.level.is_none() {
                if let Some(p) = model(w, &v.compressor, dict)? {
                    row.set_model(p);
                }
            }
            rows.push(row);
        }
    }
    ZramRow::set_dictionary_changes(&mut rows);
    let settings_restored = guard.describe();
    let restore_failures = guard.restore();
    Ok(ZramReport {
        kernel_release: system.kernel_release(),
        corpus: corpus.to_string(),
        part: part.to_string(),
        device: id,
        level: opts.level,
        settings_restored,
        restore_failures,
        rows,
    })
}

/// One measurement on device `id` (ours): see the module documentation.
fn measure(
    system: &System,
    id: u32,
    w: &ZramWorkload,
    compressor: &str,
    level: Option<i32>,
    dictionary: Option<&std::path::Path>,
    stop: &dyn Fn() -> bool,
) -> Result<ZramRow, ZramError> {
    let dev = |what: &str| ZramError::io(format!("zram{id}: {what}"));
    system
        .zram_write(id, "reset", "1")
        .map_err(dev("resetting"))?;
    system
        .zram_write(id, "comp_algorithm", compressor)
        .map_err(dev("choosing the compressor"))?;
    let dict_abs = match dictionary {
        // The kernel opens the file by path: make it absolute.
        Some(d) => Some(
            std::fs::canonicalize(d)
                .map_err(ZramError::io(format!("the dictionary {}", d.display())))?,
        ),
        None => None,
    };
    if let Some(p) = algorithm_params(compressor, level, dict_abs.as_deref()) {
        system
            .zram_write(id, "algorithm_params", &p)
            .map_err(dev("setting algorithm_params"))?;
    }
    let real = (w.pages.len() / PAGE_SIZE) as u64;
    let total = real
        .checked_add(w.zero_pages)
        .ok_or_else(|| dev("page count")(std::io::ErrorKind::InvalidInput.into()))?;
    if total == 0 {
        return Err(dev("measuring")(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("workload {} has no pages", w.name),
        )));
    }
    system
        .zram_write(id, "disksize", &(total * PAGE_SIZE as u64).to_string())
        .map_err(dev("setting disksize"))?;
    let zero = vec![0u8; PAGE_SIZE];
    let page = |i: u64| -> &[u8] {
        if i < real {
            let at = i as usize * PAGE_SIZE;
            &w.pages[at..at + PAGE_SIZE]
        } else {
            &zero
        }
    };
    let mut io = PageIo::open(system, id, NODE_WAIT).map_err(dev("opening"))?;
    let mut write_ns = Vec::with_capacity(total as usize);
    for i in 0..total {
        if stop() {
            return Err(ZramError::Interrupted);
        }
        let t = Instant::now();
        io.write_page(i, page(i))
            .map_err(dev(&format!("writing page {i}")))?;
        write_ns.push(t.elapsed().as_nanos() as u64);
    }
    let mm = system.zram_mm_stat(id).map_err(dev("reading mm_stat"))?;
    let mut read_ns = Vec::with_capacity(total as usize);
    let mut mismatches = 0;
    for i in 0..total {
        if stop() {
            return Err(ZramError::Interrupted);
        }
        let t = Instant::now();
        let back = io.read_page(i).map_err(dev(&format!("reading page {i}")))?;
        read_ns.push(t.elapsed().as_nanos() as u64);
        if back != page(i) {
            mismatches += 1;
        }
    }
    drop(io);
    system
        .zram_write(id, "reset", "1")
        .map_err(dev("resetting"))?;
    write_ns.sort_unstable();
    read_ns.sort_unstable();
    Ok(ZramRow {
        workload: w.name.clone(),
        compressor: compressor.to_string(),
        dictionary: dictionary.map(|d| d.display().to_string()),
        pages: total,
        zero_pages_added: w.zero_pages,
        mm_stat: mm,
        data_ratio: ratio(mm.orig_data_size, mm.compr_data_size),
        mem_ratio: ratio(mm.orig_data_size, mm.mem_used_total),
        dictionary_change: None,
        model: None,
        model_data_error: None,
        model_mem_error: None,
        write_p50_ns: percentile(&write_ns, 50.0),
        write_p99_ns: percentile(&write_ns, 99.0),
        read_p50_ns: percentile(&read_ns, 50.0),
        read_p99_ns: percentile(&read_ns, 99.0),
        pages_compared: total,
        mismatches,
    })
}

/// The model's prediction for a variant, where it has the compressor
/// (and this build has it: `kernel-lzo` needs the `lzo` feature).
fn model(
    w: &ZramWorkload,
    compressor: &str,
    dictionary: Option<&std::path::Path>,
) -> Result<Option<ZramPrediction>, ZramError> {
    let Some(kind) = model::model_of(compressor, dictionary.is_some()) else {
        return Ok(None);
    };
    let dict = match dictionary {
        Some(d) => Some(
            cannery_files::input::read_limited(d, LZ4_DICT_MAX, "dictionary").map_err(|e| {
                ZramError::Io {
                    what: format!("reading {}", d.display()),
                    source: std::io::Error::other(e.to_string()),
                }
            })?,
        ),
        None => None,
    };
    let Ok(peer) = Peer::new(kind, dict.as_deref()) else {
        return Ok(None);
    };
    model::predict(&w.pages, w.zero_pages, &mut peer.bound())
        .map(Some)
        .map_err(|e| ZramError::Io {
            what: format!("modelling {compressor} on {}", w.name),
            source: std::io::Error::other(e),
        })
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree() -> (tempfile::TempDir, System) {
        let d = tempfile::tempdir().unwrap();
        let s = System::at(d.path());
        fs::create_dir_all(s.path("sys/class/zram-control")).unwrap();
        fs::create_dir_all(s.path("sys/block/zram0")).unwrap();
        fs::create_dir_all(s.path("proc/self")).unwrap();
        fs::write(s.path("proc/self/status"), "Uid:\t0\t0\t0\t0\n").unwrap();
        fs::write(
            s.path("sys/block/zram0/comp_algorithm"),
            "[lzo-rle] lzo lz4\n",
        )
        .unwrap();
        fs::write(s.path("sys/block/zram0/algorithm_params"), "").unwrap();
        (d, s)
    }

    fn workload(dict: Option<PathBuf>) -> ZramWorkload {
        ZramWorkload {
            name: "w".into(),
            pages: vec![1; PAGE_SIZE],
            zero_pages: 0,
            dictionary: dict,
        }
    }

    #[test]
    fn dictionaries_go_with_the_compressors_that_take_them() {
        let cs: Vec<String> = ["lzo-rle", "lz4", "zstd"].map(String::from).to_vec();
        let v = Variant::all(&cs, true, true);
        let names: Vec<(&str, bool)> = v
            .iter()
            .map(|v| (v.compressor.as_str(), v.dictionary))
            .collect();
        assert_eq!(
            names,
            [
                ("lzo-rle", false),
                ("lz4", false),
                ("lz4", true),
                ("zstd", false),
                ("zstd", true)
            ]
        );
        assert_eq!(Variant::all(&cs, true, false).len(), 3);
        assert_eq!(Variant::all(&cs, false, true).len(), 3);
        assert_eq!(algorithm_params("lz4", None, None), None);
        assert_eq!(
            algorithm_params("lz4", Some(3), Some(std::path::Path::new("/t/d"))).as_deref(),
            Some("algo=lz4 level=3 dict=/t/d")
        );
    }

    #[test]
    fn each_missing_piece_is_named_with_its_fix() {
        let (d, s) = tree();
        assert!(preflight(&s, Some(0), &ZramOptions::default(), &[workload(None)]).is_empty());
        // Not root, a compressor the kernel lacks, a dictionary too large for lz4.
        fs::write(s.path("proc/self/status"), "Uid:\t1000\t1000\t1000\t1000\n").unwrap();
        let big = d.path().join("big.dict");
        fs::write(&big, vec![0u8; 65 * 1024]).unwrap();
        let opts = ZramOptions {
            compressors: Some(vec!["zstd".into(), "lz4".into()]),
            level: None,
        };
        let needs = preflight(&s, Some(0), &opts, &[workload(Some(big.clone()))]);
        let text = super::super::render_needs(&needs);
        assert_eq!(needs.len(), 3, "{text}");
        assert!(text.contains("root") && text.contains("sudo"), "{text}");
        assert!(text.contains("CONFIG_ZRAM_BACKEND_ZSTD"), "{text}");
        assert!(text.contains("at most 65536"), "{text}");
        assert!(
            text.starts_with("cannot measure the kernel's zram"),
            "{text}"
        );
        // No algorithm_params: dictionaries cannot be loaded.
        fs::remove_file(s.path("sys/block/zram0/algorithm_params")).unwrap();
        let small = d.path().join("small.dict");
        fs::write(&small, vec![0u8; 1024]).unwrap();
        let needs = preflight(
            &s,
            Some(0),
            &ZramOptions::default(),
            &[workload(Some(small))],
        );
        assert!(needs.iter().any(|n| n.fix.contains("6.12")), "{needs:?}");
        // No zram at all.
        fs::remove_dir_all(s.path("sys/class/zram-control")).unwrap();
        let needs = preflight(&s, None, &ZramOptions::default(), &[]);
        assert!(
            needs.iter().any(|n| n.fix.contains("modprobe zram")),
            "{needs:?}"
        );
    }
}
