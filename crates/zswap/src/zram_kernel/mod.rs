//! The real kernel's zram in the loop: the engine of `cannery
//! zram-kernel`. A zram device of our own (`hot_add`, journaled by the
//! restore guard, `hot_remove`d on every exit) is used as a block device:
//! for each workload and compressor, with and without the workload's
//! dictionary (`algorithm_params`, Linux 6.12+), the pages are written with
//! O_DIRECT 4 KiB writes, `mm_stat` is read, and every page is read back,
//! compared byte for byte and timed. No swap is involved and no other
//! process's memory is touched.
//!
//! - `cannery_machine::zram`: the sysfs files and the O_DIRECT page I/O.
//! - [`session`]: what is missing ([`preflight`]), the loop, one measurement.
//! - [`compare`]: `--compare`, every way of compressing the same pages;
//!   [`comparison`] reads its inputs and renders the report with it.
//! - [`model`]: zram's accounting modelled (same-filled pages, huge pages,
//!   zsmalloc), set beside each measurement it has a compressor for.
//! - [`report`]: the serializable report, its text and markdown tables.
//! - [`workloads`]: which pages of which workloads are written.

pub mod compare;
pub mod comparison;
pub mod model;
pub mod report;
pub mod session;
pub mod workloads;

pub use model::{predict, ZramPrediction};
pub use report::{ZramReport, ZramRow};
pub use session::{
    preflight, run_session, Variant, ZramOptions, ZramWorkload, DICTIONARY_COMPRESSORS,
    LZ4_DICT_MAX,
};
pub use workloads::{choose_workloads, ChooseError, Chosen};

pub use crate::kernel::Need;

/// Why a zram measurement could not run or finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ZramError {
    /// Prerequisites are missing; each says how to provide it.
    #[error("{}", render_needs(.0))]
    Missing(Vec<Need>),
    /// Another run owns the machine, or a dead run's changes wait for
    /// `cannery restore`.
    #[error("{0}")]
    Journal(#[from] cannery_machine::JournalError),
    /// SIGINT/SIGTERM (or the caller's stop request) arrived.
    #[error("interrupted")]
    Interrupted,
    /// A system call or file failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
}

impl ZramError {
    /// A closure turning an `io::Error` into [`ZramError::Io`] about `what`.
    pub fn io(what: impl Into<String>) -> impl Fn(std::io::Error) -> ZramError {
        let what = what.into();
        move |source| ZramError::Io {
            what: what.clone(),
            source,
        }
    }
}

/// The needs as lines: what, then the fix indented.
pub fn render_needs(needs: &[Need]) -> String {
    crate::kernel::session::render_needs(needs).replacen(
        "the kernel's zswap",
        "the kernel's zram",
        1,
    )
}
