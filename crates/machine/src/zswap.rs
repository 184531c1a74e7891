//! zswap's interfaces: the module parameters under
//! `/sys/module/zswap/parameters/`, the debugfs counters under
//! `/sys/kernel/debug/zswap/`, the compressors of `/proc/crypto`,
//! `vm.page-cluster`, and the DAMON schemes that page out beside us.
//! Reading only: writes go through [`crate::Restore`], which puts them
//! back.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use crate::system::System;

/// zswap's module parameters, relative to the root.
pub const PARAMETERS: &str = "sys/module/zswap/parameters";
/// zswap's debugfs counters, relative to the root.
pub const DEBUGFS: &str = "sys/kernel/debug/zswap";
/// The debugfs mount point, relative to the root.
pub const DEBUGFS_MOUNT: &str = "sys/kernel/debug";
/// Swap-in readahead: 2^page-cluster pages per swap-in.
pub const PAGE_CLUSTER: &str = "proc/sys/vm/page-cluster";

impl System {
    /// True when the kernel has zswap (its parameter directory exists).
    pub fn has_zswap(&self) -> bool {
        self.path(PARAMETERS).is_dir()
    }

    /// zswap's parameters, name to value (`enabled` reads `Y` or `N`).
    pub fn parameters(&self) -> io::Result<BTreeMap<String, String>> {
        read_dir_values(&self.path(PARAMETERS))
    }

    /// One parameter of zswap.
    pub fn parameter(&self, name: &str) -> io::Result<String> {
        self.read(&format!("{PARAMETERS}/{name}"))
    }

    /// True when zswap is enabled.
    pub fn zswap_enabled(&self) -> io::Result<bool> {
        Ok(matches!(
            self.parameter("enabled")?.as_str(),
            "Y" | "y" | "1"
        ))
    }

    /// zswap's debugfs counters; an error if debugfs is not mounted or
    /// zswap has not made its directory yet (it does when first enabled).
    pub fn counters(&self) -> io::Result<Counters> {
        let values = read_dir_values(&self.path(DEBUGFS))?;
        let mut map = BTreeMap::new();
        for (name, v) in values {
            if let Ok(n) = v.parse::<u64>() {
                map.insert(name, n);
            }
        }
        if !map.contains_key("stored_pages") || !map.contains_key("pool_total_size") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "zswap's debugfs directory has no stored_pages/pool_total_size",
            ));
        }
        Ok(Counters(map))
    }

    /// True when something is mounted on `/sys/kernel/debug` (it has entries).
    pub fn debugfs_mounted(&self) -> bool {
        fs::read_dir(self.path(DEBUGFS_MOUNT)).is_ok_and(|mut d| d.next().is_some())
    }

    /// The compression algorithms the crypto API has loaded (`/proc/crypto`).
    pub fn compressors(&self) -> io::Result<Vec<String>> {
        Ok(parse_crypto_compressors(&fs::read_to_string(
            self.path("proc/crypto"),
        )?))
    }
}

/// The DAMON sysfs interface, relative to the root.
pub const DAMON_KDAMONDS: &str = "sys/kernel/mm/damon/admin/kdamonds";

/// A note naming the running DAMON contexts with a `pageout` scheme (they
/// push other processes' cold pages through zswap at their own pace), as
/// `" (kdamond 0 runs a DAMON pageout scheme)"`; empty when there is none.
pub fn damon_pageout_hint(system: &System) -> String {
    let mut found = Vec::new();
    let Ok(kdamonds) = fs::read_dir(system.path(DAMON_KDAMONDS)) else {
        return String::new();
    };
    for k in kdamonds.flatten() {
        let kd = k.path();
        if !fs::read_to_string(kd.join("state")).is_ok_and(|s| s.trim() == "on") {
            continue;
        }
        let schemes = fs::read_dir(kd.join("contexts"))
            .into_iter()
            .flatten()
            .flatten()
            .flat_map(|c| {
                fs::read_dir(c.path().join("schemes"))
                    .into_iter()
                    .flatten()
                    .flatten()
            });
        if schemes.into_iter().any(|s| {
            fs::read_to_string(s.path().join("action")).is_ok_and(|a| a.trim() == "pageout")
        }) {
            found.push(k.file_name().to_string_lossy().into_owned());
        }
    }
    if found.is_empty() {
        String::new()
    } else {
        format!(
            " (DAMON kdamond {} runs a pageout scheme, which swaps other processes' cold pages out)",
            found.join(", ")
        )
    }
}

/// Name → trimmed contents of every readable regular file in `dir`.
fn read_dir_values(dir: &Path) -> io::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if !entry.file_type()?.is_file() {
            continue;
        }
        if let Ok(v) = fs::read_to_string(entry.path()) {
            out.insert(
                entry.file_name().to_string_lossy().into_owned(),
                v.trim().to_string(),
            );
        }
    }
    Ok(out)
}

/// zswap's debugfs counters at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters(pub BTreeMap<String, u64>);

impl Counters {
    /// A counter; 0 when this kernel does not have it.
    pub fn get(&self, name: &str) -> u64 {
        self.0.get(name).copied().unwrap_or(0)
    }

    /// True when this kernel has the counter.
    pub fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// `after − self` for one counter, as a signed number (gauges such as
    /// `stored_pages` fall as well as rise).
    pub fn delta(&self, after: &Counters, name: &str) -> i64 {
        after.get(name) as i64 - self.get(name) as i64
    }

    /// The gauges that say what zswap holds: stored pages and pool bytes
    /// (and same-filled pages on kernels that count them). Two readings
    /// with equal gauges mean no one stored or loaded in between.
    pub fn gauges(&self) -> (u64, u64, u64) {
        (
            self.get("stored_pages"),
            self.get("pool_total_size"),
            self.get("same_filled_pages"),
        )
    }
}

/// The `name` of every `/proc/crypto` entry whose type is a compressor
/// (`compression`, `scomp` or `acomp`), once each, in order of appearance.
pub fn parse_crypto_compressors(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for block in text.split("\n\n") {
        let field = |key: &str| {
            block.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        let (Some(name), Some(kind)) = (field("name"), field("type")) else {
            continue;
        };
        if matches!(kind.as_str(), "compression" | "scomp" | "acomp") && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::system::System;

    const CRYPTO: &str = "name         : deflate\ndriver       : deflate-generic\nmodule       : kernel\ntype         : acomp\n\nname         : sha256\ndriver       : sha256-generic\ntype         : shash\n\nname         : lzo-rle\ndriver       : lzo-rle-scomp\ntype         : scomp\n\nname         : lzo\ndriver       : lzo-generic\ntype         : compression\n\nname         : lzo\ndriver       : lzo-scomp\ntype         : scomp\n";

    #[test]
    fn compressors_are_read_from_proc_crypto() {
        assert_eq!(
            parse_crypto_compressors(CRYPTO),
            ["deflate", "lzo-rle", "lzo"]
        );
        assert!(parse_crypto_compressors("").is_empty());
    }

    fn tree() -> (tempfile::TempDir, System) {
        let dir = tempfile::tempdir().unwrap();
        let s = System::at(dir.path());
        fs::create_dir_all(s.path(PARAMETERS)).unwrap();
        fs::create_dir_all(s.path(DEBUGFS)).unwrap();
        fs::create_dir_all(s.path("proc")).unwrap();
        for (k, v) in [
            ("enabled", "N\n"),
            ("compressor", "lzo\n"),
            ("max_pool_percent", "20\n"),
        ] {
            fs::write(s.path(&format!("{PARAMETERS}/{k}")), v).unwrap();
        }
        for (k, v) in [
            ("stored_pages", "7\n"),
            ("pool_total_size", "8192\n"),
            ("reject_compress_poor", "1\n"),
        ] {
            fs::write(s.path(&format!("{DEBUGFS}/{k}")), v).unwrap();
        }
        fs::write(
            s.path("proc/meminfo"),
            "MemTotal:       24684144 kB\nMemFree: 1 kB\n",
        )
        .unwrap();
        (dir, s)
    }

    #[test]
    fn parameters_and_counters_are_read_below_the_root() {
        let (_d, s) = tree();
        assert!(s.has_zswap());
        assert!(!s.zswap_enabled().unwrap());
        assert_eq!(s.parameter("compressor").unwrap(), "lzo");
        assert_eq!(s.parameters().unwrap().len(), 3);
        let c = s.counters().unwrap();
        assert_eq!(c.gauges(), (7, 8192, 0));
        assert!(!c.has("same_filled_pages"));
        let mut after = c.clone();
        after.0.insert("stored_pages".into(), 3);
        assert_eq!(c.delta(&after, "stored_pages"), -4);
        assert_eq!(s.mem_total().unwrap(), 24684144 * 1024);
    }

    #[test]
    fn a_running_damon_pageout_scheme_is_named() {
        let (_d, s) = tree();
        assert_eq!(damon_pageout_hint(&s), "");
        let k = s.path(&format!("{DAMON_KDAMONDS}/0"));
        fs::create_dir_all(k.join("contexts/0/schemes/0")).unwrap();
        fs::write(k.join("state"), "on\n").unwrap();
        fs::write(k.join("contexts/0/schemes/0/action"), "stat\n").unwrap();
        assert_eq!(damon_pageout_hint(&s), "");
        fs::write(k.join("contexts/0/schemes/0/action"), "pageout\n").unwrap();
        assert!(damon_pageout_hint(&s).contains("kdamond 0"));
        fs::write(k.join("state"), "off\n").unwrap();
        assert_eq!(damon_pageout_hint(&s), "");
    }

    #[test]
    fn missing_counters_are_an_error() {
        let (_d, s) = tree();
        fs::remove_file(s.path(&format!("{DEBUGFS}/pool_total_size"))).unwrap();
        assert_eq!(s.counters().unwrap_err().kind(), io::ErrorKind::InvalidData);
        fs::remove_dir_all(s.path(DEBUGFS)).unwrap();
        assert_eq!(s.counters().unwrap_err().kind(), io::ErrorKind::NotFound);
    }
}
