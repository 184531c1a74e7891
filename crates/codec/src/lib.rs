//! cannery-codec: IAA canned deflate for 4 KiB pages, in software.
//!
//! The data flows through the modules in this order:
//! [`lz77`] finds matches within one page and yields [`token::Token`]s;
//! [`table`] holds code lengths and their canonical codes (and the implied
//! dynamic block header); [`encode`] turns tokens into fixed, dynamic or
//! canned streams; [`decode`] turns streams back into bytes or tokens.
//! [`huffman`] builds optimal length-limited codes from symbol counts, for
//! dynamic blocks, block headers and the trainer.
//!
//! [`backend`] puts this codec, reference inflaters and (behind the `qpl`
//! and `qat` features) Intel QPL and QATzip behind one trait.
//!
//! [`tabular`] lays out every report table of the workspace as text or
//! markdown, and [`units`] formats the sizes and times in them.
//!
//! The crate does not read corpora or train tables. Unsafe code is denied
//! everywhere except the QPL and QATzip FFI modules and the canned
//! decoder's fast loop (`decode/fast.rs`, checked against the safe
//! reference loop by tests, a fuzz target and Miri).

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod backend;
pub mod batch;
pub mod bitio;
pub mod constants;
pub mod decode;
pub mod encode;
pub mod figures;
pub mod huffman;
pub mod lz77;
pub mod mode;
#[cfg(feature = "reference")]
pub mod peer;
pub mod records;
pub mod rng;
pub mod table;
pub mod tabular;
pub mod timestamp;
pub mod token;
pub mod transcode;
pub mod units;

pub use backend::{Backend, BackendError, Capabilities, ExecPath};
pub use batch::{
    BatchCompressor, BatchDecompressor, BatchError, PageCompressor, PageDecompressor, UnitStatus,
};
pub use decode::Decoder;
pub use decode::{CannedDecoder, DecodeError};
pub use encode::{EncodeError, Encoder, Outcome};
pub use lz77::Level;
pub use mode::{Format, Mode};
pub use table::{CodeLengths, Table, TableError};
pub use token::Token;
