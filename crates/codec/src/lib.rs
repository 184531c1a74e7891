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
//! The crate does not read corpora, train tables, call other compressors
//! (those are `cannery-engines`') or format reports (`cannery-lab`), and
//! has no FFI. Unsafe code
//! is denied everywhere except the canned decoder's fast loop
//! (`decode/fast.rs`, checked against the safe reference loop by tests, a
//! fuzz target and Miri).
//!
//! A page through the kernel's 2024 canned table and back:
//!
//! ```
//! use cannery_codec::{Decoder, Encoder, Format, Level, Mode, Outcome, Table};
//!
//! let table = Table::kernel_2024();
//! let page: Vec<u8> = (0..4096u32).map(|i| (i / 64) as u8).collect();
//! let mut encoder = Encoder::new(Mode::Canned, Format::Iaa, Level::Fast, Some(&table))?;
//! let mut stream = Vec::new();
//! let Outcome::Compressed(n) = encoder.compress(&page, &mut stream)? else {
//!     panic!("this page compresses");
//! };
//! assert!(n < 4096 / 4);
//! let decoder = Decoder::new(Mode::Canned, Format::Iaa, Some(&table)).unwrap();
//! let mut back = vec![0u8; 4096];
//! assert_eq!(decoder.decompress(&stream, &mut back)?, 4096);
//! assert_eq!(back, page);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]
#![deny(unsafe_code)]

pub mod bitio;
pub mod constants;
pub mod decode;
pub mod encode;
pub mod huffman;
pub mod lz77;
pub mod mode;
pub mod records;
pub mod rng;
pub mod table;
pub mod timestamp;
pub mod token;
pub mod transcode;

pub use decode::Decoder;
pub use decode::{CannedDecoder, DecodeError};
pub use encode::{EncodeError, Encoder, Outcome};
pub use lz77::Level;
pub use mode::{Format, Mode};
pub use table::{CodeLengths, Table, TableError};
pub use token::Token;
