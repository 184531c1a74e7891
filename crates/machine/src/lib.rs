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

#![warn(missing_docs)]

pub mod cgroup;
pub mod guard;
pub mod journal;
pub mod reclaim;
pub mod setup;
pub mod system;
pub mod zram;
pub mod zswap;

pub use guard::{restore_stale, Restore, Restored};
pub use journal::{Change, JournalError, Record};
pub use setup::{render_needs, Need};
pub use system::{parse_swaps, SwapArea, System};
pub use zram::{parse_comp_algorithm, parse_mm_stat, MmStat, PageIo};
pub use zswap::{Counters, PAGE_CLUSTER, PARAMETERS};
