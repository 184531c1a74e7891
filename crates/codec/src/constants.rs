//! Deflate (RFC 1951) alphabet sizes and the limits of IAA canned mode.
//!
//! Only numbers live here; the tables that map lengths and distances to
//! symbols are in [`crate::token`].

/// Size of a memory page: the unit zswap compresses (4096). Defined once,
/// here; page-capture re-exports it as `cannery_capture::PAGE_SIZE`.
pub const PAGE_SIZE: usize = 4096;

/// Largest match distance IAA supports (its history window).
pub const WINDOW_SIZE: usize = 4096;

/// Literal/length symbols a canned table codes: 0..=285 (286 and 287 never occur).
pub const NUM_LITLEN: usize = 286;

/// Distance symbols a canned table codes: 0..=29 (30 and 31 never occur).
pub const NUM_DIST: usize = 30;

/// Literal/length plus distance symbols: the size of a table's length vector.
pub const NUM_SYMBOLS: usize = NUM_LITLEN + NUM_DIST;

/// The end-of-block symbol.
pub const END_OF_BLOCK: u16 = 256;

/// Longest Huffman code deflate (and the kernel's 4-bit length field) allows.
pub const MAX_CODE_LEN: u8 = 15;

/// Symbols of the code-length alphabet used in dynamic block headers.
pub const NUM_CODE_LEN_SYMBOLS: usize = 19;

/// Longest code of the code-length alphabet.
pub const MAX_CODE_LEN_CODE_LEN: u8 = 7;

/// Order in which code-length code lengths are sent (RFC 1951 §3.2.7).
pub const CODE_LEN_ORDER: [usize; NUM_CODE_LEN_SYMBOLS] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// Shortest match.
pub const MIN_MATCH: usize = 3;

/// Longest match.
pub const MAX_MATCH: usize = 258;

/// Distance symbols a 4 KiB window can use (0..=23); IAA requires all of them coded.
pub const NUM_DIST_4K: usize = 24;

/// The 10 bits of an empty final fixed block (BFINAL=1, BTYPE=01, fixed
/// end-of-block 0000000), LSB-first: what QPL's software path writes after a
/// canned stream's end-of-block code.
pub const QPL_SW_TAIL: (u32, u32) = (0b00_0000_0011, 10);
