//! The real kernel's zswap in the loop: the engine of `cannery
//! zswap-kernel`. Pages of a corpus are put in this process's memory,
//! pushed out through the running kernel's zswap with `MADV_PAGEOUT` (the
//! method of Intel's IAA/zswap study), counted with zswap's debugfs
//! counters, faulted back in and verified; the simulator's prediction for
//! the same pages is set beside it.
//!
//! - `cannery_machine`: reading zswap's parameters, debugfs counters,
//!   `/proc/crypto`, `/proc/swaps` (below a root, so tests use a fake
//!   tree), and the restore guard through which every setting changed is
//!   put back (and journaled for `cannery restore`).
//! - [`measure`](mod@measure): one measurement, and the simulator's [`measure::predict`].
//! - [`session`]: what is missing ([`session::preflight`]), the setup, and
//!   the loop over compressors and workloads.
//! - [`report`]: the serializable report and its text table.
//! - [`workloads`]: which pages of which workloads are pushed out.
//!
//! It needs root, zswap in the kernel, debugfs and swap space; what is
//! missing is reported with the command that provides it. It never touches
//! another process's memory.

pub mod measure;
pub mod report;
pub mod session;
pub mod workloads;

pub use cannery_machine::Restore;
pub use cannery_machine::{Counters, System};
pub use measure::{measure, predict, Measurement, Prediction, SameFilledRule};
pub use report::{KernelReport, KernelRow};
pub use session::{preflight, run_session, Need, SessionOptions, SessionWorkload};
pub use workloads::{read_workloads, WorkloadsError};

/// Why a kernel measurement could not run or finish.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KernelError {
    /// Prerequisites are missing; each says how to provide it.
    #[error("{}", session::render_needs(.0))]
    Missing(Vec<Need>),
    /// zswap's counters moved while we were idle.
    #[error("{0}")]
    Busy(String),
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
    /// The simulator could not predict.
    #[error("simulator: {0}")]
    Model(String),
}

impl KernelError {
    /// A closure turning an `io::Error` into [`KernelError::Io`] about `what`.
    pub fn io(what: &str) -> impl Fn(std::io::Error) -> KernelError + '_ {
        move |source| KernelError::Io {
            what: what.to_string(),
            source,
        }
    }
}
