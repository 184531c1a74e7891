//! Memory cgroups, v1 and v2, below the [`System`] root: finding the
//! memory controller ([`find`]), making a temporary cgroup of our own
//! through the [`Restore`] guard ([`MemoryCgroup::create`]), the one a
//! process already lives in ([`MemoryCgroup::of_process`]), and the few
//! files the reclaim step reads and writes (usage, anonymous memory,
//! limit, OOM state, `memory.reclaim`). The step itself is in
//! [`crate::reclaim`].
//!
//! v1 (`/sys/fs/cgroup/memory`): `memory.usage_in_bytes`,
//! `memory.limit_in_bytes`, `memory.swappiness`, `memory.oom_control`,
//! `memory.stat` (`total_rss`). v2 (`/sys/fs/cgroup` with `memory` in
//! `cgroup.subtree_control`): `memory.current`, `memory.reclaim`,
//! `memory.stat` (`anon`).

use std::collections::BTreeMap;
use std::fs;
use std::io;

use crate::guard::Restore;
use crate::system::System;

/// Where cgroup v2 is mounted, below the root.
pub const V2_ROOT: &str = "sys/fs/cgroup";
/// Where cgroup v1's memory controller is mounted, below the root.
pub const V1_ROOT: &str = "sys/fs/cgroup/memory";

/// The cgroup interface holding the memory controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Version {
    /// cgroup v1: charges stay where they were made; reclaim by limit.
    V1,
    /// cgroup v2: `memory.reclaim`.
    V2,
}

impl Version {
    /// `v1` or `v2`.
    pub fn name(self) -> &'static str {
        match self {
            Version::V1 => "v1",
            Version::V2 => "v2",
        }
    }
}

/// Which hierarchy has the memory controller: v2 when it is enabled for
/// children of the v2 root, else v1 when its memory hierarchy is mounted.
pub fn find(system: &System) -> Option<Version> {
    let v2 = system
        .read(&format!("{V2_ROOT}/cgroup.subtree_control"))
        .is_ok_and(|t| t.split_whitespace().any(|c| c == "memory"));
    if v2 {
        return Some(Version::V2);
    }
    system
        .path(&format!("{V1_ROOT}/memory.limit_in_bytes"))
        .exists()
        .then_some(Version::V1)
}

/// Why there is no usable memory cgroup, with the fix.
pub fn missing_reason(system: &System) -> String {
    let controllers = system
        .read(&format!("{V2_ROOT}/cgroup.controllers"))
        .unwrap_or_default();
    if controllers.split_whitespace().any(|c| c == "memory") {
        format!(
            "the cgroup v2 memory controller is not enabled for child cgroups: \
             echo +memory > /{V2_ROOT}/cgroup.subtree_control"
        )
    } else {
        format!(
            "no memory cgroup: neither /{V2_ROOT}/cgroup.controllers names `memory` nor is \
             /{V1_ROOT} mounted (boot with cgroup_enable=memory, or mount -t cgroup -o memory \
             none /{V1_ROOT})"
        )
    }
}

/// One memory cgroup, relative to the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryCgroup {
    /// Its interface.
    pub version: Version,
    /// Its directory below the root (`sys/fs/cgroup/memory/cannery-123`).
    pub rel: String,
}

impl MemoryCgroup {
    /// Creates the cgroup `name` under the hierarchy's root through the
    /// guard (removed on restore, its processes moved to the parent). On
    /// v1 it prefers swapping (`memory.swappiness` 100) and keeps the OOM
    /// killer off (`memory.oom_control` 1), so lowering its limit reclaims
    /// anonymous pages and never kills the workload.
    pub fn create(guard: &mut Restore, version: Version, name: &str) -> io::Result<MemoryCgroup> {
        let root = match version {
            Version::V1 => V1_ROOT,
            Version::V2 => V2_ROOT,
        };
        let cg = MemoryCgroup {
            version,
            rel: format!("{root}/{name}"),
        };
        guard.add_cgroup(&cg.rel)?;
        if version == Version::V1 {
            let named =
                |f: String| move |e: io::Error| io::Error::new(e.kind(), format!("/{f}: {e}"));
            let swappiness = cg.file("memory.swappiness");
            guard
                .set(&swappiness, "100")
                .map_err(named(swappiness.clone()))?;
            let oom = cg.file("memory.oom_control");
            guard
                .write_in_own_cgroup(&oom, "1")
                .map_err(named(oom.clone()))?;
        }
        Ok(cg)
    }

    /// The memory cgroup process `pid` lives in (`/proc/PID/cgroup`).
    pub fn of_process(system: &System, version: Version, pid: u32) -> io::Result<MemoryCgroup> {
        let text = system.read(&format!("proc/{pid}/cgroup"))?;
        let path = process_cgroup(&text, version).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "process {pid} has no {} memory cgroup in /proc/{pid}/cgroup",
                    version.name()
                ),
            )
        })?;
        let root = match version {
            Version::V1 => V1_ROOT,
            Version::V2 => V2_ROOT,
        };
        let rel = format!("{root}{}", path.trim_end_matches('/'));
        Ok(MemoryCgroup { version, rel })
    }

    /// A file of the cgroup, relative to the root.
    pub fn file(&self, name: &str) -> String {
        format!("{}/{name}", self.rel)
    }

    /// The file that moves a process into the cgroup when its PID (or 0,
    /// for the writer itself) is written to it.
    pub fn procs_file(&self) -> String {
        self.file("cgroup.procs")
    }

    /// The PIDs in the cgroup.
    pub fn procs(&self, system: &System) -> io::Result<Vec<u32>> {
        Ok(system
            .read(&self.procs_file())?
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect())
    }

    /// Memory charged to the cgroup, bytes.
    pub fn usage(&self, system: &System) -> io::Result<u64> {
        let name = match self.version {
            Version::V1 => "memory.usage_in_bytes",
            Version::V2 => "memory.current",
        };
        parse_u64(system, &self.file(name))
    }

    /// The cgroup's `memory.stat`, name to value.
    pub fn stat(&self, system: &System) -> io::Result<BTreeMap<String, u64>> {
        Ok(parse_stat(&system.read(&self.file("memory.stat"))?))
    }

    /// Anonymous memory charged to the cgroup, bytes (v1 `total_rss`, v2
    /// `anon`): what the reclaim amount is a share of. Page cache is not in it.
    pub fn anon(&self, system: &System) -> io::Result<u64> {
        let key = match self.version {
            Version::V1 => "total_rss",
            Version::V2 => "anon",
        };
        self.stat(system)?.get(key).copied().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("no {key} in /{}", self.file("memory.stat")),
            )
        })
    }

    /// v1: the limit file, relative to the root.
    pub fn limit_file(&self) -> String {
        self.file("memory.limit_in_bytes")
    }

    /// v1: true when the cgroup is at its limit with the OOM killer off
    /// (`under_oom 1` in `memory.oom_control`): its tasks wait for memory.
    pub fn under_oom(&self, system: &System) -> bool {
        if self.version != Version::V1 {
            return false;
        }
        system
            .read(&self.file("memory.oom_control"))
            .map(|t| parse_stat(&t).get("under_oom").copied().unwrap_or(0) != 0)
            .unwrap_or(false)
    }

    /// v2: asks the kernel to reclaim `bytes` from the cgroup
    /// (`memory.reclaim`), anonymous pages included: the first request of
    /// [`reclaim_requests`] the kernel accepts. Returns the request used;
    /// `EAGAIN` (less was reclaimed) is returned as an error of kind
    /// [`io::ErrorKind::WouldBlock`].
    pub fn reclaim(&self, system: &System, bytes: u64) -> io::Result<String> {
        let path = system.path(&self.file("memory.reclaim"));
        let mut last = None;
        for req in reclaim_requests(bytes) {
            // Never create the file: a kernel without it is an error.
            let written = fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|mut f| io::Write::write_all(&mut f, req.as_bytes()));
            match written {
                Ok(()) => return Ok(req),
                // The kernel does not know this argument: try the next form.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("memory.reclaim refused every request")))
    }
}

/// The `memory.reclaim` requests for `bytes`, most anonymous first:
/// `swappiness=max` (reclaim only anonymous pages, 6.14 and later), then
/// `swappiness=200` (the highest preference for anonymous pages), then
/// the plain amount (older kernels, which take no arguments).
pub fn reclaim_requests(bytes: u64) -> [String; 3] {
    [
        format!("{bytes} swappiness=max"),
        format!("{bytes} swappiness=200"),
        bytes.to_string(),
    ]
}

/// The cgroup path of `version`'s memory controller in a
/// `/proc/PID/cgroup` text: the `0::PATH` line on v2, the line whose
/// controllers include `memory` on v1.
pub fn process_cgroup(text: &str, version: Version) -> Option<String> {
    text.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (id, ctrls, path) = (f.next()?, f.next()?, f.next()?);
        let hit = match version {
            Version::V2 => id == "0" && ctrls.is_empty(),
            Version::V1 => ctrls.split(',').any(|c| c == "memory"),
        };
        hit.then(|| path.to_string())
    })
}

/// `name value` lines (`memory.stat`, `memory.oom_control`) as a map;
/// lines that are not a name and a number are skipped.
pub fn parse_stat(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

fn parse_u64(system: &System, rel: &str) -> io::Result<u64> {
    let t = system.read(rel)?;
    t.parse().map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("/{rel} holds {t:?}, not a number"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> (tempfile::TempDir, System) {
        let d = tempfile::tempdir().unwrap();
        let s = System::at(d.path());
        (d, s)
    }

    fn v1_tree() -> (tempfile::TempDir, System) {
        let (d, s) = tree();
        fs::create_dir_all(s.path(V1_ROOT)).unwrap();
        fs::write(
            s.path(&format!("{V1_ROOT}/memory.limit_in_bytes")),
            "9223372036854771712\n",
        )
        .unwrap();
        fs::write(s.path(&format!("{V2_ROOT}/cgroup.controllers")), "cpu io\n").unwrap();
        fs::write(
            s.path(&format!("{V2_ROOT}/cgroup.subtree_control")),
            "cpu\n",
        )
        .unwrap();
        (d, s)
    }

    #[test]
    fn the_memory_controller_is_found_on_v2_first_then_v1() {
        let (_d, s) = tree();
        assert_eq!(find(&s), None);
        assert!(missing_reason(&s).contains("no memory cgroup"));
        let (_d, s) = v1_tree();
        assert_eq!(find(&s), Some(Version::V1));
        // v2 with the controller available but not enabled for children:
        // still v1 here, and the reason names the fix.
        fs::write(
            s.path(&format!("{V2_ROOT}/cgroup.controllers")),
            "cpu memory\n",
        )
        .unwrap();
        assert_eq!(find(&s), Some(Version::V1));
        assert!(missing_reason(&s).contains("echo +memory"));
        fs::write(
            s.path(&format!("{V2_ROOT}/cgroup.subtree_control")),
            "cpu memory\n",
        )
        .unwrap();
        assert_eq!(find(&s), Some(Version::V2));
    }

    #[test]
    fn a_v1_cgroup_is_made_for_swapping_without_oom_kills_and_removed() {
        let (_d, s) = v1_tree();
        let mut g = Restore::begin(&s, "test").unwrap();
        let cg = MemoryCgroup {
            version: Version::V1,
            rel: format!("{V1_ROOT}/cannery-7"),
        };
        // The kernel fills a new cgroup's files; the fake tree does it by
        // hand after the guard made the directory, then the steps of
        // `create` follow one by one.
        g.add_cgroup(&cg.rel).unwrap();
        // An existing directory is never taken as ours.
        assert!(MemoryCgroup::create(&mut g, Version::V1, "cannery-7").is_err());
        let dir = s.path(&cg.rel);
        fs::write(dir.join("memory.swappiness"), "60").unwrap();
        fs::write(
            dir.join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 0",
        )
        .unwrap();
        g.set(&cg.file("memory.swappiness"), "100").unwrap();
        g.write_in_own_cgroup(&cg.file("memory.oom_control"), "1")
            .unwrap();
        assert_eq!(s.read(&cg.file("memory.oom_control")).unwrap(), "1");
        // A file outside the guard's own cgroups is refused.
        assert!(g
            .write_in_own_cgroup(&format!("{V1_ROOT}/memory.limit_in_bytes"), "1")
            .is_err());
        fs::write(
            dir.join("memory.oom_control"),
            "oom_kill_disable 1\nunder_oom 1\noom_kill 0",
        )
        .unwrap();
        assert!(cg.under_oom(&s));
        fs::write(dir.join("memory.limit_in_bytes"), "9223372036854771712").unwrap();
        g.set(&cg.limit_file(), "4096000").unwrap();
        assert!(g.restore().is_empty());
        assert!(!dir.exists(), "the cgroup is removed");
    }

    #[test]
    fn create_makes_the_directory_and_sets_v1_files_through_the_guard() {
        let (_d, s) = v1_tree();
        let mut g = Restore::begin(&s, "test").unwrap();
        // On a fake tree the new directory has no files: the swappiness
        // write fails, and nothing is left behind by the guard.
        let e = MemoryCgroup::create(&mut g, Version::V1, "cannery-9").unwrap_err();
        assert!(e.to_string().contains("memory.swappiness"), "{e}");
        assert!(g.restore().is_empty());
        assert!(!s.path(&format!("{V1_ROOT}/cannery-9")).exists());
        drop(g);
        // v2 needs nothing but the directory.
        let mut g = Restore::begin(&s, "test").unwrap();
        let cg = MemoryCgroup::create(&mut g, Version::V2, "cannery-9").unwrap();
        assert_eq!(cg.rel, "sys/fs/cgroup/cannery-9");
        assert!(s.path(&cg.rel).is_dir());
        assert!(g.restore().is_empty());
        assert!(!s.path(&cg.rel).exists());
    }

    #[test]
    fn usage_anon_and_procs_are_read_per_version() {
        let (_d, s) = tree();
        let v1 = MemoryCgroup {
            version: Version::V1,
            rel: format!("{V1_ROOT}/a"),
        };
        let v2 = MemoryCgroup {
            version: Version::V2,
            rel: format!("{V2_ROOT}/b"),
        };
        fs::create_dir_all(s.path(&v1.rel)).unwrap();
        fs::create_dir_all(s.path(&v2.rel)).unwrap();
        fs::write(s.path(&v1.file("memory.usage_in_bytes")), "83886080\n").unwrap();
        fs::write(
            s.path(&v1.file("memory.stat")),
            "cache 4096\nrss 100\ntotal_cache 8192\ntotal_rss 69632000\n",
        )
        .unwrap();
        fs::write(s.path(&v1.procs_file()), "12\n13\n").unwrap();
        fs::write(s.path(&v2.file("memory.current")), "5000\n").unwrap();
        fs::write(s.path(&v2.file("memory.stat")), "anon 40960\nfile 100\n").unwrap();
        assert_eq!(v1.usage(&s).unwrap(), 83886080);
        assert_eq!(v1.anon(&s).unwrap(), 69632000);
        assert_eq!(v1.procs(&s).unwrap(), [12, 13]);
        assert_eq!(v2.usage(&s).unwrap(), 5000);
        assert_eq!(v2.anon(&s).unwrap(), 40960);
        assert!(!v2.under_oom(&s));
        fs::write(s.path(&v2.file("memory.current")), "max\n").unwrap();
        assert!(v2.usage(&s).is_err());
        fs::write(s.path(&v2.file("memory.stat")), "file 100\n").unwrap();
        assert!(v2.anon(&s).unwrap_err().to_string().contains("no anon"));
    }

    #[test]
    fn v2_reclaim_writes_the_most_anonymous_request_first() {
        let (_d, s) = tree();
        let cg = MemoryCgroup {
            version: Version::V2,
            rel: format!("{V2_ROOT}/c"),
        };
        fs::create_dir_all(s.path(&cg.rel)).unwrap();
        fs::write(s.path(&cg.file("memory.reclaim")), "").unwrap();
        assert_eq!(cg.reclaim(&s, 1 << 20).unwrap(), "1048576 swappiness=max");
        assert_eq!(
            s.read(&cg.file("memory.reclaim")).unwrap(),
            "1048576 swappiness=max"
        );
        let r = reclaim_requests(4096);
        assert_eq!(r[1], "4096 swappiness=200");
        assert_eq!(r[2], "4096");
        // No memory.reclaim at all (a kernel before 5.19): an error, not a no-op.
        fs::remove_file(s.path(&cg.file("memory.reclaim"))).unwrap();
        assert!(cg.reclaim(&s, 4096).is_err());
    }

    #[test]
    fn a_processes_cgroup_is_read_from_proc() {
        let v2 = "0::/user.slice/user-0.slice/session-1.scope\n";
        let v1 = "12:pids:/\n4:memory:/cannery-5\n3:cpu,cpuacct:/\n0::/init.scope\n";
        assert_eq!(
            process_cgroup(v2, Version::V2).as_deref(),
            Some("/user.slice/user-0.slice/session-1.scope")
        );
        assert_eq!(process_cgroup(v2, Version::V1), None);
        assert_eq!(
            process_cgroup(v1, Version::V1).as_deref(),
            Some("/cannery-5")
        );
        let (_d, s) = tree();
        fs::create_dir_all(s.path("proc/42")).unwrap();
        fs::write(s.path("proc/42/cgroup"), v1).unwrap();
        let cg = MemoryCgroup::of_process(&s, Version::V1, 42).unwrap();
        assert_eq!(cg.rel, "sys/fs/cgroup/memory/cannery-5");
        let root = MemoryCgroup::of_process(&s, Version::V2, 42).unwrap();
        assert_eq!(root.rel, "sys/fs/cgroup/init.scope");
    }
}
