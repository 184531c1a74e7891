//! zram's interfaces: a device's sysfs files under `/sys/block/zramN/`
//! (`comp_algorithm` with the selected one in brackets, `mm_stat`,
//! whether `algorithm_params` exists), `/sys/class/zram-control`, and page
//! I/O on `/dev/zramN` with O_DIRECT 4 KiB writes and reads from an
//! aligned buffer. Adding and removing a device goes through
//! [`crate::Restore::add_zram_device`], which journals it; the files of a
//! device of our own are then written directly (removing the device undoes
//! them all, and `algorithm_params` cannot be read back anyway).

use std::fs;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::system::System;

/// The zram control directory (`hot_add`, `hot_remove`), below the root.
pub const ZRAM_CONTROL: &str = "sys/class/zram-control";
/// The size of a page, of every write and read.
pub const PAGE: usize = 4096;

/// A device's sysfs directory below the root, `sys/block/zramN`.
pub fn device_dir(id: u32) -> String {
    format!("sys/block/zram{id}")
}

/// The compressors of a `comp_algorithm` file and the selected one (the
/// name in brackets): `"[lzo-rle] lzo lz4"` → (`[lzo-rle, lzo, lz4]`,
/// `Some("lzo-rle")`).
pub fn parse_comp_algorithm(text: &str) -> (Vec<String>, Option<String>) {
    let mut names = Vec::new();
    let mut selected = None;
    for word in text.split_whitespace() {
        match word.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            Some(name) => {
                selected = Some(name.to_string());
                names.push(name.to_string());
            }
            None => names.push(word.to_string()),
        }
    }
    (names, selected)
}

/// A device's `mm_stat` (Documentation/admin-guide/blockdev/zram.rst):
/// sizes in bytes, counts in pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MmStat {
    /// Uncompressed size of the data stored (same-filled pages included).
    pub orig_data_size: u64,
    /// Compressed size of the data stored (a huge page counts 4096).
    pub compr_data_size: u64,
    /// Memory the allocator (zsmalloc) holds, in whole pages.
    pub mem_used_total: u64,
    /// The memory limit (0: none).
    pub mem_limit: u64,
    /// The most `mem_used_total` has been.
    pub mem_used_max: u64,
    /// Pages stored as their fill value only.
    pub same_pages: u64,
    /// Pages freed by compaction.
    pub pages_compacted: u64,
    /// Pages stored uncompressed (they did not compress below the huge size).
    pub huge_pages: u64,
    /// Huge pages since the device was set up (absent before Linux 5.15).
    pub huge_pages_since: Option<u64>,
}

/// Parses `mm_stat`: at least the eight fields every kernel since 4.19
/// writes; a ninth (`huge_pages_since`) when present.
pub fn parse_mm_stat(text: &str) -> io::Result<MmStat> {
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("mm_stat {text:?}: expected 8 or 9 numbers"),
        )
    };
    let v: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse::<u64>().map_err(|_| bad()))
        .collect::<io::Result<_>>()?;
    if !(8..=9).contains(&v.len()) {
        return Err(bad());
    }
    Ok(MmStat {
        orig_data_size: v[0],
        compr_data_size: v[1],
        mem_used_total: v[2],
        mem_limit: v[3],
        mem_used_max: v[4],
        same_pages: v[5],
        pages_compacted: v[6],
        huge_pages: v[7],
        huge_pages_since: v.get(8).copied(),
    })
}

impl System {
    /// True when the kernel has zram with hot-add (`/sys/class/zram-control`).
    pub fn has_zram_control(&self) -> bool {
        self.path(ZRAM_CONTROL).is_dir()
    }

    /// The zram devices that exist (`sys/block/zramN`), ascending.
    pub fn zram_devices(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = fs::read_dir(self.path("sys/block"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_prefix("zram")?.parse().ok())
            .collect();
        ids.sort_unstable();
        ids
    }

    /// A device's compressors and the selected one (`comp_algorithm`).
    pub fn zram_algorithms(&self, id: u32) -> io::Result<(Vec<String>, Option<String>)> {
        Ok(parse_comp_algorithm(
            &self.read(&format!("{}/comp_algorithm", device_dir(id)))?,
        ))
    }

    /// True when the device takes `algorithm_params` (Linux 6.12 and later:
    /// compression level and dictionary).
    pub fn zram_has_algorithm_params(&self, id: u32) -> bool {
        self.path(&format!("{}/algorithm_params", device_dir(id)))
            .exists()
    }

    /// A device's `mm_stat`.
    pub fn zram_mm_stat(&self, id: u32) -> io::Result<MmStat> {
        parse_mm_stat(&self.read(&format!("{}/mm_stat", device_dir(id)))?)
    }

    /// Writes `value` to a file of a device of our own (`reset`,
    /// `comp_algorithm`, `algorithm_params`, `disksize`); the error names
    /// the file and the value.
    pub fn zram_write(&self, id: u32, file: &str, value: &str) -> io::Result<()> {
        let rel = format!("{}/{file}", device_dir(id));
        fs::write(self.path(&rel), value)
            .map_err(|e| io::Error::new(e.kind(), format!("cannot write {value:?} to /{rel}: {e}")))
    }

    /// The device node `/dev/zramN` below the root.
    pub fn zram_node(&self, id: u32) -> PathBuf {
        self.path(&format!("dev/zram{id}"))
    }
}

/// A zram device opened for O_DIRECT page I/O, with one page-aligned page
/// buffer (O_DIRECT needs the buffer, the offset and the length aligned).
pub struct PageIo {
    file: fs::File,
    buf: Vec<u8>,
    at: usize,
}

impl PageIo {
    /// Opens `/dev/zramN` for reading and writing with O_DIRECT, waiting
    /// up to `wait` for the node to appear (devtmpfs or udev makes it just
    /// after `hot_add`).
    pub fn open(system: &System, id: u32, wait: Duration) -> io::Result<PageIo> {
        let node = system.zram_node(id);
        let deadline = Instant::now() + wait;
        let file = loop {
            match fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_DIRECT)
                .open(&node)
            {
                Ok(f) => break f,
                Err(e) if e.kind() == io::ErrorKind::NotFound && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot open {} with O_DIRECT: {e}", node.display()),
                    ))
                }
            }
        };
        let buf = vec![0u8; 2 * PAGE];
        let at = buf.as_ptr().align_offset(PAGE);
        Ok(PageIo { file, buf, at })
    }

    /// Writes `page` (4096 bytes) as page `index` of the device.
    pub fn write_page(&mut self, index: u64, page: &[u8]) -> io::Result<()> {
        let b = &mut self.buf[self.at..self.at + PAGE];
        b.copy_from_slice(page);
        self.file.write_all_at(b, index * PAGE as u64)
    }

    /// Reads page `index` of the device; the page is returned from the
    /// aligned buffer.
    pub fn read_page(&mut self, index: u64) -> io::Result<&[u8]> {
        let b = &mut self.buf[self.at..self.at + PAGE];
        self.file.read_exact_at(b, index * PAGE as u64)?;
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selected_compressor_is_the_one_in_brackets() {
        let (names, sel) = parse_comp_algorithm("[lzo-rle] lzo lz4 \n");
        assert_eq!(names, ["lzo-rle", "lzo", "lz4"]);
        assert_eq!(sel.as_deref(), Some("lzo-rle"));
        let (names, sel) = parse_comp_algorithm("lzo lzo-rle lz4 lz4hc [zstd] deflate 842");
        assert_eq!(names.len(), 7);
        assert_eq!(sel.as_deref(), Some("zstd"));
        assert_eq!(parse_comp_algorithm(""), (vec![], None));
    }

    #[test]
    fn mm_stat_has_eight_or_nine_fields() {
        let s = parse_mm_stat(
            "  9318400  3868801  4030464        0  4030464      112        0      203        5\n",
        )
        .unwrap();
        assert_eq!(s.orig_data_size, 9_318_400);
        assert_eq!(s.compr_data_size, 3_868_801);
        assert_eq!(s.mem_used_total, 4_030_464);
        assert_eq!(s.same_pages, 112);
        assert_eq!(s.huge_pages, 203);
        assert_eq!(s.huge_pages_since, Some(5));
        let old = parse_mm_stat("1 2 3 4 5 6 7 8").unwrap();
        assert_eq!((old.huge_pages, old.huge_pages_since), (8, None));
        for bad in ["", "1 2 3", "1 2 3 4 5 6 7 x", "1 2 3 4 5 6 7 8 9 10"] {
            assert!(parse_mm_stat(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_fake_tree_is_read() {
        let d = tempfile::tempdir().unwrap();
        let s = System::at(d.path());
        assert!(!s.has_zram_control());
        assert!(s.zram_devices().is_empty());
        fs::create_dir_all(s.path(ZRAM_CONTROL)).unwrap();
        for id in [3, 0, 12] {
            fs::create_dir_all(s.path(&device_dir(id))).unwrap();
        }
        fs::create_dir_all(s.path("sys/block/loop0")).unwrap();
        assert!(s.has_zram_control());
        assert_eq!(s.zram_devices(), [0, 3, 12]);
        fs::write(s.path("sys/block/zram3/comp_algorithm"), "lzo [lz4] zstd\n").unwrap();
        fs::write(
            s.path("sys/block/zram3/mm_stat"),
            "4096 100 8192 0 8192 0 0 0 0\n",
        )
        .unwrap();
        assert_eq!(s.zram_algorithms(3).unwrap().1.as_deref(), Some("lz4"));
        assert_eq!(s.zram_mm_stat(3).unwrap().compr_data_size, 100);
        assert!(!s.zram_has_algorithm_params(3));
        fs::write(s.path("sys/block/zram3/algorithm_params"), "").unwrap();
        assert!(s.zram_has_algorithm_params(3));
        s.zram_write(3, "disksize", "4096").unwrap();
        assert_eq!(s.read("sys/block/zram3/disksize").unwrap(), "4096");
        let e = s.zram_write(7, "reset", "1").unwrap_err();
        assert!(e.to_string().contains("/sys/block/zram7/reset"), "{e}");
    }

    #[test]
    fn a_device_is_reset_then_removed_after_what_came_later() {
        use crate::guard::{Restore, ZRAM_HOT_ADD, ZRAM_HOT_REMOVE};
        let d = tempfile::tempdir().unwrap();
        let s = System::at(d.path());
        fs::create_dir_all(s.path(ZRAM_CONTROL)).unwrap();
        fs::write(s.path(ZRAM_HOT_ADD), "4\n").unwrap();
        fs::write(s.path(ZRAM_HOT_REMOVE), "").unwrap();
        fs::create_dir_all(s.path(&device_dir(4))).unwrap();
        fs::write(s.path("setting"), "old").unwrap();
        let mut g = Restore::begin(&s, "zram-kernel").unwrap();
        let id = g.add_zram_device().unwrap();
        g.set("setting", "new").unwrap();
        // Oldest first in the journal, so undone newest first: the
        // setting goes back before the device is reset and removed.
        let plan = g.describe();
        assert!(plan[0].contains("zram4"), "{plan:?}");
        assert!(plan[1].contains("setting"), "{plan:?}");
        // The files of a device of our own are written directly.
        s.zram_write(id, "comp_algorithm", "lz4").unwrap();
        assert!(g.restore().is_empty());
        assert_eq!(s.read("setting").unwrap(), "old");
        assert_eq!(s.read(&format!("{}/reset", device_dir(4))).unwrap(), "1");
        assert_eq!(s.read(ZRAM_HOT_REMOVE).unwrap(), "4");
        assert!(g.describe().is_empty());
    }
}
