//! Step 1 of capture: parse `/proc/PID/maps` (and the `VmFlags` lines of
//! `/proc/PID/smaps`) and decide which mappings hold pages zswap could see.
//!
//! Selected: private anonymous memory (`[heap]`, `[stack]`, unnamed and
//! `[anon:...]` private mappings) and, when asked, private file-backed mappings
//! (only their copy-on-write pages are taken later, by the page map step).
//! Skipped: shared mappings, special kernel mappings (`[vdso]`, `[vvar]`,
//! `[vsyscall]`, ...), inaccessible (`PROT_NONE`, guard) mappings, and
//! mappings flagged `dd` (`MADV_DONTDUMP`), `io` or `pf` (device memory).
//! This module only parses text; it never touches the target's memory.

#![forbid(unsafe_code)]

use serde::{Deserialize, Serialize};
use std::fmt;

/// Which kind of memory region a page came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum RegionKind {
    /// The `[heap]` (brk) area.
    Heap,
    /// The main thread's `[stack]`.
    Stack,
    /// Other private anonymous memory (mmap arenas, thread stacks, JIT heaps).
    Anon,
    /// A copy-on-write page of a private file mapping (e.g. a written `.data`).
    FilePrivate,
    /// Unknown origin (pages from a raw `.pages` file).
    Unknown,
}

impl RegionKind {
    /// The one-byte code used in snapshot page records.
    pub fn code(self) -> u8 {
        match self {
            RegionKind::Heap => 1,
            RegionKind::Stack => 2,
            RegionKind::Anon => 3,
            RegionKind::FilePrivate => 4,
            RegionKind::Unknown => 0,
        }
    }

    /// The region for a record code, or `None` if the code is not defined.
    pub fn from_code(code: u8) -> Option<RegionKind> {
        Some(match code {
            0 => RegionKind::Unknown,
            1 => RegionKind::Heap,
            2 => RegionKind::Stack,
            3 => RegionKind::Anon,
            4 => RegionKind::FilePrivate,
            _ => return None,
        })
    }

    /// A short lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            RegionKind::Heap => "heap",
            RegionKind::Stack => "stack",
            RegionKind::Anon => "anon",
            RegionKind::FilePrivate => "file-private",
            RegionKind::Unknown => "unknown",
        }
    }
}

impl fmt::Display for RegionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One line of `/proc/PID/maps`, plus its smaps `VmFlags`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// Readable.
    pub read: bool,
    /// Writable.
    pub write: bool,
    /// Private (copy-on-write) rather than shared.
    pub private: bool,
    /// Offset into the file, for file mappings.
    pub offset: u64,
    /// The inode, 0 for anonymous memory.
    pub inode: u64,
    /// The path or pseudo-name (`[heap]`), empty for anonymous memory.
    pub pathname: String,
    /// Two-letter `VmFlags` from smaps (e.g. `dd`), empty if unknown.
    pub vm_flags: Vec<String>,
}

/// Why a mapping was or was not selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// Take its resident private pages, labelled with this region kind.
    Take(RegionKind),
    /// Leave it out.
    Skip(SkipReason),
}

/// Why a mapping is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// Shared mapping (files, shared memory): not private anonymous memory.
    Shared,
    /// `[vdso]`, `[vvar]`, `[vsyscall]` and other kernel-provided mappings.
    Special,
    /// Not readable (`PROT_NONE`, guard regions).
    Inaccessible,
    /// Marked `MADV_DONTDUMP` (`dd`), or device memory (`io`, `pf`).
    DontDump,
    /// Private file mapping, not asked for.
    FileBacked,
}

impl Mapping {
    /// Number of 4 KiB pages covered.
    pub fn pages(&self) -> u64 {
        (self.end - self.start) / crate::PAGE_SIZE as u64
    }

    fn has_flag(&self, flag: &str) -> bool {
        self.vm_flags.iter().any(|f| f == flag)
    }

    /// Decide whether this mapping's pages are captured.
    pub fn select(&self, include_file_private: bool) -> Selection {
        let name = self.pathname.as_str();
        if name.starts_with('[') && !name.starts_with("[anon:") {
            match name {
                "[heap]" => {}
                "[stack]" => {}
                // Old kernels named thread stacks "[stack:TID]".
                n if n.starts_with("[stack:") => {}
                _ => return Selection::Skip(SkipReason::Special),
            }
        }
        if !self.read {
            return Selection::Skip(SkipReason::Inaccessible);
        }
        if self.has_flag("dd") || self.has_flag("io") || self.has_flag("pf") {
            return Selection::Skip(SkipReason::DontDump);
        }
        if !self.private {
            return Selection::Skip(SkipReason::Shared);
        }
        let kind = if name == "[heap]" {
            RegionKind::Heap
        } else if name.starts_with("[stack") {
            RegionKind::Stack
        } else if name.is_empty() || name.starts_with("[anon:") || self.inode == 0 {
            RegionKind::Anon
        } else {
            if !include_file_private {
                return Selection::Skip(SkipReason::FileBacked);
            }
            RegionKind::FilePrivate
        };
        Selection::Take(kind)
    }
}

/// Parse the text of `/proc/PID/maps`. Lines that do not parse are skipped
/// and counted in the second return value.
pub fn parse_maps(text: &str) -> (Vec<Mapping>, usize) {
    let mut out = Vec::new();
    let mut bad = 0;
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line) {
            Some(m) => out.push(m),
            None => bad += 1,
        }
    }
    (out, bad)
}

fn parse_line(line: &str) -> Option<Mapping> {
    // "start-end perms offset dev inode   pathname" (pathname may hold spaces).
    let mut rest = line;
    let mut fields = [""; 5];
    for f in fields.iter_mut() {
        rest = rest.trim_start_matches(' ');
        let end = rest.find(' ').unwrap_or(rest.len());
        *f = &rest[..end];
        rest = &rest[end..];
    }
    let pathname = rest.trim_start_matches(' ').to_string();
    let (s, e) = fields[0].split_once('-')?;
    let start = u64::from_str_radix(s, 16).ok()?;
    let end = u64::from_str_radix(e, 16).ok()?;
    let perms = fields[1].as_bytes();
    if perms.len() < 4 || end < start {
        return None;
    }
    Some(Mapping {
        start,
        end,
        read: perms[0] == b'r',
        write: perms[1] == b'w',
        private: perms[3] == b'p',
        offset: u64::from_str_radix(fields[2], 16).ok()?,
        inode: fields[4].parse().ok()?,
        pathname,
        vm_flags: Vec::new(),
    })
}

/// Attach `VmFlags` from the text of `/proc/PID/smaps` to `maps` (matched by
/// start address). Mappings not found in smaps keep empty flags.
pub fn apply_smaps_flags(maps: &mut [Mapping], smaps: &str) {
    let mut current: Option<u64> = None;
    for line in smaps.lines() {
        if let Some(flags) = line.strip_prefix("VmFlags:") {
            if let Some(start) = current {
                if let Ok(i) = maps.binary_search_by_key(&start, |m| m.start) {
                    maps[i].vm_flags = flags.split_whitespace().map(str::to_string).collect();
                }
            }
        } else if let Some(first) = line.split_whitespace().next() {
            if let Some((s, _)) = first.split_once('-') {
                if let Ok(start) = u64::from_str_radix(s, 16) {
                    current = Some(start);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0                          [heap]
7f1c2c000000-7f1c2c021000 rw-p 00000000 00:00 0 
7f1c30000000-7f1c30001000 ---p 00000000 00:00 0 
7f1c31000000-7f1c31002000 r--p 00002000 08:01 1234                       /usr/lib/x86_64-linux-gnu/libc.so.6
7f1c31002000-7f1c31003000 rw-p 00004000 08:01 1234                       /usr/lib/x86_64-linux-gnu/libc.so.6
7f1c32000000-7f1c32100000 rw-s 00000000 00:01 99                         /dev/zero (deleted)
7f1c33000000-7f1c33001000 rw-p 00000000 00:00 0                          [anon:my arena]
7ffd1a000000-7ffd1a021000 rw-p 00000000 00:00 0                          [stack]
7ffd1a1fe000-7ffd1a202000 r--p 00000000 00:00 0                          [vvar]
7ffd1a202000-7ffd1a204000 r-xp 00000000 00:00 0                          [vdso]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
garbage line
";

    #[test]
    fn parses_and_selects() {
        let (maps, bad) = parse_maps(MAPS);
        assert_eq!(bad, 1);
        assert_eq!(maps.len(), 11);
        let sel: Vec<Selection> = maps.iter().map(|m| m.select(false)).collect();
        use RegionKind::*;
        use Selection::*;
        use SkipReason::*;
        assert_eq!(
            sel,
            vec![
                Take(Heap),
                Take(Anon),
                Skip(Inaccessible),
                Skip(FileBacked),
                Skip(FileBacked),
                Skip(Shared),
                Take(Anon),
                Take(Stack),
                Skip(Special),
                Skip(Special),
                Skip(Special),
            ]
        );
        assert_eq!(maps[4].select(true), Take(FilePrivate));
        assert_eq!(maps[6].pathname, "[anon:my arena]");
        assert_eq!(maps[0].pages(), 0x21);
    }

    #[test]
    fn dontdump_flag_skips() {
        let (mut maps, _) = parse_maps(MAPS);
        let smaps = "7f1c2c000000-7f1c2c021000 rw-p 00000000 00:00 0 \nSize: 132 kB\nVmFlags: rd wr mr mw me dd ac \n";
        apply_smaps_flags(&mut maps, smaps);
        assert_eq!(maps[1].select(false), Selection::Skip(SkipReason::DontDump));
        assert_eq!(maps[0].select(false), Selection::Take(RegionKind::Heap));
    }
}
