//! ISA-L itself (feature `isal`, Debian's libisal-dev), through the C shim
//! in native/isal_shim.c, which keeps ISA-L's structures on the C side:
//! - [`compressor_counts`]: the symbols ISA-L's level-0 compressor emits
//!   for a page (compressed with the fixed code, decoded back to tokens).
//!   Its parse does not depend on the table (tests/isal_target.rs), and
//!   `isal_update_histogram` parses differently (it agreed with the
//!   compressor on 20 of 200 corpus pages), so this is what a table for
//!   ISA-L's compressor is trained on;
//! - [`update_histogram`]: `isal_update_histogram` on one page (ISA-L's own
//!   training workflow, for ISA-L's own table; one end-of-block per call);
//! - [`Hufftables::trained`]: ISA-L's own table for counts
//!   (`isal_create_hufftables`);
//! - [`Hufftables::exported`]: a cannery table in ISA-L's form, from exactly
//!   the field values the exported C initializer holds ([`IsalTables`]);
//! - [`Hufftables::compressed_bits`]: one page compressed by
//!   `isal_deflate_stateless` at level 0 with the table: the body's bits.
//!
//! It does not decompress (every other inflater does) and does not judge
//! tables (the trainer does).

use crate::backend::LibraryCounts;
use cannery_codec::constants::PAGE_SIZE;
use cannery_codec::Table;

use cannery_export::isal::IsalTables;
use cannery_export::ExportError;

mod ffi {
    extern "C" {
        pub fn cannery_isal_histogram(input: *const u8, len: i32, ll: *mut u64, d: *mut u64);
        pub fn cannery_isal_hufftables_size() -> usize;
        pub fn cannery_isal_create(tables: *mut u64, ll: *const u64, d: *const u64) -> i32;
        #[allow(clippy::too_many_arguments)]
        pub fn cannery_isal_fill(
            tables: *mut u64,
            hdr: *const u8,
            hdr_len: u32,
            count: u32,
            extra_bits: u32,
            dist_table: *const u32,
            len_table: *const u32,
            lit_table: *const u16,
            lit_sizes: *const u8,
            dcodes: *const u16,
            dcodes_sizes: *const u8,
        );
        pub fn cannery_isal_header_bits(tables: *const u64) -> u32;
        pub fn cannery_isal_compress(
            tables: *const u64,
            input: *const u8,
            len: u32,
            out: *mut u8,
            cap: u32,
        ) -> std::ffi::c_long;
    }
}

/// The symbols ISA-L's histogram parse finds in `page`, alone (history =
/// the page), with its one end-of-block.
pub fn update_histogram(page: &[u8]) -> LibraryCounts {
    let mut c = LibraryCounts::zero();
    let len = i32::try_from(page.len()).expect("a page is far below 2 GiB");
    // SAFETY: `page` is readable for `len` bytes; `c.litlen` and `c.dist`
    // hold the 286 and 30 u64 the shim writes (ISA_DEF_LIT_LEN_SYMBOLS,
    // ISAL_DEF_DIST_SYMBOLS).
    unsafe {
        ffi::cannery_isal_histogram(
            page.as_ptr(),
            len,
            c.litlen.as_mut_ptr(),
            c.dist.as_mut_ptr(),
        )
    };
    c
}

/// The symbols (and end-of-block) ISA-L's level-0 compressor emits for
/// `page`, given `reference` (any table: the parse does not depend on it;
/// [`Hufftables::exported`] of the fixed code is cheapest to make once).
pub fn compressor_counts(
    reference: &Hufftables,
    page: &[u8],
) -> Result<LibraryCounts, ExportError> {
    let s = reference.compress(page)?;
    let blocks = cannery_codec::decode::inflate_blocks(&s, PAGE_SIZE)
        .map_err(|e| ExportError::Library(format!("cannot decode ISA-L's stream: {e}")))?;
    let tokens: Vec<_> = blocks.into_iter().flat_map(|b| b.tokens).collect();
    Ok(LibraryCounts::of_tokens(&tokens))
}

/// A `struct isal_hufftables` in memory we own (8-byte aligned).
pub struct Hufftables {
    mem: Vec<u64>,
}

impl std::fmt::Debug for Hufftables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Hufftables({} header bits)", self.header_bits())
    }
}

impl Hufftables {
    fn zeroed() -> Hufftables {
        // SAFETY: no arguments; returns sizeof(struct isal_hufftables).
        let size = unsafe { ffi::cannery_isal_hufftables_size() };
        Hufftables {
            mem: vec![0u64; size.div_ceil(8)],
        }
    }

    /// ISA-L's own table for `counts` (what `generate_custom_hufftables`
    /// would make of the same histogram).
    pub fn trained(counts: &LibraryCounts) -> Result<Hufftables, ExportError> {
        let mut t = Hufftables::zeroed();
        // SAFETY: `t.mem` is a zeroed, aligned isal_hufftables; the count
        // arrays hold 286 and 30 u64 as the shim reads.
        let r = unsafe {
            ffi::cannery_isal_create(
                t.mem.as_mut_ptr(),
                counts.litlen.as_ptr(),
                counts.dist.as_ptr(),
            )
        };
        if r != 0 {
            return Err(ExportError::Library(format!(
                "isal_create_hufftables failed with {r}"
            )));
        }
        Ok(t)
    }

    /// `table` as the exported C initializer defines it, or why stock
    /// ISA-L cannot use it.
    pub fn exported(table: &Table) -> Result<Hufftables, ExportError> {
        let f = IsalTables::new(table)?;
        let mut t = Hufftables::zeroed();
        // SAFETY: `t.mem` is an aligned isal_hufftables; every array has the
        // length the shim copies (its _Static_asserts pin ISA-L's sizes:
        // header ≤ 328 bytes, checked by IsalTables::new).
        unsafe {
            ffi::cannery_isal_fill(
                t.mem.as_mut_ptr(),
                f.deflate_hdr.as_ptr(),
                f.deflate_hdr.len() as u32,
                f.deflate_hdr_count,
                f.deflate_hdr_extra_bits,
                f.dist_table.as_ptr(),
                f.len_table.as_ptr(),
                f.lit_table.as_ptr(),
                f.lit_table_sizes.as_ptr(),
                f.dcodes.as_ptr(),
                f.dcodes_sizes.as_ptr(),
            )
        };
        Ok(t)
    }

    /// Bits of the block header ISA-L writes before each body.
    pub fn header_bits(&self) -> u32 {
        // SAFETY: `mem` is an initialised isal_hufftables.
        unsafe { ffi::cannery_isal_header_bits(self.mem.as_ptr()) }
    }

    /// `page` as one raw deflate stream at level 0 with this table.
    pub fn compress(&self, page: &[u8]) -> Result<Vec<u8>, ExportError> {
        let cap = 2 * PAGE_SIZE.max(page.len()) + 1024;
        let mut out = vec![0u8; cap];
        // SAFETY: `mem` is an initialised isal_hufftables; `page` is
        // readable and `out` writable for the lengths passed.
        let n = unsafe {
            ffi::cannery_isal_compress(
                self.mem.as_ptr(),
                page.as_ptr(),
                page.len() as u32,
                out.as_mut_ptr(),
                cap as u32,
            )
        };
        if n < 0 {
            return Err(ExportError::Library(format!(
                "isal_deflate_stateless could not fit {} bytes in {cap}",
                page.len()
            )));
        }
        out.truncate(n as usize);
        Ok(out)
    }

    /// Bits of `page`'s compressed body (the stream less this table's
    /// header; a canned use stores no header), padding to a byte included.
    pub fn compressed_bits(&self, page: &[u8]) -> Result<u64, ExportError> {
        let n = self.compress(page)?.len() as u64;
        Ok((n * 8).saturating_sub(self.header_bits() as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cannery_codec::decode::inflate;

    use crate::backend::stress::words_page as page;

    #[test]
    fn histograms_count_one_parse_and_one_end_of_block() {
        let c = update_histogram(&page());
        assert_eq!(c.litlen[256], 1);
        let lengths: u64 = c.litlen[257..].iter().sum();
        assert_eq!(lengths, c.dist.iter().sum::<u64>());
        assert!(lengths > 0);
    }

    #[test]
    fn trained_and_exported_tables_compress_to_the_page() {
        let c = update_histogram(&page());
        let own = Hufftables::trained(&c).unwrap();
        for t in [own, Hufftables::exported(&Table::fixed()).unwrap()] {
            let s = t.compress(&page()).unwrap();
            let mut back = vec![0u8; PAGE_SIZE];
            let n = inflate(&s, &mut back).unwrap();
            assert_eq!(&back[..n], &page()[..]);
            let bits = t.compressed_bits(&page()).unwrap();
            assert_eq!(bits, 8 * s.len() as u64 - t.header_bits() as u64);
        }
    }
}
