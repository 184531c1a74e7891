//! Everything cannery changes on a machine, in one place: the restore
//! guard ([`Restore`]) through which every change goes, the write-ahead
//! [`journal`] that lets `cannery restore` undo a run that was killed
//! outright, and the kernel interfaces those changes touch, each read
//! below a [`System`] root so the parsing is tested on fake trees.
//!
//! - [`system`]: the root, swap areas, mounts, bounded reads.
//! - [`cgroup`]: memory cgroups v1 and v2 (find, create, read, reclaim).
//! - [`reclaim`]: the reclaim step (v1 limit stepping, v2 `memory.reclaim`).
//! - [`setup`]: shared preflight needs and `--setup` (swap file, zswap).
//! - [`zswap`]: zswap's parameters and debugfs counters, `/proc/crypto`.
//! - [`zram`]: a zram device's sysfs files (`comp_algorithm`, `mm_stat`)
//!   and O_DIRECT page I/O on `/dev/zramN`.
//! - [`guard`]: [`Restore`] and [`restore_stale`].
//! - [`journal`]: the record under `/run/cannery` (and its copy under
//!   `/var/lib/cannery`, which names swap files across a reboot).
//!
//! Users: `cannery zswap-kernel --setup` (cannery-zswap), the cold-page
//! capture (`capture --cold reclaim:…`) and `cannery zram-kernel`.
//!
//! The readers take the kernel's text, so they work on any machine:
//!
//! ```
//! // /sys/block/zram0/comp_algorithm and mm_stat, as Linux 6.x prints them.
//! let (names, selected) = cannery_machine::parse_comp_algorithm("lzo [lzo-rle] lz4\n");
//! assert_eq!((names.len(), selected.as_deref()), (3, Some("lzo-rle")));
//! let mm = cannery_machine::parse_mm_stat("16384 5120 8192 0 8192 1 0 0 0\n")?;
//! assert_eq!((mm.orig_data_size, mm.mem_used_total, mm.same_pages), (16384, 8192, 1));
//! # Ok::<(), std::io::Error>(())
//! ```

#![warn(missing_docs)]

pub mod cgroup;
pub mod guard;
pub mod journal;
pub mod reclaim;
pub mod setup;
pub mod system;
pub mod zram;
pub mod zswap;

pub use guard::{restore_stale, Restore};
pub use journal::{Change, JournalError, Record, Restored};
pub use setup::{render_needs, Need};
pub use system::{parse_swaps, SwapArea, System};
pub use zram::{parse_comp_algorithm, parse_mm_stat, MmStat, PageIo};
pub use zswap::{Counters, PAGE_CLUSTER, PARAMETERS};
