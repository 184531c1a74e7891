//! The one compressor interface: [`Engine`], what an engine can do
//! ([`Capabilities`]), and why a job failed ([`EngineError`]). Every
//! compressor of the workspace is an engine: cannery's own codec
//! (`backend::software`), the reference deflate libraries, QPL, QATzip and
//! the peers (zstd, lz4, the kernel's). The validation matrix, the batch
//! path, bench and evaluation all run engines through this trait.
//!
//! An engine compresses one page at a time (a [`Job`]) in a [`Mode`] (canned with a
//! table); a stream is raw deflate for fixed and dynamic, IAA wire format
//! for canned, or the peer's own format for a peer (whose one mode is
//! dynamic: codes of its choosing). Outputs of 4096 bytes or more are
//! [`Outcome::Incompressible`].

use serde::Serialize;

use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::decode::DecodeError;
use cannery_codec::encode::{EncodeError, Outcome};
use cannery_codec::mode::Mode;
use cannery_codec::table::rules::Rule;
use cannery_codec::table::{Alphabet, Table};

/// Which engine ran a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExecPath {
    /// A CPU implementation.
    Software,
    /// An accelerator (IAA through QPL, or QAT).
    Hardware,
}

impl ExecPath {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            ExecPath::Software => "software",
            ExecPath::Hardware => "hardware",
        }
    }
}

/// What a backend can do.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// The engine's lower-case name, as on the command line.
    #[serde(skip)]
    pub name: &'static str,
    /// Modes it can compress in (its own streams).
    #[serde(serialize_with = "mode_names")]
    pub compress: Vec<Mode>,
    /// Modes whose streams it can decompress.
    #[serde(serialize_with = "mode_names")]
    pub decompress: Vec<Mode>,
    /// Which engine runs its jobs.
    pub path: ExecPath,
    /// Why it runs on that path (e.g. why hardware is not used), if worth saying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_note: Option<String>,
    /// The table rules its canned compression needs ([`cannery_codec::table::rules`]).
    pub canned_compress_rules: &'static [Rule],
    /// The table rules its canned decompression needs.
    pub canned_decompress_rules: &'static [Rule],
}

fn mode_names<S: serde::Serializer>(modes: &[Mode], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(modes.iter().map(|m| m.name()))
}

impl Capabilities {
    /// Every mode both ways, on the software path, with no table rules:
    /// what an engine declares that checks nothing itself (test engines).
    pub fn unchecked() -> &'static Capabilities {
        static ANY: std::sync::LazyLock<Capabilities> = std::sync::LazyLock::new(|| Capabilities {
            name: "unchecked",
            compress: ALL_MODES.to_vec(),
            decompress: ALL_MODES.to_vec(),
            path: ExecPath::Software,
            path_note: None,
            canned_compress_rules: &[],
            canned_decompress_rules: &[],
        });
        &ANY
    }

    /// True if it compresses in `mode`.
    pub fn can_compress(&self, mode: Mode) -> bool {
        self.compress.contains(&mode)
    }

    /// True if it decompresses `mode` streams.
    pub fn can_decompress(&self, mode: Mode) -> bool {
        self.decompress.contains(&mode)
    }

    /// `Ok` if it can compress canned pages with `table`, else which rule
    /// the table breaks and why (`"rule: reason"`).
    pub fn canned_compress_check(&self, table: &Table) -> Result<(), String> {
        first_broken(self.canned_compress_rules, table)
    }

    /// `Ok` if it can decompress canned streams of `table`, else which rule
    /// the table breaks and why.
    pub fn canned_decompress_check(&self, table: &Table) -> Result<(), String> {
        first_broken(self.canned_decompress_rules, table)
    }

    /// `Ok` if it compresses in `mode`, else the `Unsupported` error naming
    /// `backend`: the one compression-mode check every backend makes.
    pub fn check_compress(&self, backend: &'static str, mode: Mode) -> Result<(), EngineError> {
        if self.can_compress(mode) {
            Ok(())
        } else {
            Err(EngineError::Unsupported {
                backend,
                direction: Direction::Compress,
                mode,
            })
        }
    }
}

fn first_broken(rules: &[Rule], table: &Table) -> Result<(), String> {
    rules
        .iter()
        .find_map(|r| r.check(table).err().map(|e| format!("{r}: {e}")))
        .map_or(Ok(()), Err)
}

/// Compression or decompression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Compression.
    Compress,
    /// Decompression.
    Decompress,
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Direction::Compress => "compress",
            Direction::Decompress => "decompress",
        })
    }
}

/// Why a backend job failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The backend cannot do this at all.
    #[error("{backend} cannot {direction} in {mode} mode")]
    Unsupported {
        /// Engine name.
        backend: &'static str,
        /// The direction asked for.
        direction: Direction,
        /// The mode asked for.
        mode: Mode,
    },
    /// Canned mode without a table.
    #[error("canned mode needs a table")]
    TableRequired,
    /// The table's implied header is not standard deflate, so engines that
    /// read standard deflate cannot be given a canned stream of it.
    #[error(
        "table {table_id} has incomplete codes, so header + canned body is not standard deflate"
    )]
    TableNotStandard {
        /// The table's id.
        table_id: String,
    },
    /// The page is larger than 4096 bytes.
    #[error("input is {len} bytes; a page is at most 4096")]
    InputTooLarge {
        /// Its length.
        len: usize,
    },
    /// Our encoder refused.
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// Our decoder refused.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A reference library (zlib, libdeflate, miniz_oxide) refused a stream.
    #[error("{backend} rejected the stream: {message}")]
    Rejected {
        /// Engine name.
        backend: &'static str,
        /// The library's own words.
        message: String,
    },
    /// Decompressed output would exceed the caller's buffer.
    #[error("{backend}: output would exceed the limit of {limit} bytes")]
    OutputLimit {
        /// Engine name.
        backend: &'static str,
        /// The limit.
        limit: usize,
    },
    /// A QPL call returned an error status.
    #[error("qpl {call} failed with status {code} ({name}: {text})")]
    Qpl {
        /// The C function.
        call: &'static str,
        /// The numeric status.
        code: u32,
        /// The status's C name.
        name: &'static str,
        /// What QPL says it means.
        text: &'static str,
    },
    /// QPL built a table with other code lengths than ours.
    #[error(
        "qpl changed the table: {alphabet} symbol {symbol} has length {qpl} in qpl's table, \
         {ours} in ours{hint}"
    )]
    QplTableChanged {
        /// Alphabet of the first difference.
        alphabet: Alphabet,
        /// Symbol of the first difference.
        symbol: usize,
        /// Our length.
        ours: u8,
        /// QPL's length.
        qpl: u8,
        /// A likely reason, e.g. the 56-bit rule.
        hint: String,
    },
    /// A QATzip call returned an error.
    #[error("qatzip {call} failed with {code} ({name})")]
    Qat {
        /// The C function.
        call: &'static str,
        /// The return code.
        code: i32,
        /// Its C name.
        name: &'static str,
    },
    /// No backend has this name.
    #[error("no backend named {name:?} (known: {known})")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names this build knows.
        known: String,
    },
    /// The backend could not be opened.
    #[error("{backend} is not available: {reason}")]
    Unavailable {
        /// Engine name.
        backend: &'static str,
        /// Why.
        reason: String,
    },
}

/// One unit of an engine's work: a page to compress or a stream to
/// decompress, in `mode`, with `table` in canned mode (ignored otherwise).
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    /// The mode the page is compressed in, or the stream was written in.
    pub mode: Mode,
    /// The canned table, if any.
    pub table: Option<&'a Table>,
    /// The page (at most [`PAGE_SIZE`] bytes) or the stream.
    pub data: &'a [u8],
}

/// An engine that compresses and/or decompresses 4 KiB pages.
///
/// An engine implements [`Engine::capabilities`] (its name among them),
/// [`Engine::compress_job`] and [`Engine::decompress_job`]; callers use
/// [`Engine::compress`] and [`Engine::decompress`], which make the checks
/// every engine needs (the page's size, the mode) in one place. Backends
/// cache whatever they derive from a job's table, so passing the same
/// table page after page is cheap.
pub trait Engine {
    /// What it can do, its name, and on which path.
    fn capabilities(&self) -> &Capabilities;

    /// Compresses `job.data`, a page that [`Engine::compress`] checked, into
    /// `out` (cleared first).
    fn compress_job(&mut self, job: Job<'_>, out: &mut Vec<u8>) -> Result<Outcome, EngineError>;

    /// Decompresses the stream `job.data` into `out`, whose length is the
    /// limit; returns the bytes produced.
    fn decompress_job(&mut self, job: Job<'_>, out: &mut [u8]) -> Result<usize, EngineError>;

    /// Lower-case name, as on the command line.
    fn name(&self) -> &'static str {
        self.capabilities().name
    }

    /// Compresses one page into `out` (cleared first), after checking its
    /// size and that the engine compresses in `mode`. On
    /// [`Outcome::Incompressible`] the contents of `out` are unspecified.
    fn compress(
        &mut self,
        mode: Mode,
        table: Option<&Table>,
        page: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Outcome, EngineError> {
        check_page(page)?;
        self.capabilities().check_compress(self.name(), mode)?;
        let job = Job {
            mode,
            table,
            data: page,
        };
        self.compress_job(job, out)
    }

    /// Decompresses one stream into `out`, whose length is the limit;
    /// returns the bytes produced.
    fn decompress(
        &mut self,
        mode: Mode,
        table: Option<&Table>,
        stream: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EngineError> {
        let job = Job {
            mode,
            table,
            data: stream,
        };
        self.decompress_job(job, out)
    }

    /// The path the last job ran on (the capabilities' path unless the
    /// backend can switch per job).
    fn last_path(&self) -> ExecPath {
        self.capabilities().path
    }
}

/// The outcome of a reference compressor's output under zswap's rule.
#[cfg_attr(not(feature = "reference"), allow(dead_code))]
pub(crate) fn outcome_of(out: &[u8]) -> Outcome {
    if out.len() >= PAGE_SIZE {
        Outcome::Incompressible
    } else {
        Outcome::Compressed(out.len())
    }
}

/// Checks a page's size before compressing it.
pub(crate) fn check_page(page: &[u8]) -> Result<(), EngineError> {
    if page.len() > PAGE_SIZE {
        Err(EngineError::InputTooLarge { len: page.len() })
    } else {
        Ok(())
    }
}

/// Standard-deflate decompression modes: what reference inflaters read.
pub(crate) const ALL_MODES: [Mode; 3] = [Mode::Fixed, Mode::Dynamic, Mode::Canned];
