//! The machine's interfaces below one root directory ([`System`]): `/` on
//! a real machine and a temporary tree in the tests, so parsing and the
//! restore guard are tested without root. Generic reads live here (swap
//! areas, the effective uid, memory size, mounts); zswap's, zram's and the
//! cgroups' own files have modules of their own.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The machine's kernel interfaces below one root directory.
#[derive(Clone, Debug)]
pub struct System {
    root: PathBuf,
}

impl Default for System {
    fn default() -> Self {
        System::at("/")
    }
}

impl System {
    /// The interfaces below `root` (`/` for the running kernel).
    pub fn at(root: impl Into<PathBuf>) -> System {
        System { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `rel` below the root.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// One file's contents, trimmed (at most 1 MiB).
    pub fn read(&self, rel: &str) -> io::Result<String> {
        Ok(read_bounded(&self.path(rel), 1 << 20)?.trim().to_string())
    }
    /// The active swap areas (`/proc/swaps`).
    pub fn swaps(&self) -> io::Result<Vec<SwapArea>> {
        Ok(parse_swaps(&fs::read_to_string(self.path("proc/swaps"))?))
    }

    /// The effective user id of this process (`Uid:` of
    /// `/proc/self/status`, second field).
    pub fn effective_uid(&self) -> io::Result<u32> {
        let text = fs::read_to_string(self.path("proc/self/status"))?;
        text.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|v| v.split_whitespace().nth(1)?.parse().ok())
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidData, "no Uid in /proc/self/status")
            })
    }

    /// The kernel release (`/proc/sys/kernel/osrelease`), or `unknown`.
    pub fn kernel_release(&self) -> String {
        self.read("proc/sys/kernel/osrelease")
            .unwrap_or_else(|_| "unknown".into())
    }

    /// Total memory in bytes (`MemTotal` of `/proc/meminfo`).
    pub fn mem_total(&self) -> io::Result<u64> {
        let text = fs::read_to_string(self.path("proc/meminfo"))?;
        text.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map(|kb| kb * 1024)
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidData, "no MemTotal in /proc/meminfo")
            })
    }
    /// Whether `path` is a mount point (`/proc/self/mounts` below the
    /// root); `None` when that file cannot be read.
    pub fn is_mount_point(&self, path: &Path) -> Option<bool> {
        let text = fs::read_to_string(self.path("proc/self/mounts")).ok()?;
        Some(text.lines().any(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|m| Path::new(&m.replace("\\040", " ")) == path)
        }))
    }

    /// True when `path` is on a cgroup (v1 or v2) file system.
    pub fn is_cgroupfs(&self, path: &Path) -> bool {
        const CGROUP_SUPER_MAGIC: i64 = 0x27e0eb;
        const CGROUP2_SUPER_MAGIC: i64 = 0x6367_7270;
        use std::os::unix::ffi::OsStrExt;
        let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return false;
        };
        // SAFETY: `c` is a NUL-terminated path that outlives the call and
        // `st` is a properly sized, writable statfs buffer.
        let mut st: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
            return false;
        }
        matches!(st.f_type as i64, CGROUP_SUPER_MAGIC | CGROUP2_SUPER_MAGIC)
    }
}

/// Reads a text file of at most `limit` bytes; a longer one is an error.
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<String> {
    let mut text = String::new();
    fs::File::open(path)?
        .take(limit + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is over {limit} bytes", path.display()),
        ));
    }
    Ok(text)
}

/// One active swap area.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwapArea {
    /// Its file or device.
    pub path: String,
    /// `file` or `partition`.
    pub kind: String,
    /// Size in bytes.
    pub size: u64,
    /// Bytes in use.
    pub used: u64,
}

/// The rows of `/proc/swaps` (sizes there are in KiB). Paths with spaces
/// are written by the kernel with `\040`; they are decoded.
pub fn parse_swaps(text: &str) -> Vec<SwapArea> {
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 4 {
                return None;
            }
            Some(SwapArea {
                path: f[0].replace("\\040", " "),
                kind: f[1].to_string(),
                size: f[2].parse::<u64>().ok()? * 1024,
                used: f[3].parse::<u64>().ok()? * 1024,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_are_read_in_bytes() {
        let text = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/var/tmp/a\\040b.swap                       file\t\t1048572\t\t2048\t\t-2\n";
        assert_eq!(
            parse_swaps(text),
            [SwapArea {
                path: "/var/tmp/a b.swap".into(),
                kind: "file".into(),
                size: 1048572 * 1024,
                used: 2048 * 1024,
            }]
        );
        assert!(parse_swaps("Filename Type Size Used Priority\n").is_empty());
    }

    #[test]
    fn mounts_and_bounded_reads() {
        let d = tempfile::tempdir().unwrap();
        let s = System::at(d.path());
        assert_eq!(s.is_mount_point(Path::new("/sys/kernel/debug")), None);
        fs::create_dir_all(s.path("proc/self")).unwrap();
        fs::write(
            s.path("proc/self/mounts"),
            "debugfs /sys/kernel/debug debugfs rw 0 0\n",
        )
        .unwrap();
        assert_eq!(s.is_mount_point(Path::new("/sys/kernel/debug")), Some(true));
        assert_eq!(s.is_mount_point(Path::new("/mnt")), Some(false));
        fs::write(s.path("big"), vec![b'x'; 100]).unwrap();
        assert!(read_bounded(&s.path("big"), 99).is_err());
        assert_eq!(read_bounded(&s.path("big"), 100).unwrap().len(), 100);
        assert!(!s.is_cgroupfs(d.path()));
    }
}
